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
from typing import TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from ..core.devices import device_identity, gpu_of_memory_device, memory_device_label
from ..core.host_ranges import HostRanges, op_ranges
from ..core.python_ranges import python_frames_at
from .allocations import (
    TABLE_ROWS,
    AllocationTable,
    EventsView,
    allocation_rows,
    memory_events,
    ordered,
    table_rows,
)
from .curve import CurveView, downsample, memory_curve
from .index import DeviceSeries, MemoryIndex, memory_index
from .operator_stats import OperatorRow, operator_stats
from .ranges import parse_range, selected_devices, trace_start, window
from .types import MemoryParams

# The routes' functions, by the names the endpoint registry imports.
__all__ = [
    "CurveView",
    "EventsView",
    "downsample",
    "memory",
    "memory_curve",
    "memory_events",
]


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


def memory(model: TraceModel, params: MemoryParams) -> MemoryView:
    index = memory_index(model)
    start, end, lo, hi = parse_range(params)
    selected = selected_devices(index, params, default_all=True)
    ctx = _Context(model, index)
    devices = [_device_view(ctx, d, lo, hi) for d in index.devices]
    table = allocation_rows(index, selected, lo, hi)
    states = table.state
    rows = ordered(table, "size", TABLE_ROWS)
    no_address = 0
    unattributed = 0
    for d in selected:
        i0, i1 = window(d, lo, hi)
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
            "rows": table_rows(model, index, table, rows),
            "total_rows": int(states.size),
            "truncated": bool(states.size > TABLE_ROWS),
        },
        "operator_stats": operator_stats(model, index, selected, lo, hi),
        "notes": _notes(model, index),
    }


def _notes(model: TraceModel, index: MemoryIndex) -> list[str]:
    notes = []
    for d in index.devices:
        name = memory_device_label(model, d.device_type, d.device_id, d.name)
        if d.allocated_source == "computed":
            notes.append(
                f"{name}: the trace has no Total Allocated; allocated is the running sum of"
                " Bytes since the recording started (a lower bound)"
            )
        if d.reserved is None:
            notes.append(f"{name}: the trace has no Total Reserved; reserved is unknown")
        if d.no_address:
            notes.append(
                f"{name}: {d.no_address} events have no address (PyTorch < 1.10);"
                " their allocations cannot be paired with frees"
            )
    return notes


class _Context:
    """Lookups shared by the device summaries of one request."""

    def __init__(self, model: TraceModel, index: MemoryIndex) -> None:
        self.model = model
        self.index = index

    def total_memory(self, d: DeviceSeries) -> int | None:
        gpu = gpu_of_memory_device(self.model, d.device_type, d.device_id)
        return None if gpu is None else device_identity(self.model, gpu).memory_bytes

    def label(self, d: DeviceSeries) -> str:
        """The device's name on every page (`GPU 0 · NVIDIA A100-SXM4-80GB`)."""
        return memory_device_label(self.model, d.device_type, d.device_id, d.name)


def _levels(d: DeviceSeries, lo: float, hi: float, values: np.ndarray) -> tuple[np.ndarray, int]:
    """Levels of `values` held in the range and the series position of the first one: the
    level carried in from before the range (when there is one), then one per event."""
    i0, i1 = window(d, lo, hi)
    first = i0 - 1 if i0 > 0 else i0
    return values[first:i1], first


def _device_view(ctx: _Context, d: DeviceSeries, lo: float, hi: float) -> DeviceView:
    i0, i1 = window(d, lo, hi)
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
    chain = model.names_of(_around(op_ranges(model), index, event))
    stack, source = _call_stack(model, row), "call_stack"
    if not stack:
        frames = python_frames_at(model, int(index.thread[event]), float(index.ts[event]))
        stack, source = model.names_of(frames), "python_function"
    return {
        "name": model.names[int(ev["name"][row])],
        "start_us": float(ev["ts"][row]),
        "duration_us": float(ev["dur"][row]),
        "ops": chain,
        "stack": stack,
        "stack_source": source if stack else None,
    }


def _around(ranges: HostRanges, index: MemoryIndex, event: int) -> np.ndarray:
    """Rows of the ranges of the event's thread containing its time (half-open, as its
    op), outermost first."""
    t, thread = index.ts[event : event + 1], index.thread[event : event + 1]
    _, chain = ranges.outwards(ranges.containing(thread, t), t)
    return ranges.rows[chain[::-1]]


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
