"""The Python frames' index (`python_function` X events), built by host_ranges' rule.

`python_ranges` is the Python frames around an op (python_stacks.py, which builds it
without keeping it) and around a launch (the flame graph); `python_frames_at` answers for
one time (a memory event, memory/view.py) from one thread's frames, as the index would.
"""

from __future__ import annotations

import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, thread_keys
from .host_ranges import HostRanges, build_ranges, narrow_ints, snap_ns, time_origin


def python_ranges(model: TraceModel) -> HostRanges:
    """`python_function` ranges: the Python frames of a thread."""
    return model.derived(_PYTHON_RANGES, _build_python_ranges)


_PYTHON_RANGES = "_python_ranges"


def _build_python_ranges(model: TraceModel) -> HostRanges:
    # Rows and thread keys as int32 where they fit: a trace's largest index (one range
    # per Python call), built beside the op tree and the Python stacks' own tables.
    # Each made in the call: none held here while the index sorts them.
    rows = complete_rows(model, Kind.PYTHON)
    if rows.size == 0:
        return build_ranges(model, rows)
    return build_ranges(model, narrow_ints(rows, len(model)), narrow_ints(thread_keys(model, rows)))


def python_ranges_unkept(model: TraceModel) -> HostRanges:
    """`python_ranges`, kept with the model only where a view built it already: the
    Python stacks (python_stacks.py) read it once to build their own tables, and keeping
    it beside them would hold a trace's largest index (a 250 MB trace: 0.5M frames, 18
    MB) for the rare view that asks again (the flame graph's launches outside every op)."""
    kept = model.__dict__.get(_PYTHON_RANGES)  # the derived table, when built
    return kept if isinstance(kept, HostRanges) else _build_python_ranges(model)


_NEAR_US = 0.01


def python_frames_at(model: TraceModel, thread: int, t: float) -> np.ndarray:
    """The rows of the `python_function` ranges of `thread` containing `t` (half-open,
    in whole ns as the index compares), outermost first: what `python_ranges`'
    `outwards(containing(...))` lists for one time, read from the frames of that thread
    alone (no index of every frame built for one question)."""
    rows = complete_rows(model, Kind.PYTHON)
    if rows.size == 0:
        return rows
    ev = model.events
    raw = ev["ts"][rows].astype(np.float64, copy=False)
    origin = time_origin(raw)
    # Snapping moves a time by under a nanosecond: the frames that may contain t by the
    # snapped times are those around it by the raw ones, give or take 0.01 µs.
    near = raw <= t + _NEAR_US
    del raw
    rows = rows[near]
    rows = rows[ev["ts"][rows] + ev["dur"][rows] >= t - _NEAR_US]
    rows = rows[thread_keys(model, rows) == thread]
    start = snap_ns(ev["ts"][rows], origin)
    end = snap_ns(ev["ts"][rows].astype(np.float64) + ev["dur"][rows], origin)
    at = float(snap_ns(np.array([t]), origin)[0])
    inside = (start <= at) & (end > at)
    rows, start, end = rows[inside], start[inside], end[inside]
    return rows[np.lexsort((rows, -end, start))]
