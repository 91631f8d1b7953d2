"""The memory events of a trace prepared once for the memory views.

`memory_index(model)` sorts the `[memory]` instants per device in time order, gives each
device its allocated and reserved levels after every event, attributes every event to
the innermost CPU op of its thread containing its timestamp, and pairs allocations with
frees by (device, address). The result is kept on the model (the views ask for ranges
and pages of it many times).

Levels: `series.py`, the rule the trace view's memory counters share.

Attribution: an event belongs to the innermost CPU op of its thread (ProfilerStep ranges
and zero-length ops aside) containing its timestamp, half-open [start, end) as the old
plugin did, so an event at the boundary of two ops belongs to the one that starts; its
parent op is the op around that one containing it too. Both by the host-range index
(analysis/core/host_ranges.py: `op_ranges`), which also resolves ops that overlap without
nesting (rounded timestamps).
"""

from __future__ import annotations

from functools import cached_property

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import _nesting, distinct, thread_keys
from ..core.host_ranges import HostRanges, op_ranges
from .series import DeviceLevels, device_label, device_levels

__all__ = ["DeviceSeries", "MemoryIndex", "device_label", "memory_index"]


class ThreadOps(msgspec.Struct, dict=True):
    """The CPU ops of one thread sorted by (start, -end)."""

    rows: np.ndarray  # event rows
    starts: np.ndarray
    ends: np.ndarray
    names: np.ndarray  # name codes

    @cached_property
    def name_spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`name_spans` of these ops, once (each device's operator table reads them)."""
        return name_spans(self)


class DeviceSeries(DeviceLevels):
    """A device's levels (the shared rule) with its allocations paired with their frees."""

    # One row per allocation, by pairing (memory-table indices, -1 when absent):
    alloc: np.ndarray
    free: np.ndarray
    size: np.ndarray
    no_address: int  # events that carry no address (cannot be paired)


class MemoryIndex(msgspec.Struct):
    ts: np.ndarray  # per memory event
    thread: np.ndarray  # canonical thread key per memory event
    op: np.ndarray  # event row of the innermost CPU op containing the event, -1
    parent: np.ndarray  # event row of that op's parent op, -1
    devices: list[DeviceSeries]
    threads: dict[int, ThreadOps] = msgspec.field(default_factory=dict)

    def device(self, name: str) -> DeviceSeries | None:
        for d in self.devices:
            if d.name == name:
                return d
        return None

    @property
    def default_device(self) -> str | None:
        for d in self.devices:
            if d.is_gpu:
                return d.name
        return self.devices[0].name if self.devices else None


def memory_index(model: TraceModel) -> MemoryIndex:
    return model.derived("_memory_index", _build)


def _build(model: TraceModel) -> MemoryIndex:
    mem = model.memory
    rows = mem["row"]
    ev = model.events
    ts = ev["ts"][rows]
    thread = thread_keys(model, rows)
    ranges = op_ranges(model)
    threads = _thread_ops(model, ranges, set(distinct(thread).tolist()))
    op, parent = _attribute(ranges, ts, thread)
    devices = [_paired(mem, levels) for levels in device_levels(model)]
    return MemoryIndex(ts=ts, thread=thread, op=op, parent=parent, devices=devices, threads=threads)


def _paired(mem: dict[str, np.ndarray], levels: DeviceLevels) -> DeviceSeries:
    alloc, free, size, no_address = _pair(mem["addr"][levels.events], levels.nbytes, levels.events)
    return DeviceSeries(
        **msgspec.structs.asdict(levels), alloc=alloc, free=free, size=size, no_address=no_address
    )


def _pair(
    addr: np.ndarray, nbytes: np.ndarray, events: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Allocation rows of one device's time-ordered events: a free pairs with the event
    just before it at the same address when that is an allocation. An allocation followed
    by another allocation at its address was never freed (as far as the trace says); a
    free with no allocation before it freed memory allocated before the recording."""
    has_addr = addr != -1
    usable = has_addr & (nbytes != 0)
    no_address = int((~has_addr & (nbytes != 0)).sum())
    pos = np.flatnonzero(usable)
    empty = np.empty(0, dtype=np.int64)
    if pos.size == 0:
        return empty, empty, np.empty(0), no_address
    pos = pos[np.argsort(addr[pos], kind="stable")]  # by address, time order within
    a = addr[pos]
    is_alloc = nbytes[pos] > 0
    same = np.zeros(pos.size, dtype=bool)
    same[1:] = a[1:] == a[:-1]
    closes = np.zeros(pos.size, dtype=bool)
    closes[1:] = same[1:] & ~is_alloc[1:] & is_alloc[:-1]
    opened = np.zeros(pos.size, dtype=bool)
    opened[:-1] = closes[1:]
    paired_alloc = pos[opened]
    paired_free = pos[np.flatnonzero(opened) + 1]
    lone_alloc = pos[is_alloc & ~opened]
    lone_free = pos[~is_alloc & ~closes]
    alloc_pos = np.concatenate([paired_alloc, lone_alloc, np.full(lone_free.size, -1)])
    free_pos = np.concatenate([paired_free, np.full(lone_alloc.size, -1), lone_free])
    size = np.where(
        alloc_pos >= 0, nbytes[np.maximum(alloc_pos, 0)], -nbytes[np.maximum(free_pos, 0)]
    )
    alloc = np.where(alloc_pos >= 0, events[np.maximum(alloc_pos, 0)], -1)
    free = np.where(free_pos >= 0, events[np.maximum(free_pos, 0)], -1)
    return alloc.astype(np.int64), free.astype(np.int64), np.abs(size), no_address


def _thread_ops(model: TraceModel, ranges: HostRanges, wanted: set[int]) -> dict[int, ThreadOps]:
    """The op ranges of the given threads, per thread."""
    out: dict[int, ThreadOps] = {}
    for k, key in enumerate(ranges.threads.tolist()):
        if key in wanted:
            lo, hi = int(ranges.thread_lo[k]), int(ranges.thread_hi[k])
            rows = ranges.rows[lo:hi]
            out[key] = ThreadOps(
                rows, ranges.start[lo:hi], ranges.end[lo:hi], model.events["name"][rows]
            )
    return out


def name_spans(ops: ThreadOps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per name code, the union of its ops' ranges on this thread as (codes, starts, ends):
    an event inside `aten::div` called by `aten::div` is one event of `aten::div`, not two."""
    if ops.rows.size == 0:
        empty = np.empty(0)
        return np.empty(0, dtype=ops.names.dtype), empty, empty
    compiled = _name_spans_compiled(ops.names, ops.starts, ops.ends)
    return compiled if compiled is not None else _name_spans_passes(ops)


def _name_spans_compiled(
    names: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """`name_spans` in two passes in order (`_nesting.c`: the spans counted per name, then
    written): no sort and no array per op beside the answer (the numpy passes' sorts and
    ranks were the Memory view's peak). None where not built, or for codes it does not
    take (numpy's passes then)."""
    if _nesting is None or names.dtype not in (np.int16, np.int32) or starts.dtype != np.float64:
        return None
    if ends.dtype != np.float64 or names.size == 0:
        return None
    names = np.ascontiguousarray(names)
    starts, ends = np.ascontiguousarray(starts), np.ascontiguousarray(ends)
    low, high = int(names.min()), int(names.max())
    if low < 0:
        return None
    counts = np.zeros(high + 1, dtype=np.int64)
    size, none = names.dtype.itemsize, np.empty(0)
    total = _nesting.name_spans(
        names, starts, ends, size, counts, none[:0].view(np.int16), none, none
    )
    if total < 0:
        return None
    codes = np.empty(total, dtype=names.dtype)
    span_starts, span_ends = np.empty(total), np.empty(total)
    if _nesting.name_spans(names, starts, ends, size, counts, codes, span_starts, span_ends) < 0:
        return None
    return codes, span_starts, span_ends


def _name_spans_passes(ops: ThreadOps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`name_spans` in numpy passes (a build without a compiler)."""
    # By name, then start: the ops are in (start, -end) order already, so a stable sort by
    # name alone is that order (by radix, when the codes fit 16 bits).
    names = (
        ops.names.astype(np.uint16) if len(ops.names) and ops.names.max() < 1 << 16 else ops.names
    )
    order = np.argsort(names, kind="stable")
    codes, starts, ends = ops.names[order], ops.starts[order], ops.ends[order]
    del names, order
    # Running max of the ends within each name: on end ranks offset by the name's rank,
    # one global running max never crosses names (equal ends may rank apart: same value).
    # Each step in place, its inputs let go of once read: the memory view peaked here.
    n = ends.size
    by_end = np.argsort(ends, kind="stable")
    sorted_ends = ends[by_end]
    del ends
    running = np.empty(n, dtype=np.int64)  # the end ranks, then their running max
    running[by_end] = np.arange(n)
    del by_end
    # The name's rank times n, in int64 (up to n squared): the offset itself, and names
    # differ where it does.
    offset = np.zeros(n, dtype=np.int64)
    offset[1:] = codes[1:] != codes[:-1]
    np.cumsum(offset, out=offset)
    offset *= n
    running += offset
    np.maximum.accumulate(running, out=running)
    running -= offset
    reach = sorted_ends[running]  # the furthest end so far within the name
    del running, sorted_ends
    opens = np.ones(n, dtype=bool)
    opens[1:] = (offset[1:] != offset[:-1]) | (starts[1:] > reach[:-1])
    del offset
    first = np.flatnonzero(opens)
    last = np.concatenate([first[1:], [n]]) - 1
    return codes[first], starts[first], reach[last]


def _attribute(
    ranges: HostRanges, ts: np.ndarray, thread: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Event rows of the innermost op containing each memory event (half-open) and of the
    op around that one containing it too; -1 when none."""
    if len(ranges) == 0:
        return np.full(ts.size, -1, dtype=np.int64), np.full(ts.size, -1, dtype=np.int64)
    inner = ranges.containing(thread, ts)
    outer = ranges.containing_before(inner, ts)
    outer[inner < 0] = -1
    op = np.where(inner >= 0, ranges.rows[np.maximum(inner, 0)], -1)
    parent = np.where(outer >= 0, ranges.rows[np.maximum(outer, 0)], -1)
    return op, parent
