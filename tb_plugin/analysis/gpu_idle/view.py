"""The `gpu_idle` view: why the GPU is idle (per device and stream, inside steps), how long
launches take to reach the GPU, and how long the streams' queues are.

Every duration is int64 nanoseconds (`*_ns`), never rounded to microseconds; times that
link into the trace view are the trace's microseconds (`*_us`, as the trace view's).
A trace whose GPU work cannot be tied to its launch calls (CPU-only, or no correlation
ids) is `available: false` with the reason, never a page of zeros.
"""

from __future__ import annotations

from typing import Literal, TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import distinct, lexsort_head
from ..core.devices import device_identities, device_identity, device_word
from ..core.intervals import IntervalUnion
from ..core.launch_delay import (
    LaunchDelayRow,
    LaunchOutlier,
    delay_outliers,
    delay_rows,
    delay_sample,
)
from ..core.launches import GpuWork, gpu_work, sync_intervals, to_ns, to_us
from ..core.queued_times import QueuedTimes, queued_times
from ..core.requests import NoParams
from ..core.steps import find_steps
from .idle import (
    CAUSES,
    CLASSES,
    KERNEL_WAIT_THRESHOLD_NS,
    Gaps,
    LaneActivities,
    busy_totals,
    class_totals,
    lane_gaps,
)
from .queue import QueueSeries, queue_series

TOP_INTERVALS_PER_CLASS = 10
DELAY_ROWS = 100
DELAY_OUTLIERS = 20


class IdleBreakdown(TypedDict):
    step_ns: int
    busy_ns: int
    idle_ns: int
    host_wait_ns: int
    kernel_wait_ns: int
    other_ns: int
    idle_share: float | None  # of step time; None for a zero-length window
    host_wait_share: float | None
    kernel_wait_share: float | None
    other_share: float | None


class QueueStats(TypedDict):
    max_length: int
    time_at_max_ns: int
    empty_ns: int


class StreamIdle(TypedDict):
    stream: int | None
    total: IdleBreakdown
    per_step: list[IdleBreakdown]
    queue: QueueStats


class DeviceIdle(TypedDict):
    device: int
    label: str
    short_label: str  # "GPU 0", "XPU 0", "accelerator 2" (analysis/core/devices.py)
    total: IdleBreakdown
    per_step: list[IdleBreakdown]
    streams: list[StreamIdle]


class StepSpan(TypedDict):
    name: str
    start_us: float
    end_us: float
    duration_ns: int


class IdleInterval(TypedDict):
    device: int
    stream: int | None  # the stream of the activity that ended the gap
    step: int  # index into `steps`
    idle_class: str  # host_wait, kernel_wait or other
    cause: str
    start_us: float
    end_us: float
    duration_ns: int
    next_name: str | None


class LaunchDelayView(TypedDict):
    activities: int
    linked: int
    graph_kernels_after_first: int
    names: int
    rows: list[LaunchDelayRow]
    outliers: list[LaunchOutlier]


class GpuIdleView(TypedDict):
    available: bool
    reason: str | None
    device_word: str  # what the devices are called: "GPU", "MTIA", "XPU", "accelerator"
    kernel_wait_threshold_ns: int
    steps: list[StepSpan]
    devices: list[DeviceIdle]
    top_intervals: list[IdleInterval]
    launch_delay: LaunchDelayView | None
    # How the GPU activities' `queued` read (`core/queued_times`): "recorded" tells a late
    # launch by when the work entered its queue
    queued_times: QueuedTimes


def has_gpu_work(model: TraceModel) -> bool:
    return bool(gpu_work(model).rows.size)


def _unavailable(model: TraceModel, reason: str) -> GpuIdleView:
    return {
        "available": False,
        "reason": reason,
        # No device at all: the word the page falls back on, as the reason's.
        "device_word": device_word(model) if device_identities(model) else "GPU",
        "kernel_wait_threshold_ns": KERNEL_WAIT_THRESHOLD_NS,
        "steps": [],
        "devices": [],
        "top_intervals": [],
        "launch_delay": None,
        "queued_times": "not recorded",
    }


