"""Memory: per-device allocated/reserved levels, peaks and who was running at the peak,
paired allocations, per-operator statistics, from the trace's own `[memory]` instants.

Definitions (the old plugin's, where sound; `index.py` prepares the events):
- An event belongs to the innermost CPU op of its thread containing its timestamp.
- Per operator name and device: allocation count/bytes (Bytes > 0), release count/bytes
  (Bytes < 0, as positive bytes), increase = allocated - released; "self" counts only the
  events that belong to the op itself, the others also those of its child ops: each
  event once per name, in the union of the name's calls (the old plugin summed over
  calls, so `aten::div` inside `aten::div` counted its events twice). `calls` counts the
  calls that overlap the range as the Operator view does (a single same-named child is
  one call with its parent; every thread).
- Allocations pair with frees by (device, address) in time order, over the whole trace; a
  range keeps the rows whose allocation or free falls inside it. Allocations with no free
  are `never_freed`, frees with no allocation `freed_unseen` (allocated before the
  recording). Events without an address (torch < 1.10) cannot be paired.
- A range [start_us, end_us] is closed and in the trace's own microseconds. The peak in a
  range also counts the level the range starts at (set by the last event before it), so
  its time may precede start_us.

Where we differ from the old plugin on purpose: it paired by address alone across devices,
dropped devices other than CPU and CUDA, ignored events without `Total Allocated` (no
curve for 2021 traces), filtered events by range before pairing (so every allocation
freed in a range but made before it looked unpaired), and downsampled curves with LTTB,
which can drop the peak; `memory_curve` keeps each pixel's min and max.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TypedDict

import numpy as np

from ...api.requests import ViewParamError, integer, number
from ...store.categories import Kind
from ...store.model import TraceModel
from ..common import thread_keys
from ..devices import device_identity, gpu_of_memory_device, memory_device_label
from ..optree import op_tree
from .index import DeviceSeries, MemoryIndex, memory_index, name_spans

# 3: device label from the one device identity; nested same-name ops count an event once,
# calls as the Operator view. 4: levels by the rule the trace counters share (series.py).
VERSION = "4"
TABLE_ROWS = 5000  # allocation_table cap; memory_events pages through all rows
PAGE_MAX = 10000
DEFAULT_WIDTH = 1000
MAX_WIDTH = 20000
SORTS = ("size", "alloc", "free", "duration")


class OpRef(TypedDict):
    name: str
    start_us: float
    duration_us: float
    ops: list[str]  # enclosing CPU ops, outermost first, ending with `name`
    stack: list[str]  # Python frames, outermost first ([] when the trace has none)
    stack_source: str | None  # "call_stack" (op arg) or "python_function" (events)


class DeviceView(TypedDict):
    device: str  # the key other requests name the device by ("GPU0", "CPU")
    label: str  # its display name, the same as on the Overview and the trace counters
    device_type: int
    device_id: int
    events: int  # in range
    allocated_source: str  # "trace": Total Allocated; "computed": running sum of Bytes
    reserved_known: bool
    total_memory_bytes: int | None
    peak_allocated_bytes: float
    peak_allocated_us: float | None
    peak_op: OpRef | None
    peak_reserved_bytes: float | None
    peak_reserved_us: float | None
    start_allocated_bytes: float  # level when the range starts
    end_allocated_bytes: float  # level when it ends


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


class OperatorRow(TypedDict):
    device: str
    name: str
    calls: int
    allocation_count: int
    allocation_bytes: float
    release_count: int
    release_bytes: float
    increase_bytes: float
    self_allocation_count: int
    self_allocation_bytes: float
    self_release_count: int
    self_release_bytes: float
    self_increase_bytes: float


class MemoryView(TypedDict):
    trace_start_us: float  # the first event of the trace (any kind): times are relative to it
    device: str | None  # the device the tables cover; None: every device
    default_device: str | None
    start_us: float | None
    end_us: float | None
    devices: list[DeviceView]
    allocations: int
    never_freed: int
    freed_unseen: int
    no_address_events: int
    unattributed_events: int
    allocation_table: AllocationTable
    operator_stats: list[OperatorRow]
    notes: list[str]


class CurveView(TypedDict):
    trace_start_us: float
    device: str
    start_us: float | None
    end_us: float | None
    width: int
    points: int  # points of the full step curve in the range
    downsampled: bool
    t_us: list[float]  # a step curve: each value holds until the next time
    allocated_bytes: list[float]
    reserved_bytes: list[float] | None
    peak_allocated_bytes: float
    peak_reserved_bytes: float | None


class EventsView(TypedDict):
    device: str | None
    start_us: float | None
    end_us: float | None
    sort: str
    offset: int
    limit: int
    total_rows: int
    rows: list[AllocationRow]


def has_memory(model: TraceModel) -> bool:
    return int(model.memory["row"].size) > 0


# --- parameters ------------------------------------------------------------------


def _range(params: Mapping[str, str]) -> tuple[float | None, float | None, float, float]:
    start, end = number(params, "start_us"), number(params, "end_us")
    lo = -math.inf if start is None else start
    hi = math.inf if end is None else end
    if lo > hi:
        raise ViewParamError(f"start_us ({start}) is after end_us ({end})")
    return start, end, lo, hi


def _devices(
    index: MemoryIndex, params: Mapping[str, str], default_all: bool
) -> list[DeviceSeries]:
    name = params.get("device")
    if name in (None, ""):
        if default_all:
            return list(index.devices)
        chosen = index.default_device
        return [d for d in index.devices if d.name == chosen]
    found = index.device(str(name))
    if found is None:
        known = ", ".join(d.name for d in index.devices) or "none"
        raise ViewParamError(f"no memory events of device {name!r} (devices: {known})")
    return [found]


# --- the memory view ---------------------------------------------------------------


def memory(model: TraceModel, params: Mapping[str, str]) -> MemoryView:
    index = memory_index(model)
    start, end, lo, hi = _range(params)
    selected = _devices(index, params, default_all=True)
    ctx = _Context(model, index)
    devices = [_device_view(ctx, d, lo, hi) for d in index.devices]
    table = _allocation_rows(index, selected, lo, hi)
    states = table.state
    rows = _ordered(table, "size")[:TABLE_ROWS]
    no_address = 0
    unattributed = 0
    for d in selected:
        i0, i1 = _window(d, lo, hi)
        members = d.events[i0:i1]
        no_address += int(((model.memory["addr"][members] == -1) & (d.nbytes[i0:i1] != 0)).sum())
        unattributed += int((index.op[members] < 0).sum())
    return {
        "trace_start_us": trace_start(model),
        "device": params.get("device") or None,
        "default_device": index.default_device,
        "start_us": start,
        "end_us": end,
        "devices": devices,
        "allocations": int((states == 0).sum()),
        "never_freed": int((states == 1).sum()),
        "freed_unseen": int((states == 2).sum()),
        "no_address_events": no_address,
        "unattributed_events": unattributed,
        "allocation_table": {
            "rows": _table_rows(model, index, table, rows),
            "total_rows": int(states.size),
            "truncated": bool(states.size > TABLE_ROWS),
        },
        "operator_stats": operator_stats(model, index, selected, lo, hi),
        "notes": _notes(index),
    }


def trace_start(model: TraceModel) -> float:
    ts = model.events["ts"]
    return float(np.nanmin(ts)) if ts.size else 0.0


def _notes(index: MemoryIndex) -> list[str]:
    notes = []
    for d in index.devices:
        if d.allocated_source == "computed":
            notes.append(
                f"{d.name}: the trace has no Total Allocated; allocated is the running sum of"
                " Bytes since the recording started (a lower bound)"
            )
        if d.reserved is None:
            notes.append(f"{d.name}: the trace has no Total Reserved; reserved is unknown")
        if d.no_address:
            notes.append(
                f"{d.name}: {d.no_address} events have no address (PyTorch < 1.10);"
                " their allocations cannot be paired with frees"
            )
    return notes


class _Context:
    """Lookups shared by the device summaries of one request."""

    def __init__(self, model: TraceModel, index: MemoryIndex) -> None:
        self.model = model
        self.index = index
        self._python: tuple[np.ndarray, np.ndarray] | None = None

    def total_memory(self, d: DeviceSeries) -> int | None:
        gpu = gpu_of_memory_device(self.model, d.device_type, d.device_id)
        return None if gpu is None else device_identity(self.model, gpu).memory_bytes

    def label(self, d: DeviceSeries) -> str:
        """The device's name on every page (`GPU 0 · NVIDIA A100-SXM4-80GB`)."""
        return memory_device_label(self.model, d.device_type, d.device_id, d.name)

    def python_rows(self) -> tuple[np.ndarray, np.ndarray]:
        if self._python is None:
            rows = self.model.complete_rows(Kind.PYTHON)
            keys = thread_keys(self.model, rows) if rows.size else np.empty(0, dtype=np.int64)
            self._python = (rows, keys)
        return self._python


