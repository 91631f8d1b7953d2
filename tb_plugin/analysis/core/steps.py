"""Steps: `ProfilerStep#N` ranges on the host, stretched to the GPU work they launched.

Rules of the old plugin, kept because users know them: a step ends when the last GPU
activity launched from inside it ends; it starts no earlier than the previous step's end;
trailing steps that launched no GPU work are dropped, and so is a last step that launched
fewer than 0.8x the GPU activities of the one before (a step the profiler stopped in).
Unlike the old plugin, the GPU copy of a step (`gpu_user_annotation`) is never a step.
When profiling starts while the GPU still runs the previous iteration, that backlog (device
work with no launch call in the trace and correlation ids before every launch call's,
ending before step 0's first kernel) ends before step 0 starts.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from ...model.categories import GPU_ACTIVITY_KINDS, Kind
from ...model.rank_batch import RankBatch, bounds_of, one_rank, rank_of
from ...model.trace_model import TraceModel
from .common import (
    complete_rows,
    ends,
    gpu_rows,
    launch_rows,
    launches_of,
    read_only,
    rows_named,
)
from .rules import STEP_NAME, is_step_name


class Steps(msgspec.Struct):
    names: list[str]
    numbers: list[int | None]
    starts: np.ndarray
    ends: np.ndarray
    source: str  # "profiler_steps" or "whole_trace"
    gpu_counts: np.ndarray
    dropped: list[dict[str, object]] = msgspec.field(default_factory=list)

    def __len__(self) -> int:
        return len(self.names)

    @property
    def window(self) -> tuple[float, float]:
        if not len(self):
            return (0.0, 0.0)
        return float(self.starts[0]), float(self.ends[-1])


def host_step_rows(model: TraceModel) -> np.ndarray:
    """The ProfilerStep ranges, one per step number, by start (read-only), kept with the
    model: the steps, the critical path's cuts, anchors and thread links each ask."""
    return model.derived("_host_step_rows", lambda m: read_only(_host_step_rows(m, one_rank(m))))


def keep_steps(model: TraceModel, steps: Steps, step_rows: np.ndarray) -> None:
    """Keeps `steps` and their ProfilerStep rows as the model's: found for a batch of
    ranks and split back (`rank_batches.share_tables`), the same."""
    model.derived("_host_step_rows", lambda _: read_only(step_rows))
    model.derived("_steps", lambda _: steps)


def batch_step_rows(batch: RankBatch) -> np.ndarray:
    """Each rank's ProfilerStep rows (one per rank and step number), rank after rank;
    kept with the batch's model."""
    return _rank_step_rows(batch.model, batch.first_rows)


def _rank_step_rows(model: TraceModel, first_rows: np.ndarray) -> np.ndarray:
    return model.derived("_rank_step_rows", lambda m: read_only(_host_step_rows(m, first_rows)))


def _host_step_rows(model: TraceModel, first_rows: np.ndarray) -> np.ndarray:
    """The ProfilerStep ranges, one per (rank, step number), by rank, then start."""
    ev = model.events
    rows = rows_named(model, complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION), is_step_name)
    if rows.size == 0:
        return rows
    # One row per step number: a trace may carry a step twice (e.g. nested copies).
    numbers = _step_numbers(model, rows)
    rank = rank_of(rows, first_rows)
    order = np.lexsort((ev["ts"][rows], numbers, rank))
    rows, numbers, rank = rows[order], numbers[order], rank[order]
    first = np.concatenate([[True], (numbers[1:] != numbers[:-1]) | (rank[1:] != rank[:-1])])
    rows, rank = rows[first], rank[first]
    return rows[np.lexsort((ev["ts"][rows], rank))]


