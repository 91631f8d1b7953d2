"""Idle intervals of one lane (a device, or one stream of it), classified.

A lane is busy while any of its GPU activities (kernels, copies, fills) runs: their union.
Each gap of the union, from the window's start or the end of the work before it to the
start of the activity after it, is one idle interval, classified by that next activity:

- `other` (cause `blocking_sync`) when the host sat in a blocking sync call
  (`cudaDeviceSynchronize`, `hipEventSynchronize`, ..., or the profiler's `cuda_sync`
  events) at some time inside the gap: the host was waiting on the GPU, not late;
- `host_wait` when the next activity's launch call started after the gap began: the CPU
  had not launched it yet (where the trace records when each launch entered its stream's
  queue, CUPTI's `queued` on the file's clock: when it entered the queue after the gap
  began, a launch call that began before but took long included);
- `kernel_wait` when it was launched before and the gap is shorter than the threshold:
  back-to-back launch overhead of work already queued;
- `other` otherwise: work queued but held longer (an event or another stream it waits
  for), an activity with no launch call in the trace, or no activity after the gap.

The threshold is 30 µs. HTA's `consecutive_kernel_delay` is 30 in its time unit: 30 µs
when its frames held microseconds; its move to nanoseconds kept the number, and a 30 ns
gap between queued kernels almost never occurs, so its kernel wait is near empty. On the
corpus's V100, H100 and MI300X traces, work already queued starts 1-3 µs after the work
before it (p90 at most 5.5 µs, p99 at most 11 µs): a queued activity that waits 30 µs or
more waits for something besides the launch path.
"""

from __future__ import annotations

import msgspec
import numpy as np

from ..core.intervals import IntervalUnion

KERNEL_WAIT_THRESHOLD_NS = 30_000
CLASSES = ("host_wait", "kernel_wait", "other")
HOST_WAIT, KERNEL_WAIT, OTHER = 0, 1, 2
CAUSES = (
    "launched_late",  # host_wait
    "queued_short_gap",  # kernel_wait
    "blocking_sync",
    "queued_long_gap",
    "no_launch_call",
    "no_next_activity",
)
_CLASS_OF_CAUSE = np.array([HOST_WAIT, KERNEL_WAIT, OTHER, OTHER, OTHER, OTHER], dtype=np.int8)


class LaneActivities(msgspec.Struct, frozen=True):
    """The activities of one lane, sorted by start (int64 ns)."""

    start: np.ndarray
    end: np.ndarray
    launch_start: np.ndarray
    linked: np.ndarray  # bool
    index: np.ndarray  # position of each activity in `GpuWork` (for names and streams)
    queued: np.ndarray  # int64 ns it entered its stream's queue (`core/queued_times`), -1


class Gaps(msgspec.Struct, frozen=True):
    """A lane's idle intervals [lo, hi) in ns, with their class, cause, and the
    `GpuWork` position of the activity that ended each (-1: none)."""

    lo: np.ndarray
    hi: np.ndarray
    cls: np.ndarray  # int8, index into CLASSES
    cause: np.ndarray  # int8, index into CAUSES
    next_activity: np.ndarray


def lane_gaps(
    lane: LaneActivities,
    window: tuple[int, int],
    sync: IntervalUnion,
    threshold_ns: int = KERNEL_WAIT_THRESHOLD_NS,
) -> Gaps:
    """Every idle interval of the lane inside `window` (ns), classified (module note)."""
    lo_w, hi_w = window
    start, end = lane.start, lane.end
    if start.size == 0:
        whole = np.array([lo_w]), np.array([hi_w])
        cause = np.array([CAUSES.index("no_next_activity")], dtype=np.int8)
        keep = whole[1] > whole[0]
        return Gaps(
            whole[0][keep],
            whole[1][keep],
            _CLASS_OF_CAUSE[cause][keep],
            cause[keep],
            np.array([-1])[keep],
        )
    running = np.maximum.accumulate(end)
    opener = np.flatnonzero(np.concatenate([[True], start[1:] > running[:-1]]))
    prev_end = np.concatenate([[lo_w], np.maximum.reduceat(end, opener)])
    gap_lo = np.maximum(prev_end, lo_w)
    gap_hi = np.minimum(np.concatenate([start[opener], [hi_w]]), hi_w)
    nxt = np.concatenate([opener, [-1]])
    keep = gap_hi > gap_lo
    gap_lo, gap_hi, nxt, prev_end = gap_lo[keep], gap_hi[keep], nxt[keep], prev_end[keep]
    has_next = nxt >= 0
    at = np.maximum(nxt, 0)
    linked = has_next & lane.linked[at]
    queued = np.where(has_next, lane.queued[at], -1)
    # Entered its queue after the lane went idle, where the trace says when; else its
    # launch call began after.
    late = linked & np.where(queued >= 0, queued > prev_end, lane.launch_start[at] > prev_end)
    cause = np.full(gap_lo.size, CAUSES.index("queued_long_gap"), dtype=np.int8)
    cause[linked & ~late & (gap_hi - gap_lo < threshold_ns)] = CAUSES.index("queued_short_gap")
    cause[late] = CAUSES.index("launched_late")
    cause[has_next & ~linked] = CAUSES.index("no_launch_call")
    cause[~has_next] = CAUSES.index("no_next_activity")
    if len(sync):
        blocked = sync.covered(gap_lo.astype(np.float64), gap_hi.astype(np.float64)) > 0
        cause[blocked] = CAUSES.index("blocking_sync")
    index = np.where(has_next, lane.index[at], -1)
    return Gaps(gap_lo, gap_hi, _CLASS_OF_CAUSE[cause], cause, index)


def class_totals(gaps: Gaps, step_lo: np.ndarray, step_hi: np.ndarray) -> np.ndarray:
    """ns of each class inside each step: shape (steps, classes), int64 (exact: the
    float64 sums hold whole nanoseconds below 2**53, about 104 days)."""
    out = np.zeros((step_lo.size, len(CLASSES)), dtype=np.int64)
    for c in range(len(CLASSES)):
        mine = gaps.cls == c
        if mine.any():
            union = IntervalUnion(gaps.lo[mine], gaps.hi[mine])
            out[:, c] = np.rint(union.covered(step_lo, step_hi)).astype(np.int64)
    return out


def busy_totals(lane: LaneActivities, step_lo: np.ndarray, step_hi: np.ndarray) -> np.ndarray:
    """ns each step the lane was busy (int64)."""
    union = IntervalUnion(lane.start, lane.end)
    return np.rint(union.covered(step_lo, step_hi)).astype(np.int64)