def _window(d: DeviceSeries, lo: float, hi: float) -> tuple[int, int]:
    return int(np.searchsorted(d.ts, lo, side="left")), int(np.searchsorted(d.ts, hi, side="right"))


def _levels(d: DeviceSeries, lo: float, hi: float, values: np.ndarray) -> tuple[np.ndarray, int]:
    """Levels of `values` held in the range and the series position of the first one: the
    level carried in from before the range (when there is one), then one per event."""
    i0, i1 = _window(d, lo, hi)
    first = i0 - 1 if i0 > 0 else i0
    return values[first:i1], first


def _device_view(ctx: _Context, d: DeviceSeries, lo: float, hi: float) -> DeviceView:
    i0, i1 = _window(d, lo, hi)
    levels, first = _levels(d, lo, hi, d.allocated)
    before_all = float(d.allocated[0] - d.nbytes[0])
    if levels.size:
        k = int(np.argmax(levels))
        peak = float(levels[k])
        peak_pos: int | None = first + k
    else:  # the range ends before the first event
        peak, peak_pos = before_all, None
    peak_res: float | None = None
    peak_res_us: float | None = None
    if d.reserved is not None:
        res_levels, res_first = _levels(d, lo, hi, d.reserved)
        if res_levels.size:
            kr = int(np.argmax(res_levels))
            peak_res = float(res_levels[kr])
            peak_res_us = float(d.ts[res_first + kr])
        else:
            peak_res = float(d.reserved[0])
    start_level = float(d.allocated[i0 - 1]) if i0 > 0 else before_all
    end_level = float(d.allocated[i1 - 1]) if i1 > 0 else before_all
    return {
        "device": d.name,
        "label": ctx.label(d),
        "device_type": d.device_type,
        "device_id": d.device_id,
        "events": i1 - i0,
        "allocated_source": d.allocated_source,
        "reserved_known": d.reserved is not None,
        "total_memory_bytes": ctx.total_memory(d),
        "peak_allocated_bytes": peak,
        "peak_allocated_us": None if peak_pos is None else float(d.ts[peak_pos]),
        "peak_op": None if peak_pos is None else _op_ref(ctx, int(d.events[peak_pos])),
        "peak_reserved_bytes": peak_res,
        "peak_reserved_us": peak_res_us,
        "start_allocated_bytes": start_level,
        "end_allocated_bytes": end_level,
    }