def gpu_idle(model: TraceModel) -> GpuIdleView:
    work = gpu_work(model)
    if work.rows.size == 0:
        return _unavailable(model, "the trace has no GPU activity (kernels, copies or fills)")
    if not work.linked.any():
        return _unavailable(
            model,
            "no GPU activity is linked to the host call that launched it (the trace has "
            "no correlation ids): launch times are unknown",
        )
    steps = find_steps(model)
    if not len(steps):
        return _unavailable(model, "the trace has no steps and no host events to bound them")
    step_lo = to_ns(steps.starts, work.origin_us)
    step_hi = to_ns(steps.ends, work.origin_us)
    sync_start, sync_end = sync_intervals(model, work.origin_us)
    context = _Context(model, work, step_lo, step_hi, IntervalUnion(sync_start, sync_end))
    devices = [context.device(int(d)) for d in distinct(work.device).tolist()]
    return {
        "available": True,
        "reason": None,
        "device_word": device_word(model),
        "kernel_wait_threshold_ns": KERNEL_WAIT_THRESHOLD_NS,
        "steps": [
            {
                "name": name,
                "start_us": float(steps.starts[i]),
                "end_us": float(steps.ends[i]),
                "duration_ns": int(step_hi[i] - step_lo[i]),
            }
            for i, name in enumerate(steps.names)
        ],
        "devices": [d for d, _ in devices],
        "top_intervals": _top_intervals(context, [g for _, g in devices]),
        "launch_delay": _launch_delay(model, work),
        "queued_times": context.queued_times,
    }


def gpu_idle_view(model: TraceModel, params: NoParams) -> GpuIdleView:
    """The route's compute function (no parameters)."""
    return gpu_idle(model)


class _Context:
    """What every lane of one trace shares: the work, the steps in ns, the sync calls."""

    def __init__(
        self,
        model: TraceModel,
        work: GpuWork,
        step_lo: np.ndarray,
        step_hi: np.ndarray,
        sync: IntervalUnion,
    ) -> None:
        self.model, self.work, self.sync = model, work, sync
        self.step_lo, self.step_hi = step_lo, step_hi
        self.window = (int(step_lo.min()), int(step_hi.max()))
        self.queues = {(q.device, q.stream): q for q in queue_series(work)}
        found = queued_times(model, work.rows, work.launch, work.origin_us)
        self.queued_times = found.state
        self.queued = np.where(np.isfinite(found.at), found.at, -1).astype(np.int64)

    def lane(self, mine: np.ndarray) -> LaneActivities:
        w = self.work
        at = np.flatnonzero(mine)
        return LaneActivities(
            w.start[at], w.end[at], w.launch_start[at], w.linked[at], at, self.queued[at]
        )

    def breakdowns(self, lane: LaneActivities) -> tuple[Gaps, list[IdleBreakdown]]:
        gaps = lane_gaps(lane, self.window, self.sync)
        per_class = class_totals(gaps, self.step_lo, self.step_hi)
        busy = busy_totals(lane, self.step_lo, self.step_hi)
        span = self.step_hi - self.step_lo
        return gaps, [
            _breakdown(int(span[i]), int(busy[i]), per_class[i]) for i in range(span.size)
        ]

    def device(self, device: int) -> tuple[DeviceIdle, Gaps]:
        w = self.work
        on_device = w.device == device
        gaps, per_step = self.breakdowns(self.lane(on_device))
        streams: list[StreamIdle] = []
        device_streams = distinct(w.stream[on_device])
        for stream in device_streams.tolist():
            if device_streams.size == 1:  # the device's one stream: its lane is the device's
                stream_steps = [numbers.copy() for numbers in per_step]
            else:
                _, stream_steps = self.breakdowns(self.lane(on_device & (w.stream == stream)))
            queue = self.queues[(device, int(stream))]
            streams.append(
                {
                    "stream": int(stream) if stream >= 0 else None,
                    "total": _sum(stream_steps),
                    "per_step": stream_steps,
                    "queue": _queue_stats(queue, self.step_lo, self.step_hi),
                }
            )
        view: DeviceIdle = {
            "device": device,
            "label": device_identity(self.model, device).label,
            "short_label": device_identity(self.model, device).short_label,
            "total": _sum(per_step),
            "per_step": per_step,
            "streams": streams,
        }
        return view, gaps