def _step_numbers(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """The step number of each ProfilerStep row, read once per name (a batch's ranks
    share them)."""
    codes = model.events["name"][rows].tolist()
    number_of = {
        code: int(STEP_NAME.match(model.names[code]).group(1))  # type: ignore[union-attr]
        for code in set(codes)
    }
    return np.array([number_of[c] for c in codes], dtype=np.int64)


def find_steps(model: TraceModel) -> Steps:
    """The steps, kept with the model: the Overview and the GPU-idle section both read them."""
    return model.derived("_steps", lambda m: _steps_of_ranks(m, one_rank(m))[0])


def batch_steps(batch: RankBatch) -> list[Steps]:
    """Each rank's steps, found in one pass over the batch's rows (kept with the batch's
    model): the same as `find_steps` of each rank's own model (the ranks' ProfilerStep#N
    kept apart)."""
    first_rows = batch.first_rows
    return batch.model.derived("_rank_steps", lambda m: _steps_of_ranks(m, first_rows))


def _steps_of_ranks(model: TraceModel, first_rows: np.ndarray) -> list[Steps]:
    """The steps of each rank of `model` (rank k: rows from `first_rows[k]`)."""
    ev = model.events
    ranks = first_rows.size - 1
    rows = host_step_rows(model) if ranks == 1 else _rank_step_rows(model, first_rows)
    bounds = bounds_of(rows, first_rows)
    names = model.names_of(rows)
    numbers = _step_numbers(model, rows).tolist()
    starts = ev["ts"][rows].astype(np.float64)
    step_ends = ends(model, rows).astype(np.float64)
    found = []
    for k in range(ranks):
        lo, hi = bounds[k]
        if lo == hi:
            found.append(_whole_trace(model, int(first_rows[k]), int(first_rows[k + 1])))
            continue
        found.append(
            Steps(
                names[lo:hi],
                list(numbers[lo:hi]),
                starts[lo:hi],
                step_ends[lo:hi],
                "profiler_steps",
                np.zeros(hi - lo, dtype=np.int64),
            )
        )
    return _extend_to_device(model, first_rows, found)


def _whole_trace(model: TraceModel, lo: int, hi: int) -> Steps:
    """A rank with no ProfilerStep (rows [lo, hi)): one step, its host work's span (else
    its Python, runtime and driver calls', else its GPU work's)."""
    ev = model.events
    for kinds in (
        (Kind.CPU_OP, Kind.USER_ANNOTATION),
        (Kind.PYTHON, Kind.RUNTIME, Kind.DRIVER),
        GPU_ACTIVITY_KINDS,
    ):  # each set found only where the one before it has no row of the rank
        rows = complete_rows(model, *kinds)
        own = rows[np.searchsorted(rows, lo) : np.searchsorted(rows, hi)]
        if own.size:
            return Steps(
                ["Whole trace"],
                [None],
                np.array([float(ev["ts"][own].min())]),
                np.array([float(ends(model, own).max())]),
                "whole_trace",
                np.zeros(1, dtype=np.int64),
            )
    return Steps([], [], np.empty(0), np.empty(0), "none", np.empty(0, dtype=np.int64))


class _DeviceReach(msgspec.Struct):
    """Per step (all ranks' steps in order), the first start and last end of the GPU work
    launched inside it and how much; per rank, the end of the device work before its
    first step's (-inf: none) and whether any of its work was launched inside a step."""

    first: np.ndarray
    last: np.ndarray
    counts: np.ndarray
    before: np.ndarray
    any_inside: np.ndarray


def _extend_to_device(model: TraceModel, first_rows: np.ndarray, found: list[Steps]) -> list[Steps]:
    first_step = np.cumsum([0] + [len(steps) for steps in found])
    reach = _device_reach(model, first_rows, found, first_step)
    for k, steps in enumerate(found):
        lo, hi = int(first_step[k]), int(first_step[k + 1])
        steps.gpu_counts = reach.counts[lo:hi]
        if reach.any_inside[k]:
            _stretch(steps, reach.first[lo:hi], reach.last[lo:hi], float(reach.before[k]))
    return found


def _device_reach(
    model: TraceModel, first_rows: np.ndarray, found: list[Steps], first_step: np.ndarray
) -> _DeviceReach:
    """Which GPU work each step launched (a launch inside the step's host range), all
    ranks at once."""
    ev = model.events
    ranks, n = len(found), int(first_step[-1])
    starts = np.concatenate([steps.starts for steps in found]) if n else np.empty(0)
    host_ends = np.concatenate([steps.ends for steps in found]) if n else np.empty(0)
    all_gpu = gpu_rows(model)
    launcher = launches_of(model, all_gpu)
    linked = launcher >= 0
    gpu, launcher = all_gpu[linked], launcher[linked]
    reach = _DeviceReach(
        np.full(n, np.inf), np.full(n, -np.inf), np.zeros(n, dtype=np.int64),
        np.full(ranks, -np.inf), np.zeros(ranks, dtype=bool),
    )  # fmt: skip
    if gpu.size == 0 or n == 0:
        return reach
    l_start = ev["ts"][launcher]
    l_end = l_start + ev["dur"][launcher]
    launch_rank = rank_of(launcher, first_rows)
    step = _step_at(starts, first_step, l_start, launch_rank)
    inside = (step >= 0) & (l_end <= host_ends[np.maximum(step, 0)])
    s = step[inside]
    g_start = ev["ts"][gpu[inside]]
    np.minimum.at(reach.first, s, g_start)
    np.maximum.at(reach.last, s, g_start + ev["dur"][gpu[inside]])
    np.add.at(reach.counts, s, 1)
    reach.any_inside[launch_rank[inside]] = True
    # The device work of no step before each rank's first step: launched outside every
    # step, or the backlog of the iteration before profiling began.
    other = np.concatenate([gpu[~inside], _backlog(model, all_gpu[~linked], first_rows)])
    other_rank = rank_of(other, first_rows)
    has_steps = first_step[1:] > first_step[:-1]
    first_of = np.where(has_steps, reach.first[np.minimum(first_step[:-1], n - 1)], np.inf)
    threshold = first_of[other_rank]
    unmatched_end = ev["ts"][other] + ev["dur"][other]
    earlier = np.isfinite(threshold) & (unmatched_end <= threshold)
    np.maximum.at(reach.before, other_rank[earlier], unmatched_end[earlier])
    return reach


def _step_at(
    starts: np.ndarray, first_step: np.ndarray, times: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    """Per time, the last step of its rank starting at or before it (an index into all
    ranks' steps; -1: none). `starts`: each rank's steps by start, rank after rank."""
    if first_step.size == 2:  # one rank: a search (a big trace's launches by the million)
        return np.searchsorted(starts, times, side="right") - 1
    n = starts.size
    step_rank = np.repeat(np.arange(first_step.size - 1), np.diff(first_step))
    is_time = np.concatenate([np.zeros(n, dtype=bool), np.ones(times.size, dtype=bool)])
    # By rank, then time, a step before a time at the same instant (a search's "right").
    order = np.lexsort(
        (is_time, np.concatenate([starts, times]), np.concatenate([step_rank, rank]))
    )
    steps_so_far = np.cumsum(~is_time[order])
    at = np.empty(times.size, dtype=np.int64)
    timed = is_time[order]
    at[order[timed] - n] = steps_so_far[timed] - 1
    at[at < first_step[rank]] = -1  # the last step so far is another rank's
    return at


def _stretch(steps: Steps, first: np.ndarray, last: np.ndarray, before: float) -> None:
    """A rank's steps stretched to their GPU work (`first`, `last`: per step, its work's
    first start and last end), each starting no earlier than the one before it ends; the
    first no earlier than the device work before it (`before`)."""
    prev_end = float(steps.starts[0])
    if np.isfinite(first[0]) and before > -np.inf:  # step 0 starts after it
        prev_end = max(prev_end, before)
    # Step after step, as Python floats (numpy scalars cost ~1 us an operation).
    start_of, end_of, device_end = steps.starts.tolist(), steps.ends.tolist(), last.tolist()
    for i in range(len(steps)):
        start = max(prev_end, start_of[i])
        end = end_of[i]
        end = max(end, start) if not math.isfinite(device_end[i]) else max(end, device_end[i])
        start_of[i], end_of[i] = start, max(end, start)
        prev_end = end_of[i]
    steps.starts = np.array(start_of, dtype=np.float64)
    steps.ends = np.array(end_of, dtype=np.float64)
    if len(steps) > 1:
        _drop_incomplete_tail(steps, steps.gpu_counts)


def _backlog(model: TraceModel, unlinked: np.ndarray, first_rows: np.ndarray) -> np.ndarray:
    """Device work with no launch call whose correlation id comes before every launch
    call's of its rank: the backlog of the iteration before profiling began. Work whose
    launch call is missing for another reason (a thread not recorded) has ids among them:
    not a backlog. With the work launched in the trace before step 0, it is the device
    work of no step."""
    launches = launch_rows(model)
    launch_corr = model.column_at("correlation", launches)
    with_id = launch_corr >= 0
    if first_rows.size == 2:  # one rank (`minimum.at` is slow over millions of launches)
        first_launch = np.array([launch_corr[with_id].min() if with_id.any() else np.inf])
    else:
        first_launch = np.full(first_rows.size - 1, np.inf)
        np.minimum.at(first_launch, rank_of(launches[with_id], first_rows), launch_corr[with_id])
    corr = model.column_at("correlation", unlinked)
    return unlinked[(corr >= 0) & (corr < first_launch[rank_of(unlinked, first_rows)])]


def _drop_incomplete_tail(steps: Steps, counts: np.ndarray) -> None:
    """Drop the last steps when they launched no GPU work, and the last one with GPU work
    when it launched much less than the step before (the profiler stopped inside it)."""
    n = len(steps)
    with_gpu = np.flatnonzero(counts > 0)
    last = int(with_gpu[-1])
    keep = last + 1
    reason = "launched no GPU work (the profiler stopped before its kernels ran)"
    if last > 0 and counts[last - 1] * 0.8 > counts[last]:
        keep = last
        reason = (
            f"launched {counts[last]} GPU activities, fewer than 0.8x the "
            f"{counts[last - 1]} of the step before (an incomplete step)"
        )
    if keep < n:
        steps.dropped = [
            {"name": steps.names[i], "reason": reason if i == last else "launched no GPU work"}
            for i in range(keep, n)
        ]
        steps.names = steps.names[:keep]
        steps.numbers = steps.numbers[:keep]
        steps.starts, steps.ends = steps.starts[:keep], steps.ends[:keep]
        steps.gpu_counts = counts[:keep]