def _op_ref(ctx: _Context, event: int) -> OpRef | None:
    """The op a memory event belongs to, its enclosing ops, and its Python stack."""
    index, model = ctx.index, ctx.model
    row = int(index.op[event])
    if row < 0:
        return None
    ev = model.events
    t = float(index.ts[event])
    key = int(index.thread[event])
    ops = index.threads[key]
    containing = np.flatnonzero((ops.starts <= t) & (t < ops.ends))
    chain = [model.names[c] for c in ops.names[containing].tolist()]
    stack, source = _call_stack(model, row), "call_stack"
    if not stack:
        rows, keys = ctx.python_rows()
        mine = rows[keys == key]
        s = ev["ts"][mine]
        inside = mine[(s <= t) & (t < s + ev["dur"][mine])]
        inside = inside[np.lexsort((-ev["dur"][inside], ev["ts"][inside]))]
        stack, source = model.names_of(inside), "python_function"
    return {
        "name": model.names[int(ev["name"][row])],
        "start_us": float(ev["ts"][row]),
        "duration_us": float(ev["dur"][row]),
        "ops": chain,
        "stack": stack,
        "stack_source": source if stack else None,
    }


def _call_stack(model: TraceModel, row: int) -> list[str]:
    raw = model.raw_args(row)
    if b"Call stack" not in raw:
        return []
    try:
        value = json.loads(raw).get("Call stack")
    except (ValueError, AttributeError):
        return []
    if not isinstance(value, str):
        return []
    frames = [f.strip() for f in value.split(";") if f.strip()]
    return frames[::-1]  # the trace writes the innermost frame first


