"""Allocation rows: each allocation paired with its free (index.py pairs them over the
whole trace), the rows of some devices in a range as columns, their display orders, and
every row paged (`memory_events`)."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from ...model.errors import ViewParamError, bounded
from ...model.trace_model import TraceModel
from ..core.common import lexsort_head
from .index import DeviceSeries, MemoryIndex, memory_index
from .ranges import parse_range, selected_devices
from .types import EVENTS_PAGE_MAX, MemoryEventsParams

TABLE_ROWS = 5000  # the memory view's allocation_table cap; memory_events pages through all
SORTS = ("size", "alloc", "free", "duration")
STATES = ("paired", "never_freed", "freed_unseen")


class AllocationRow(TypedDict):
    device: str
    state: str  # "paired", "never_freed", "freed_unseen"
    size_bytes: float
    alloc_us: float | None
    free_us: float | None
    duration_us: float | None
    op: str | None  # op that allocated (for freed_unseen: that freed)
    parent_op: str | None  # its parent op (useful when op is aten::empty)
    free_op: str | None


class AllocationTable(TypedDict):
    rows: list[AllocationRow]
    total_rows: int
    truncated: bool


class EventsView(TypedDict):
    device: str | None
    start_us: float | None
    end_us: float | None
    sort: str
    offset: int
    limit: int
    total_rows: int
    rows: list[AllocationRow]


class Rows:
    """Allocation rows of some devices in a range, as columns."""

    def __init__(self, n: int = 0) -> None:
        self.device = np.empty(n, dtype=np.int64)  # position in index.devices
        self.alloc = np.empty(n, dtype=np.int64)
        self.free = np.empty(n, dtype=np.int64)
        self.size = np.empty(n)
        self.alloc_ts = np.empty(n)
        self.free_ts = np.empty(n)
        self.state = np.empty(n, dtype=np.int8)


def allocation_rows(index: MemoryIndex, devices: list[DeviceSeries], lo: float, hi: float) -> Rows:
    parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    position = {id(d): i for i, d in enumerate(index.devices)}
    for d in devices:
        a_ts = np.where(d.alloc >= 0, index.ts[np.maximum(d.alloc, 0)], np.nan)
        f_ts = np.where(d.free >= 0, index.ts[np.maximum(d.free, 0)], np.nan)
        keep = ((a_ts >= lo) & (a_ts <= hi)) | ((f_ts >= lo) & (f_ts <= hi))
        which = position[id(d)]
        parts.append((which, d.alloc[keep], d.free[keep], d.size[keep], a_ts[keep], f_ts[keep]))
    out = Rows()
    if not parts:
        return out
    out.device = np.concatenate([np.full(p[1].size, p[0], dtype=np.int64) for p in parts])
    out.alloc = np.concatenate([p[1] for p in parts])
    out.free = np.concatenate([p[2] for p in parts])
    out.size = np.concatenate([p[3] for p in parts])
    out.alloc_ts = np.concatenate([p[4] for p in parts])
    out.free_ts = np.concatenate([p[5] for p in parts])
    out.state = np.where(out.alloc < 0, 2, np.where(out.free < 0, 1, 0)).astype(np.int8)
    return out


def ordered(rows: Rows, sort: str, count: int | None = None) -> np.ndarray:
    """Row positions in display order: size (largest first), alloc/free time, or duration
    (longest first); ties by time. `count`: only the first so many (`lexsort_head`)."""
    when = np.where(np.isnan(rows.alloc_ts), rows.free_ts, rows.alloc_ts)
    if sort == "size":
        keys = (when, -rows.size)
    elif sort == "alloc":
        keys = (when, np.isnan(rows.alloc_ts))
    elif sort == "free":
        keys = (when, np.nan_to_num(rows.free_ts, nan=np.inf))
    else:
        duration = rows.free_ts - rows.alloc_ts
        keys = (when, -np.nan_to_num(duration, nan=-np.inf))
    return np.lexsort(keys) if count is None else lexsort_head(keys, count)


def table_rows(
    model: TraceModel, index: MemoryIndex, rows: Rows, positions: np.ndarray
) -> list[AllocationRow]:
    alloc, free = rows.alloc[positions], rows.free[positions]
    owner = np.where(alloc >= 0, alloc, free)
    # Columns read out once: thousands of rows of numpy scalars one by one were slow.
    columns = zip(
        rows.device[positions].tolist(),
        rows.state[positions].tolist(),
        rows.size[positions].tolist(),
        alloc.tolist(),
        free.tolist(),
        rows.alloc_ts[positions].tolist(),
        rows.free_ts[positions].tolist(),
        _op_names(model, owner, index.op),
        _op_names(model, owner, index.parent),
        _op_names(model, free, index.op),
    )
    out: list[AllocationRow] = []
    for device, state, size, a, f, a_ts, f_ts, op, parent_op, free_op in columns:
        out.append(
            {
                "device": index.devices[device].name,
                "state": STATES[state],
                "size_bytes": float(size),
                "alloc_us": None if a < 0 else a_ts,
                "free_us": None if f < 0 else f_ts,
                "duration_us": round(f_ts - a_ts, 3) if a >= 0 and f >= 0 else None,
                "op": op,
                "parent_op": parent_op,
                "free_op": free_op,
            }
        )
    return out


def _op_names(model: TraceModel, events: np.ndarray, op_rows: np.ndarray) -> list[str | None]:
    """Per memory event (-1: none), the name of its op in `op_rows` (-1: none), or None."""
    row = np.where(events >= 0, op_rows[np.maximum(events, 0)], -1)
    codes = model.events["name"][np.maximum(row, 0)]
    names = model.names
    return [names[c] if r >= 0 else None for r, c in zip(row.tolist(), codes.tolist())]


def memory_events(model: TraceModel, params: MemoryEventsParams) -> EventsView:
    index = memory_index(model)
    start, end, lo, hi = parse_range(params)
    selected = selected_devices(index, params, default_all=True)
    sort = params.get("sort") or "size"
    if sort not in SORTS:
        raise ViewParamError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    offset = bounded(params.get("offset"), "offset", 0, 0, 2**62)
    limit = bounded(params.get("limit"), "limit", 1000, 1, EVENTS_PAGE_MAX)
    rows = allocation_rows(index, selected, lo, hi)
    order = ordered(rows, sort)
    page = order[offset : offset + limit]
    return {
        "device": params.get("device") or None,
        "start_us": start,
        "end_us": end,
        "sort": sort,
        "offset": offset,
        "limit": limit,
        "total_rows": int(order.size),
        "rows": table_rows(model, index, rows, page),
    }
