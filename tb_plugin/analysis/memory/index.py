"""The memory events of a trace prepared once for the memory views.

`memory_index(model)` sorts the `[memory]` instants per device in time order, gives each
device its allocated and reserved levels after every event, attributes every event to
the innermost CPU op of its thread containing its timestamp, and pairs allocations with
frees by (device, address). The result is kept on the model (the views ask for ranges
and pages of it many times).

Levels: `series.py`, the rule the trace view's memory counters share.

Attribution, for properly nested ops of one thread sorted by (start, -end): the number
of ops open at time t is #(start <= t) - #(end <= t) = D; the innermost open op is the
last one started at or before t whose depth is D - 1 (siblings of one depth never
overlap). Half-open [start, end), as the old plugin did, so an event at the boundary of
two ops belongs to the one that starts. Ops that overlap without nesting (rounded
timestamps) are caught by a containment check and resolved by a short scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...store.categories import Kind
from ...store.model import TraceModel
from ..common import thread_keys
from ..rules import STEP_NAME
from .series import DeviceLevels, device_label, device_levels

__all__ = ["DeviceSeries", "MemoryIndex", "device_label", "memory_index"]


@dataclass
class ThreadOps:
    """The CPU ops of one thread sorted by (start, -end)."""

    rows: np.ndarray  # event rows
    starts: np.ndarray
    ends: np.ndarray
    names: np.ndarray  # name codes


@dataclass
class DeviceSeries(DeviceLevels):
    """A device's levels (the shared rule) with its allocations paired with their frees."""

    # One row per allocation, by pairing (memory-table indices, -1 when absent):
    alloc: np.ndarray
    free: np.ndarray
    size: np.ndarray
    no_address: int  # events that carry no address (cannot be paired)


@dataclass
class MemoryIndex:
    ts: np.ndarray  # per memory event
    thread: np.ndarray  # canonical thread key per memory event
    op: np.ndarray  # event row of the innermost CPU op containing the event, -1
    parent: np.ndarray  # event row of that op's parent op, -1
    devices: list[DeviceSeries]
    threads: dict[int, ThreadOps] = field(default_factory=dict)

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
    threads = _thread_ops(model, np.unique(thread))
    op, parent = _attribute(ts, thread, threads)
    devices = [_paired(mem, levels) for levels in device_levels(model)]
    return MemoryIndex(ts=ts, thread=thread, op=op, parent=parent, devices=devices, threads=threads)


def _paired(mem: dict[str, np.ndarray], levels: DeviceLevels) -> DeviceSeries:
    alloc, free, size, no_address = _pair(mem["addr"][levels.events], levels.nbytes, levels.events)
    return DeviceSeries(**vars(levels), alloc=alloc, free=free, size=size, no_address=no_address)


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


def _thread_ops(model: TraceModel, wanted: np.ndarray) -> dict[int, ThreadOps]:
    """CPU ops (ProfilerStep ranges aside, zero-length ones too) of the given threads."""
    ev = model.events
    rows = model.complete_rows(Kind.CPU_OP)
    if rows.size:
        step_code = np.fromiter(
            (STEP_NAME.match(n) is not None for n in model.names),
            dtype=bool,
            count=len(model.names),
        )
        dur = ev["dur"][rows]
        rows = rows[~step_code[ev["name"][rows]] & (dur > 0)]
    keys = thread_keys(model, rows) if rows.size else np.empty(0, dtype=np.int64)
    keep = np.isin(keys, wanted)
    rows, keys = rows[keep], keys[keep]
    out: dict[int, ThreadOps] = {}
    if rows.size == 0:
        return out
    starts = ev["ts"][rows]
    ends = starts + ev["dur"][rows]
    order = np.lexsort((-ends, starts, keys))
    rows, keys, starts, ends = rows[order], keys[order], starts[order], ends[order]
    bounds = np.flatnonzero(np.diff(keys)) + 1
    lo = np.concatenate([[0], bounds])
    hi = np.concatenate([bounds, [rows.size]])
    for a, b in zip(lo.tolist(), hi.tolist()):
        r = rows[a:b]
        out[int(keys[a])] = ThreadOps(r, starts[a:b], ends[a:b], ev["name"][r])
    return out