# --- allocation rows -----------------------------------------------------------------

STATES = ("paired", "never_freed", "freed_unseen")


class _Rows:
    """Allocation rows of some devices in a range, as columns."""

    def __init__(self, n: int = 0) -> None:
        self.device = np.empty(n, dtype=np.int64)  # position in index.devices
        self.alloc = np.empty(n, dtype=np.int64)
        self.free = np.empty(n, dtype=np.int64)
        self.size = np.empty(n)
        self.alloc_ts = np.empty(n)
        self.free_ts = np.empty(n)
        self.state = np.empty(n, dtype=np.int8)


def _allocation_rows(
    index: MemoryIndex, devices: list[DeviceSeries], lo: float, hi: float
) -> _Rows:
    parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    position = {id(d): i for i, d in enumerate(index.devices)}
    for d in devices:
        a_ts = np.where(d.alloc >= 0, index.ts[np.maximum(d.alloc, 0)], np.nan)
        f_ts = np.where(d.free >= 0, index.ts[np.maximum(d.free, 0)], np.nan)
        keep = ((a_ts >= lo) & (a_ts <= hi)) | ((f_ts >= lo) & (f_ts <= hi))
        which = position[id(d)]
        parts.append((which, d.alloc[keep], d.free[keep], d.size[keep], a_ts[keep], f_ts[keep]))
    out = _Rows()
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


def _ordered(rows: _Rows, sort: str) -> np.ndarray:
    """Row positions in display order: size (largest first), alloc/free time, or duration
    (longest first); ties by time."""
    when = np.where(np.isnan(rows.alloc_ts), rows.free_ts, rows.alloc_ts)
    if sort == "size":
        return np.lexsort((when, -rows.size))
    if sort == "alloc":
        return np.lexsort((when, np.isnan(rows.alloc_ts)))
    if sort == "free":
        return np.lexsort((when, np.nan_to_num(rows.free_ts, nan=np.inf)))
    duration = rows.free_ts - rows.alloc_ts
    return np.lexsort((when, -np.nan_to_num(duration, nan=-np.inf)))


def _table_rows(
    model: TraceModel, index: MemoryIndex, rows: _Rows, positions: np.ndarray
) -> list[AllocationRow]:
    names = model.names
    name_col = model.events["name"]

    def op_name(event: int, which: np.ndarray) -> str | None:
        if event < 0:
            return None
        row = int(which[event])
        return names[int(name_col[row])] if row >= 0 else None

    out: list[AllocationRow] = []
    for p in positions.tolist():
        a, f = int(rows.alloc[p]), int(rows.free[p])
        a_ts, f_ts = float(rows.alloc_ts[p]), float(rows.free_ts[p])
        owner = a if a >= 0 else f
        out.append(
            {
                "device": index.devices[int(rows.device[p])].name,
                "state": STATES[int(rows.state[p])],
                "size_bytes": float(rows.size[p]),
                "alloc_us": None if a < 0 else a_ts,
                "free_us": None if f < 0 else f_ts,
                "duration_us": round(f_ts - a_ts, 3) if a >= 0 and f >= 0 else None,
                "op": op_name(owner, index.op),
                "parent_op": op_name(owner, index.parent),
                "free_op": op_name(f, index.op),
            }
        )
    return out


