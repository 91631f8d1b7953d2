"""Where each step of a trace starts and ends in its graph, and the steps' windows under a
timing, by the rules of `core/steps.py`: a step starts at its ProfilerStep range (no
earlier than the previous step's end) and ends at the later of the range's end and the end
of the last GPU activity launched inside it. Without steps, the whole trace is one step.

A step's start and end are tied to the host node at them (the first node of the step's
thread starting in it, the last ending in it) plus the recorded offset between."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import distinct, thread_keys
from ..core.host_ranges import snap_ns
from ..core.steps import find_steps, host_step_rows
from .build import RankGraph
from .graph import WAIT, end_event, start_event
from .retime import Timing


@dataclass
class StepAnchors:
    names: list[str]
    numbers: list[int | None]
    start_event: np.ndarray  # i8 per step (-1: the whole trace's first event)
    start_offset: np.ndarray  # f8: step start = event time - offset
    end_event: np.ndarray  # i8 per step (-1: the whole trace's last end)
    end_offset: np.ndarray  # f8: host end = event time + offset (< 0: inside a wait)
    first_shift: float  # step 0 starts this much after its range (a backlog before it)
    device_nodes: list[np.ndarray]  # per step, the GPU nodes launched inside it

    def __len__(self) -> int:
        return len(self.names)


_NO_NODES = np.zeros(0, np.int64)
_NO_NODES.flags.writeable = False


def no_device_nodes(steps: int) -> list[np.ndarray]:
    """`device_nodes` of `steps` steps whose GPU nodes a part does not hold (a summary's,
    a stub's): one empty array, read-only, shared (a 2,048-rank join makes ~40K)."""
    return [_NO_NODES] * steps


def step_anchors(model: TraceModel, rg: RankGraph) -> StepAnchors:
    steps = find_steps(model)
    empty = np.zeros(0, np.int64)
    if len(steps) == 0:
        return StepAnchors([], [], empty, np.zeros(0), empty, np.zeros(0), 0.0, [])
    if steps.source != "profiler_steps":
        # The whole trace, its bounds the Overview's (`core/steps.py`): the graph's first
        # start and last end moved by the recorded difference, so both say one step time.
        g = rg.graph
        first = float(g.start.min()) if len(g) else 0.0
        last = float(g.end.max()) if len(g) else 0.0
        return StepAnchors(
            steps.names,
            steps.numbers,
            np.array([-1]),
            np.array([first - float(steps.starts[0])]),
            np.array([-1]),
            np.array([float(steps.ends[0]) - last]),
            0.0,
            [np.zeros(0, np.int64)],
        )
    rows = host_step_rows(model)
    by_name = {model.names[int(model.events["name"][r])]: int(r) for r in rows.tolist()}
    chosen = np.array([by_name[name] for name in steps.names], dtype=np.int64)
    return _anchored(model, rg, steps.names, steps.numbers, chosen, float(steps.starts[0]))


def _step_nodes(
    rg: RankGraph, lo: np.ndarray, hi: np.ndarray, threads: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per step [lo, hi] of its thread: the first host node inside it, and the last (or
    a wait the step's end falls in: the thread blocked in a collective's wait when the
    step ended, so the step ends with it, at the wait's end less the recorded time
    between, a negative offset, not a fixed gap after the node before it); -1: none. A
    thread's host nodes do not overlap, so sorted by start they are sorted by end
    too (binary searches)."""
    g, pieces = rg.graph, rg.pieces
    n_host = int(rg.piece_node.max()) + 1 if rg.piece_node.size else 0
    node_thread = np.full(n_host, -1, dtype=np.int64)
    node_thread[rg.piece_node] = pieces.thread
    order = np.lexsort((g.start[:n_host], node_thread))
    grouped = node_thread[order]
    bounds = np.flatnonzero(np.concatenate([[True], grouped[1:] != grouped[:-1], [True]]))
    span = {int(grouped[a]): (a, b) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())}
    begins, finishes = g.start[order], g.end[order]
    starts = np.full(lo.size, -1, dtype=np.int64)
    ends = np.full(lo.size, -1, dtype=np.int64)
    # The steps of one thread at a time (most jobs: one), each search over all of them.
    for thread in distinct(threads).tolist():
        a, b = span.get(int(thread), (0, 0))
        if a == b:
            continue
        at = np.flatnonzero(threads == thread)
        t0, t1 = lo[at], hi[at]
        first = a + np.searchsorted(begins[a:b], t0, side="left")
        last = a + np.searchsorted(finishes[a:b], t1, side="right") - 1
        inside = first <= last
        starts[at[inside]], ends[at[inside]] = order[first[inside]], order[last[inside]]
        held = a + np.searchsorted(begins[a:b], t1, side="left") - 1
        some = held >= a
        held, at, t0, t1 = held[some], at[some], t0[some], t1[some]
        holder = order[held]
        waiting = (begins[held] >= t0) & (finishes[held] > t1) & (g.kind[holder] == WAIT)
        ends[at[waiting]] = holder[waiting]
    return starts, ends


def _anchored(
    model: TraceModel,
    rg: RankGraph,
    names: list[str],
    numbers: list[int | None],
    rows: np.ndarray,
    first_start: float,
) -> StepAnchors:
    ev = model.events
    g = rg.graph
    lo = snap_ns(ev["ts"][rows], rg.origin)
    hi = snap_ns(ev["ts"][rows] + ev["dur"][rows], rg.origin)
    threads = thread_keys(model, rows)
    s, e = _step_nodes(rg, lo, hi, threads)
    has = (s >= 0) & (e >= 0)
    acts = rg.acts
    by_launch = np.argsort(acts.launch_start, kind="stable")  # NaN (no launch) last
    launched = acts.launch_start[by_launch]
    first = np.searchsorted(launched, lo, side="left")
    last = np.searchsorted(launched, hi, side="right")
    device_nodes = [rg.act_node[by_launch[a:b]] for a, b in zip(first.tolist(), last.tolist())]
    return StepAnchors(
        names=[n for n, ok in zip(names, has) if ok],
        numbers=[n for n, ok in zip(numbers, has) if ok],
        start_event=start_event(s[has]),
        start_offset=(g.start[s[has]] - lo[has]),
        end_event=end_event(e[has]),
        end_offset=(hi[has] - g.end[e[has]]),
        first_shift=max(first_start - float(lo[0]), 0.0) if has.size and has[0] else 0.0,
        device_nodes=[d for d, ok in zip(device_nodes, has) if ok],
    )


@dataclass
class Windows:
    """Each step's start and end under a timing, and the event its end came from with
    the time after that event (the host range's tail, 0 for device work)."""

    start: np.ndarray
    end: np.ndarray
    sink: np.ndarray  # i8 event
    tail: np.ndarray  # f8

    @property
    def durations(self) -> np.ndarray:
        return self.end - self.start


def windows(anchors: StepAnchors, timing: Timing) -> Windows:
    """Each step's window under `timing`: a step starts at its host start, no earlier than
    the step before it ended, and ends at the later of its host end (its end event plus
    the tail) and its last GPU activity's end (a whole trace's step: its bounds')."""
    if len(anchors) and (anchors.start_event >= 0).all():
        return _step_windows(anchors, timing.value)
    return _windows_one_by_one(anchors, timing.value)


def _step_windows(anchors: StepAnchors, value: np.ndarray) -> Windows:
    """`_windows_one_by_one` for ProfilerSteps, in whole-array passes (a run's join asks
    it of every rank): step i ends at max(its own end, its host start, step i-1's end),
    a running maximum, and starts at max(its host start, step i-1's end)."""
    host = value[anchors.start_event] - anchors.start_offset
    host[0] += anchors.first_shift
    sink = anchors.end_event.astype(np.int64)
    tail = anchors.end_offset.astype(np.float64)
    own_end = value[sink] + tail
    _device_ends(value, anchors.device_nodes, own_end, sink, tail)
    end = np.maximum.accumulate(np.maximum(own_end, host))
    start = host.copy()
    start[1:] = np.maximum(host[1:], end[:-1])
    return Windows(start, end, sink, tail)


def _device_ends(
    value: np.ndarray,
    device_nodes: list[np.ndarray],
    own_end: np.ndarray,
    sink: np.ndarray,
    tail: np.ndarray,
) -> None:
    """A step (an item of `device_nodes`: its GPU activities) whose last activity ends after
    its own end (`own_end`) ends there instead: its end, sink (the first activity at that
    end) and tail (0) set in place."""
    sizes = np.array([d.size for d in device_nodes], dtype=np.int64)
    if not sizes.any():
        return
    device = np.concatenate(device_nodes).astype(np.int64)
    step = np.repeat(np.arange(sizes.size), sizes)
    device_end = value[2 * device + 1]
    latest = np.full(sizes.size, -np.inf)
    np.maximum.at(latest, step, device_end)
    first = np.full(sizes.size, device.size, dtype=np.int64)  # first at the maximum
    at_max = np.flatnonzero(device_end == latest[step])
    np.minimum.at(first, step[at_max], at_max)
    later = (sizes > 0) & (latest > own_end)
    own_end[later] = latest[later]
    sink[later] = 2 * device[first[later]] + 1
    tail[later] = 0.0


def _windows_one_by_one(anchors: StepAnchors, value: np.ndarray) -> Windows:
    n = len(anchors)
    start, end = np.zeros(n), np.zeros(n)
    sink, tail = np.full(n, -1, dtype=np.int64), np.zeros(n)
    previous_end = -np.inf
    for i in range(n):
        if anchors.start_event[i] < 0:  # the whole trace, at its recorded bounds' offsets
            ends = value[1::2]
            start[i] = float(value[0::2].min()) - anchors.start_offset[i]
            sink[i] = 2 * int(ends.argmax()) + 1
            tail[i] = anchors.end_offset[i]
            end[i] = float(ends.max()) + tail[i]
            continue
        host_start = value[anchors.start_event[i]] - anchors.start_offset[i]
        if i == 0:
            host_start += anchors.first_shift
        start[i] = max(host_start, previous_end)
        sink[i] = anchors.end_event[i]
        tail[i] = anchors.end_offset[i]
        end[i] = value[sink[i]] + tail[i]
        device = anchors.device_nodes[i]
        if device.size:
            last = int(device[np.argmax(value[2 * device + 1])])
            if value[2 * last + 1] > end[i]:
                end[i], sink[i], tail[i] = value[2 * last + 1], 2 * last + 1, 0.0
        end[i] = max(end[i], start[i])
        previous_end = end[i]
    return Windows(start, end, sink, tail)


def windows_of_ranks(anchors: list[StepAnchors], timing: Timing) -> list[Windows]:
    """`windows` of each rank's anchors (events of one joined graph): the ranks whose steps
    are all ProfilerSteps in one set of whole-array passes for all of them (a join of
    thousands of ranks asks this of each outcome), the others one by one."""
    batched = [i for i, a in enumerate(anchors) if len(a) and (a.start_event >= 0).all()]
    out: dict[int, Windows] = dict(
        zip(batched, _ranks_windows([anchors[i] for i in batched], timing.value))
    )
    return [out[i] if i in out else windows(a, timing) for i, a in enumerate(anchors)]


def _ranks_windows(anchors: list[StepAnchors], value: np.ndarray) -> list[Windows]:
    """`_step_windows` of each of `anchors`, their steps end to end: each rank's running
    maximum is a row of a grid (padded after its last step), so no rank's reaches
    another's."""
    if not anchors:
        return []
    counts = np.array([len(a) for a in anchors], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    host = value[_joined(anchors, "start_event", np.int64)]
    host -= _joined(anchors, "start_offset", np.float64)
    host[first] += np.array([a.first_shift for a in anchors], dtype=np.float64)
    sink = _joined(anchors, "end_event", np.int64)
    tail = _joined(anchors, "end_offset", np.float64)
    own_end = value[sink] + tail
    _device_ends(value, [d for a in anchors for d in a.device_nodes], own_end, sink, tail)
    row = np.repeat(np.arange(counts.size), counts)
    column = np.arange(row.size) - first[row]
    grid = np.full((counts.size, int(counts.max())), -np.inf)
    grid[row, column] = np.maximum(own_end, host)
    end = np.maximum.accumulate(grid, axis=1)[row, column]
    start = host.copy()
    later_step = np.flatnonzero(column > 0)
    start[later_step] = np.maximum(host[later_step], end[later_step - 1])
    bounds = np.concatenate([first, [row.size]]).tolist()
    return [Windows(start[a:b], end[a:b], sink[a:b], tail[a:b]) for a, b in zip(bounds, bounds[1:])]


def _joined(anchors: list[StepAnchors], field: str, dtype: type) -> np.ndarray:
    return np.concatenate([getattr(a, field) for a in anchors]).astype(dtype)
