"""Host threads as pieces: each thread's time cut at every start and end of its ranges (ops,
annotations, runtime and driver calls), each piece named by the innermost range or call
covering it. Time covered by no range (or by a ProfilerStep range only) is not a piece:
it is a gap, kept as the `add` of the node after it (`graph.py`).

Pieces are what a change of an op scales (a piece is under an op when the op is its
innermost range or one of that range's ancestors) and what a host node of the path is
shown as."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import launch_rows, name_flags, thread_keys
from ..core.host_ranges import HostRanges, build_ranges, host_ranges, snap_ns
from ..core.launches import launch_family
from ..core.rules import is_step_name
from ..core.taxonomy import is_host_transfer_op

try:  # the compiled passes (`_pieces.c`); without a C compiler, numpy's give the same
    from . import _pieces  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - where no C compiler built it
    _pieces = None


@dataclass
class Pieces:
    """Pieces of every host thread, sorted by (thread, start); all arrays per piece."""

    thread: np.ndarray  # i8 canonical thread key
    start: np.ndarray  # f8 trace µs (on the nanosecond grid of the host ranges)
    end: np.ndarray
    row: np.ndarray  # i8 the innermost event: a runtime call, else a host range
    range_pos: np.ndarray  # i8 innermost host range (HostRanges position), -1 none
    runtime: np.ndarray  # i8 runtime/driver row when a call is innermost, -1
    blocking_call: np.ndarray  # bool: a call of the `synchronize` family
    transfer: np.ndarray  # i8 row of the host collective range (gloo:*) it is in, -1

    def __len__(self) -> int:
        return int(self.start.size)


def _empty() -> Pieces:
    ints, floats = np.zeros(0, np.int64), np.zeros(0)
    return Pieces(ints, floats, floats, ints, ints, ints, np.zeros(0, bool), ints)


def host_pieces(model: TraceModel) -> Pieces:
    ranges = host_ranges(model)
    ev = model.events
    calls = launch_rows(model)
    if len(ranges) == 0 and calls.size == 0:
        return _empty()
    calls_index = build_ranges(model, calls)
    origin = ranges.origin if len(ranges) else calls_index.origin
    call_start = snap_ns(ev["ts"][calls], origin)
    call_end = snap_ns(ev["ts"][calls] + ev["dur"][calls], origin)
    call_thread = thread_keys(model, calls) if calls.size else np.zeros(0, np.int64)
    thread = np.concatenate([ranges.thread, ranges.thread, call_thread, call_thread])
    times = np.concatenate([ranges.start, ranges.end, call_start, call_end])
    ok = np.isfinite(times)
    thread, times = thread[ok], times[ok]
    order = np.lexsort((times, thread))
    thread, times = thread[order], times[order]
    compiled = _compiled_pieces(model, ranges, calls_index, thread, times)
    if compiled is not None:
        return compiled
    p_thread, p_start, p_end, mid = piece_bounds(thread, times)
    call_pos = calls_index.containing(p_thread, mid) if calls.size else np.full(mid.size, -1)
    range_pos = ranges.containing(p_thread, mid) if len(ranges) else np.full(mid.size, -1)
    return _covered(model, ranges, calls_index, p_thread, p_start, p_end, call_pos, range_pos)


def piece_bounds(
    thread: np.ndarray, times: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Boundaries sorted by (thread, time) as pieces: per pair of consecutive distinct
    times of a thread, its thread, start, end and midpoint."""
    fresh = np.concatenate([[True], (thread[1:] != thread[:-1]) | (times[1:] != times[:-1])])
    thread, times = thread[fresh], times[fresh]
    inner = np.flatnonzero((thread[1:] == thread[:-1]) & (times[1:] > times[:-1]))
    p_thread, p_start, p_end = thread[inner], times[inner], times[inner + 1]
    return p_thread, p_start, p_end, (p_start + p_end) / 2.0


def _compiled_pieces(
    model: TraceModel,
    ranges: HostRanges,
    calls_index: HostRanges,
    thread: np.ndarray,
    times: np.ndarray,
) -> Pieces | None:
    """`_covered`'s pieces from the sorted boundaries in one compiled pass (`_pieces.c`);
    None where it is not built or cannot take them (numpy's steps then)."""
    names = model.events["name"]
    if _pieces is None or thread.size < 2 or names.dtype not in (np.int16, np.int32):
        return None
    step_range, transfer_range = _range_flags(model, ranges)
    is_sync = name_flags(model, _is_synchronize)
    room = thread.size - 1
    # thread, start, end, row, range_pos, runtime, transfer; then blocking
    columns: list[np.ndarray] = [np.empty(room, t) for t in (np.int64, float, float)]
    columns += [np.empty(room, np.int64) for _ in range(4)]
    blocking = np.empty(room, np.uint8)
    count = _pieces.covered_pieces(
        np.ascontiguousarray(thread, dtype=np.int64),
        np.ascontiguousarray(times, dtype=np.float64),
        *_index_buffers(calls_index),
        *_index_buffers(ranges),
        np.ascontiguousarray(names),
        names.dtype.itemsize,
        np.ascontiguousarray(step_range, dtype=np.uint8),
        np.ascontiguousarray(transfer_range, dtype=np.uint8),
        np.ascontiguousarray(is_sync, dtype=np.uint8),
        *columns,
        blocking,
    )
    if count < 0:
        return None
    thread_of, start, end, row, range_pos, runtime, transfer = (a[:count] for a in columns)
    return Pieces(
        thread_of, start, end, row, range_pos, runtime, blocking[:count].view(bool), transfer
    )