# --- operator statistics -----------------------------------------------------------


def operator_stats(
    model: TraceModel, index: MemoryIndex, devices: list[DeviceSeries], lo: float, hi: float
) -> list[OperatorRow]:
    ev = model.events
    n_names = len(model.names)
    calls = _calls(model, lo, hi, n_names)
    out: list[OperatorRow] = []
    for d in devices:
        i0, i1 = _window(d, lo, hi)
        if i1 <= i0:
            continue
        members = d.events[i0:i1]
        nbytes = d.nbytes[i0:i1]
        alloc_b = np.where(nbytes > 0, nbytes, 0.0)
        free_b = np.where(nbytes < 0, -nbytes, 0.0)
        alloc_n = (nbytes > 0).astype(np.float64)
        free_n = (nbytes < 0).astype(np.float64)
        metrics = (alloc_n, alloc_b, free_n, free_b)
        self_sums = np.zeros((4, n_names))
        op = index.op[members]
        owned = op >= 0
        codes = ev["name"][op[owned]]
        for j, values in enumerate(metrics):
            self_sums[j] = np.bincount(codes, weights=values[owned], minlength=n_names)
        total_sums = np.zeros((4, n_names))
        threads = index.thread[members]
        for key in np.unique(threads).tolist():
            ops = index.threads.get(key)
            if ops is None:
                continue
            mine = threads == key
            t = index.ts[members[mine]]  # time order kept
            span_codes, span_starts, span_ends = name_spans(ops)
            first = np.searchsorted(t, span_starts, side="left")
            last = np.searchsorted(t, span_ends, side="left")
            touched = last > first
            if not touched.any():
                continue
            first, last = first[touched], last[touched]
            op_codes = span_codes[touched]
            for j, values in enumerate(metrics):
                prefix = np.concatenate([[0.0], np.cumsum(values[mine])])
                total_sums[j] += np.bincount(
                    op_codes, weights=prefix[last] - prefix[first], minlength=n_names
                )
        for code in np.flatnonzero((total_sums[0] + total_sums[2]) > 0).tolist():
            a_n, a_b, f_n, f_b = total_sums[:, code]
            sa_n, sa_b, sf_n, sf_b = self_sums[:, code]
            out.append(
                {
                    "device": d.name,
                    "name": model.names[code],
                    "calls": int(calls[code]),
                    "allocation_count": int(a_n),
                    "allocation_bytes": float(a_b),
                    "release_count": int(f_n),
                    "release_bytes": float(f_b),
                    "increase_bytes": float(a_b - f_b),
                    "self_allocation_count": int(sa_n),
                    "self_allocation_bytes": float(sa_b),
                    "self_release_count": int(sf_n),
                    "self_release_bytes": float(sf_b),
                    "self_increase_bytes": float(sa_b - sf_b),
                }
            )
    out.sort(key=lambda r: (r["device"], -r["self_increase_bytes"], r["name"]))
    return out


def _calls(model: TraceModel, lo: float, hi: float, n_names: int) -> np.ndarray:
    """Calls per name as the Operator view counts them (its op tree: a single same-named
    child is one call with its parent), of the calls that overlap the range."""
    tree = op_tree(model)
    nodes = tree.rows[tree.op_mask]
    starts = model.events["ts"][nodes]
    overlap = (starts <= hi) & (starts + model.events["dur"][nodes] >= lo)
    return np.bincount(model.events["name"][nodes[overlap]], minlength=n_names)


