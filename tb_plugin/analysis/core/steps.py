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

from ...model.categories import Kind
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
    return model.derived("_host_step_rows", lambda m: read_only(_host_step_rows(m)))


def _host_step_rows(model: TraceModel) -> np.ndarray:
    ev = model.events
    rows = rows_named(model, complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION), is_step_name)
    if rows.size == 0:
        return rows
    # One row per step number: a trace may carry a step twice (e.g. nested copies).
    numbers = np.array(
        [
            int(STEP_NAME.match(n).group(1))  # type: ignore[union-attr]
            for n in model.names_of(rows)
        ]
    )
    order = np.lexsort((ev["ts"][rows], numbers))
    rows, numbers = rows[order], numbers[order]
    first = np.concatenate([[True], numbers[1:] != numbers[:-1]])
    rows = rows[first]
    return rows[np.argsort(ev["ts"][rows], kind="stable")]


def find_steps(model: TraceModel) -> Steps:
    """The steps, kept with the model: the Overview and the GPU-idle section both read them."""
    return model.derived("_steps", _find_steps)


def _find_steps(model: TraceModel) -> Steps:
    ev = model.events
    rows = host_step_rows(model)
    if rows.size:
        names = model.names_of(rows)
        numbers: list[int | None] = [
            int(STEP_NAME.match(n).group(1))  # type: ignore[union-attr]
            for n in names
        ]
        starts = ev["ts"][rows].astype(np.float64)
        step_ends = ends(model, rows).astype(np.float64)
        source = "profiler_steps"
    else:
        host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
        if host.size == 0:
            host = complete_rows(model, Kind.PYTHON, Kind.RUNTIME, Kind.DRIVER)
        if host.size == 0:
            host = gpu_rows(model)
        if host.size == 0:
            return Steps([], [], np.empty(0), np.empty(0), "none", np.empty(0, dtype=np.int64))
        names, numbers = ["Whole trace"], [None]
        starts = np.array([float(ev["ts"][host].min())])
        step_ends = np.array([float(ends(model, host).max())])
        source = "whole_trace"
    return _extend_to_device(
        model,
        Steps(names, numbers, starts, step_ends, source, np.zeros(len(names), dtype=np.int64)),
    )


def _extend_to_device(model: TraceModel, steps: Steps) -> Steps:
    ev = model.events
    all_gpu = gpu_rows(model)
    launches = launch_rows(model)
    launcher = launches_of(model, all_gpu)
    linked = launcher >= 0
    gpu, launcher = all_gpu[linked], launcher[linked]
    n = len(steps)
    dev_min = np.full(n, np.inf)
    dev_max = np.full(n, -np.inf)
    counts = np.zeros(n, dtype=np.int64)
    matched = np.zeros(gpu.shape, dtype=bool)
    if gpu.size:
        l_start = ev["ts"][launcher]
        l_end = l_start + ev["dur"][launcher]
        step = np.searchsorted(steps.starts, l_start, side="right") - 1
        inside = (step >= 0) & (l_end <= steps.ends[np.maximum(step, 0)])
        matched = inside
        s = step[inside]
        g_start = ev["ts"][gpu[inside]]
        g_end = g_start + ev["dur"][gpu[inside]]
        np.minimum.at(dev_min, s, g_start)
        np.maximum.at(dev_max, s, g_end)
        np.add.at(counts, s, 1)
    steps.gpu_counts = counts
    if not matched.any():
        return steps
    prev_end = float(steps.starts[0])
    if np.isfinite(dev_min[0]):  # step 0 starts after the device work of no step before it
        other = np.concatenate([gpu[~matched], _backlog(model, all_gpu[~linked], launches)])
        unmatched_end = ev["ts"][other] + ev["dur"][other]
        earlier = unmatched_end[unmatched_end <= dev_min[0]]
        if earlier.size:
            prev_end = max(prev_end, float(earlier.max()))
    # Step after step, as Python floats (numpy scalars cost ~1 us an operation).
    start_of, end_of, device_end = steps.starts.tolist(), steps.ends.tolist(), dev_max.tolist()
    for i in range(n):
        start = max(prev_end, start_of[i])
        end = end_of[i]
        end = max(end, start) if not math.isfinite(device_end[i]) else max(end, device_end[i])
        start_of[i], end_of[i] = start, max(end, start)
        prev_end = end_of[i]
    steps.starts = np.array(start_of, dtype=np.float64)
    steps.ends = np.array(end_of, dtype=np.float64)
    if n > 1:
        _drop_incomplete_tail(steps, counts)
    return steps


def _backlog(model: TraceModel, unlinked: np.ndarray, launches: np.ndarray) -> np.ndarray:
    """Device work with no launch call whose correlation id comes before every launch
    call's: the backlog of the iteration before profiling began. Work whose launch call is
    missing for another reason (a thread not recorded) has ids among them: not a backlog.
    With the work launched in the trace before step 0, it is the device work of no step."""
    corr = model.column_at("correlation", unlinked)
    launch_corr = model.column_at("correlation", launches)
    first_launch = float(launch_corr[launch_corr >= 0].min())
    return unlinked[(corr >= 0) & (corr < first_launch)]


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