def _index_buffers(index: HostRanges) -> tuple[np.ndarray | float, ...]:
    """A HostRanges as the compiled pass takes it."""
    k = index.threads.size  # (an empty index has a bound for no thread)
    ints = (index.threads, index.thread_lo[:k], index.thread_hi[:k], index.parent, index.rows)
    floats = (index.start, index.end)
    return (
        *(np.ascontiguousarray(a, dtype=np.int64) for a in ints),
        *(np.ascontiguousarray(a, dtype=np.float64) for a in floats),
        float(index.origin),
    )


def _range_flags(model: TraceModel, ranges: HostRanges) -> tuple[np.ndarray, np.ndarray]:
    """Per range, whether it is a step, and whether a host transfer (`gloo:*`...)."""
    if len(ranges) == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    range_names = model.events["name"][ranges.rows]
    step = name_flags(model, is_step_name)[range_names]
    return step, name_flags(model, is_host_transfer_op)[range_names]


def _covered(
    model: TraceModel,
    ranges: HostRanges,
    calls_index: HostRanges,
    thread: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    call_pos: np.ndarray,
    range_pos: np.ndarray,
) -> Pieces:
    """The pieces a call or a range other than a step covers, with their attributes."""
    names = model.events["name"]
    step_range, transfer_range = _range_flags(model, ranges)
    in_call = call_pos >= 0
    in_range = range_pos >= 0
    in_range[in_range] = ~step_range[range_pos[in_range]]
    keep = in_call | in_range
    call_pos, range_pos = call_pos[keep], range_pos[keep]
    in_call = in_call[keep]
    runtime = _rows_at(calls_index.rows, call_pos)
    ranged = range_pos >= 0
    range_row = _rows_at(ranges.rows, range_pos)
    blocking = np.zeros(runtime.size, dtype=bool)
    if in_call.any():
        is_sync = name_flags(model, _is_synchronize)
        blocking[in_call] = is_sync[names[runtime[in_call]]]
    transfer = np.full(runtime.size, -1, dtype=np.int64)
    in_transfer = ~in_call & ranged
    in_transfer[in_transfer] = transfer_range[range_pos[in_transfer]]
    transfer[in_transfer] = range_row[in_transfer]
    return Pieces(
        thread=thread[keep],
        start=start[keep],
        end=end[keep],
        row=np.where(in_call, runtime, range_row),
        range_pos=np.where(ranged, range_pos, -1),
        runtime=runtime,
        blocking_call=blocking,
        transfer=transfer,
    )


def _rows_at(rows: np.ndarray, position: np.ndarray) -> np.ndarray:
    """rows[position] where position >= 0, else -1."""
    out = np.full(position.size, -1, dtype=np.int64)
    found = position >= 0
    out[found] = rows[position[found]]
    return out


def _is_synchronize(name: str) -> bool:
    return launch_family(name) == "synchronize"


def under_ops(model: TraceModel, name: str) -> np.ndarray:
    """Per host range (HostRanges position), whether it is named `name` or lies inside a
    range so named: the ranges an op's change scales."""
    ranges = host_ranges(model)
    code = model.name_code(name)
    if code < 0 or len(ranges) == 0:
        return np.zeros(len(ranges), dtype=bool)
    flag = model.events["name"][ranges.rows] == code
    parent = ranges.parent
    # Inherit down the tree, a level of nesting at a time from the roots: a range is under
    # the op when its parent is (one pass over the ranges, the levels found once).
    for level in nesting_levels(model)[1:]:
        flag[level] |= flag[parent[level]]
    return flag


def nesting_levels(model: TraceModel) -> list[np.ndarray]:
    """The host ranges' positions by depth (roots first), kept with the model: what
    `under_ops` walks for each op a what-if or top gains scales."""
    return model.derived("_critical_path_range_levels", _levels)  # type: ignore[no-any-return]


def _levels(model: TraceModel) -> list[np.ndarray]:
    parent = host_ranges(model).parent
    depth = np.zeros(parent.size, dtype=np.int64)
    up = parent.copy()
    live = np.flatnonzero(up >= 0)
    while live.size:
        depth[live] += 1
        up[live] = parent[up[live]]
        live = live[up[live] >= 0]
    order = np.argsort(depth, kind="stable")
    cuts = np.flatnonzero(np.diff(depth[order])) + 1
    return np.split(order, cuts) if order.size else []