def name_spans(ops: ThreadOps) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per name code, the union of its ops' ranges on this thread as (codes, starts, ends):
    an event inside `aten::div` called by `aten::div` is one event of `aten::div`, not two."""
    if ops.rows.size == 0:
        empty = np.empty(0)
        return np.empty(0, dtype=ops.names.dtype), empty, empty
    order = np.lexsort((ops.starts, ops.names))
    codes, starts, ends = ops.names[order], ops.starts[order], ops.ends[order]
    # Running max of the ends within each name: on end ranks offset by the name's rank,
    # one global running max never crosses names.
    n = ends.size
    end_rank = np.searchsorted(np.sort(ends), ends).astype(np.int64)
    group = np.cumsum(np.concatenate([[0], codes[1:] != codes[:-1]])).astype(np.int64)
    running = np.maximum.accumulate(group * n + end_rank) - group * n
    reach = np.sort(ends)[running]  # the furthest end so far within the name
    opens = np.ones(n, dtype=bool)
    opens[1:] = (group[1:] != group[:-1]) | (starts[1:] > reach[:-1])
    first = np.flatnonzero(opens)
    last = np.concatenate([first[1:], [n]]) - 1
    return codes[first], starts[first], reach[last]


def _attribute(
    ts: np.ndarray, thread: np.ndarray, threads: dict[int, ThreadOps]
) -> tuple[np.ndarray, np.ndarray]:
    op = np.full(ts.size, -1, dtype=np.int64)
    parent = np.full(ts.size, -1, dtype=np.int64)
    for key, ops in threads.items():
        members = np.flatnonzero(thread == key)
        inner, outer = innermost(ops, ts[members])
        op[members] = np.where(inner >= 0, ops.rows[np.maximum(inner, 0)], -1)
        parent[members] = np.where(outer >= 0, ops.rows[np.maximum(outer, 0)], -1)
    return op, parent


def innermost(ops: ThreadOps, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in `ops`) of the innermost op containing each time and of its parent,
    -1 when none."""
    n = ops.starts.size
    s, e = ops.starts, ops.ends
    sorted_ends = np.sort(e)
    pos = np.arange(n, dtype=np.int64)
    depth = pos - np.searchsorted(sorted_ends, s, side="right")
    by_depth = np.argsort(depth * (n + 1) + pos, kind="stable")
    depth_keys = (depth * (n + 1) + pos)[by_depth]
    last = np.searchsorted(s, t, side="right") - 1
    open_count = (last + 1) - np.searchsorted(sorted_ends, t, side="right")

    def at_depth(d: np.ndarray) -> np.ndarray:
        found = np.full(t.size, -1, dtype=np.int64)
        ok = (d >= 0) & (last >= 0)
        if not ok.any():
            return found
        j = np.searchsorted(depth_keys, d[ok] * (n + 1) + last[ok], side="right") - 1
        cand = by_depth[np.maximum(j, 0)]
        good = (j >= 0) & (depth[cand] == d[ok]) & (s[cand] <= t[ok]) & (t[ok] < e[cand])
        found[np.flatnonzero(ok)[good]] = cand[good]
        return found

    inner = at_depth(open_count - 1)
    missed = np.flatnonzero((inner < 0) & (open_count > 0))
    for q in missed.tolist():  # improperly nested ops: the latest-started op containing t
        inner[q] = _scan_back(s, e, int(last[q]), float(t[q]))
    outer = at_depth(open_count - 2)
    check = np.flatnonzero(inner >= 0)
    bad = check[(outer[check] >= inner[check]) | ((outer[check] < 0) & (open_count[check] > 1))]
    for q in bad.tolist():
        outer[q] = _scan_back(s, e, int(inner[q]) - 1, float(t[q]))
    outer[inner < 0] = -1
    return inner, outer


def _scan_back(s: np.ndarray, e: np.ndarray, start: int, t: float, limit: int = 4096) -> int:
    i = start
    stop = max(start - limit, -1)
    while i > stop:
        if s[i] <= t < e[i]:
            return i
        i -= 1
    return -1