# --- the curve -----------------------------------------------------------------------


def memory_curve(model: TraceModel, params: Mapping[str, str]) -> CurveView:
    index = memory_index(model)
    start, end, lo, hi = _range(params)
    chosen = _devices(index, params, default_all=False)
    if not chosen:  # like a device that is not there: 400, with the reason
        raise ViewParamError("the trace has no memory events, so no memory curve")
    (d,) = chosen
    width = integer(params, "width", DEFAULT_WIDTH, 1, MAX_WIDTH)
    t, alloc, res = _step_points(d, lo, hi)
    keep = downsample(t, [alloc] if res is None else [alloc, res], width)
    return {
        "trace_start_us": trace_start(model),
        "device": d.name,
        "start_us": start,
        "end_us": end,
        "width": width,
        "points": int(t.size),
        "downsampled": bool(keep.size < t.size),
        "t_us": t[keep].tolist(),
        "allocated_bytes": alloc[keep].tolist(),
        "reserved_bytes": None if res is None else res[keep].tolist(),
        "peak_allocated_bytes": float(alloc.max()) if alloc.size else 0.0,
        "peak_reserved_bytes": None if res is None or not res.size else float(res.max()),
    }


def _step_points(
    d: DeviceSeries, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The step curve inside the range: the level at the range start (when an event came
    before it), one point per event, and the level at the range end."""
    i0, i1 = _window(d, lo, hi)
    t = d.ts[i0:i1]
    series = [d.allocated] + ([d.reserved] if d.reserved is not None else [])
    values = [s[i0:i1] for s in series]
    if i0 > 0 and math.isfinite(lo):
        t = np.concatenate([[lo], t])
        values = [np.concatenate([[s[i0 - 1]], v]) for s, v in zip(series, values)]
    if t.size and math.isfinite(hi) and t[-1] < hi:
        t = np.concatenate([t, [hi]])
        values = [np.concatenate([v, v[-1:]]) for v in values]
    return t, values[0], values[1] if len(values) > 1 else None


def downsample(t: np.ndarray, series: list[np.ndarray], width: int) -> np.ndarray:
    """Positions to keep of a step curve drawn `width` pixels wide: in each pixel's time
    bucket the first point, the last, and where each series is at its min and its max, so
    every pixel column shows the true extremes. All points when there are few."""
    n = t.size
    if n <= 4 * width or n < 2:
        return np.arange(n)
    span = float(t[-1] - t[0])
    if span <= 0:
        bucket = np.zeros(n, dtype=np.int64)
    else:
        bucket = np.minimum(((t - t[0]) * (width / span)).astype(np.int64), width - 1)
    starts = np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))
    stops = np.concatenate([starts[1:], [n]])
    counts = stops - starts
    picks = [starts, stops - 1]
    for v in series:
        for reduce in (np.minimum, np.maximum):
            extreme = np.repeat(reduce.reduceat(v, starts), counts)
            hit = np.flatnonzero(v == extreme)
            _, first = np.unique(bucket[hit], return_index=True)
            picks.append(hit[first])
    return np.unique(np.concatenate(picks))


# --- every allocation row, paged -----------------------------------------------------


def memory_events(model: TraceModel, params: Mapping[str, str]) -> EventsView:
    index = memory_index(model)
    start, end, lo, hi = _range(params)
    selected = _devices(index, params, default_all=True)
    sort = params.get("sort") or "size"
    if sort not in SORTS:
        raise ViewParamError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    offset = integer(params, "offset", 0, 0, 2**62)
    limit = integer(params, "limit", 1000, 1, PAGE_MAX)
    rows = _allocation_rows(index, selected, lo, hi)
    order = _ordered(rows, sort)
    page = order[offset : offset + limit]
    return {
        "device": params.get("device") or None,
        "start_us": start,
        "end_us": end,
        "sort": sort,
        "offset": offset,
        "limit": limit,
        "total_rows": int(order.size),
        "rows": _table_rows(model, index, rows, page),
    }