_CLASS_KEYS: tuple[Literal["host_wait_ns", "kernel_wait_ns", "other_ns"], ...] = (
    "host_wait_ns",
    "kernel_wait_ns",
    "other_ns",
)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole > 0 else None


def _breakdown(step_ns: int, busy_ns: int, per_class: np.ndarray) -> IdleBreakdown:
    host, kernel, other = (int(x) for x in per_class)
    idle = host + kernel + other
    return {
        "step_ns": step_ns,
        "busy_ns": busy_ns,
        "idle_ns": idle,
        "host_wait_ns": host,
        "kernel_wait_ns": kernel,
        "other_ns": other,
        "idle_share": _share(idle, step_ns),
        "host_wait_share": _share(host, step_ns),
        "kernel_wait_share": _share(kernel, step_ns),
        "other_share": _share(other, step_ns),
    }


def _sum(per_step: list[IdleBreakdown]) -> IdleBreakdown:
    classes = [sum(s[key] for s in per_step) for key in _CLASS_KEYS]
    return _breakdown(
        sum(s["step_ns"] for s in per_step),
        sum(s["busy_ns"] for s in per_step),
        np.array(classes, dtype=np.int64),
    )


def _queue_stats(queue: QueueSeries, step_lo: np.ndarray, step_hi: np.ndarray) -> QueueStats:
    """Over the steps: the longest queue, and how long it was that long or empty."""
    parts = [queue.stats(int(lo), int(hi)) for lo, hi in zip(step_lo, step_hi)]
    longest = max(p["max_length"] for p in parts)
    return {
        "max_length": longest,
        "time_at_max_ns": sum(p["time_at_max_ns"] for p in parts if p["max_length"] == longest),
        "empty_ns": sum(p["empty_ns"] for p in parts),
    }


def _top_intervals(context: _Context, device_gaps: list[Gaps]) -> list[IdleInterval]:
    """The longest idle intervals of each class on each device (whole-GPU idle), inside
    steps, longest first: the Overview links them into the trace view."""
    w, model = context.work, context.model
    steps = IntervalUnion(context.step_lo, context.step_hi)
    found: list[tuple[int, IdleInterval]] = []
    for device, gaps in zip(distinct(w.device).tolist(), device_gaps):
        inside = np.rint(steps.covered(gaps.lo, gaps.hi)).astype(np.int64)
        for c in range(len(CLASSES)):
            mine = np.flatnonzero((gaps.cls == c) & (inside > 0))
            top = mine[lexsort_head((gaps.lo[mine], -inside[mine]), TOP_INTERVALS_PER_CLASS)]
            for g in top.tolist():
                nxt = int(gaps.next_activity[g])
                step = int(np.searchsorted(context.step_lo, gaps.lo[g], side="right")) - 1
                stream = int(w.stream[nxt]) if nxt >= 0 else -1
                found.append(
                    (
                        int(inside[g]),
                        {
                            "device": int(device),
                            "stream": stream if stream >= 0 else None,
                            "step": max(step, 0),
                            "idle_class": CLASSES[c],
                            "cause": CAUSES[int(gaps.cause[g])],
                            "start_us": float(to_us(gaps.lo[g], w.origin_us)),
                            "end_us": float(to_us(gaps.hi[g], w.origin_us)),
                            "duration_ns": int(inside[g]),
                            "next_name": model.names[int(model.events["name"][w.rows[nxt]])]
                            if nxt >= 0
                            else None,
                        },
                    )
                )
    # Longest first, then earliest; equal ones by device, class and next activity's name.
    found.sort(
        key=lambda item: (
            -item[0],
            item[1]["start_us"],
            item[1]["device"],
            item[1]["idle_class"],
            item[1]["next_name"] or "",
        )
    )
    return [interval for _, interval in found]


def _launch_delay(model: TraceModel, work: GpuWork) -> LaunchDelayView:
    rows, names = delay_rows(model, work, DELAY_ROWS)
    sampled = delay_sample(work)
    return {
        "activities": int(work.rows.size),
        "linked": int(work.linked.sum()),
        "graph_kernels_after_first": int((work.linked & work.graph & ~work.first_of_launch).sum()),
        "names": names,
        "rows": rows,
        "outliers": delay_outliers(model, work, DELAY_OUTLIERS) if sampled.size else [],
    }
