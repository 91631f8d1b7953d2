"""A device's allocation history (`device_traces[d]` of a snapshot) replayed.

Definitions (torch's caching allocator, `torch/cuda/memory.py` `TraceEntry`):
- Memory is active from its `alloc` until its `free_completed` (between `free_requested`
  and `free_completed` it waits on other streams, still held: torch's `allocated` counts
  it until then). `segment_alloc`/`segment_free` (and `segment_map`/`segment_unmap` of
  expandable segments) change the reserved bytes.
- The history is a ring buffer (`max_entries`): memory allocated before its first entry
  is known from the end. It is what the snapshot's segments hold as active and no
  history entry allocated, plus what the history frees without having allocated it.
  With those as the starting level the replay ends exactly at the segments' active
  bytes.
- Levels are summed over the device and per stream; the peak is the first time the
  device's level is highest. Entries with a wrong shape (not a dict, a size that is not
  an int) are skipped and counted; so is a free of an address that is not live.

Vectorised: the entries become columns (`snapshot_columns`), and each free is matched
to the event before it at its address by a sort on (address, order). An address is live
from an `alloc` (or from the start, for the baseline) until the next event at it: a free
ends it, a second `alloc` replaces it (the file is inconsistent; the first one's bytes
stay counted, as a replay of the events one by one would leave them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .snapshot_columns import (
    ALLOC,
    FREE_COMPLETED,
    OOM,
    RELEASE,
    RESERVE,
    Columns,
    columns,
    time_of,
)

__all__ = ["Allocation", "Replay", "replay", "time_of"]


@dataclass(slots=True)  # a million of them alive at a big snapshot's peak
class Allocation:
    size: int
    stream: int | None
    frames: Any


@dataclass
class Replay:
    """What the replay of one device's history found."""

    times: np.ndarray = field(default_factory=lambda: np.zeros(0))  # NaN: no time
    active: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per change
    reserved: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # stream -> (rows into active, the stream's level there)
    per_stream: dict[int | None, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    baseline: dict[int, Allocation] = field(default_factory=dict)  # by address
    peak_index: int | None = None  # into times/active; None: no history
    at_peak: list[Allocation] = field(default_factory=list)
    ooms: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    entries: int = 0
    time_range: tuple[float, float] | None = None  # of every entry with a time


@dataclass
class _Matched:
    """The alloc and free_completed entries ordered by (address, entry)."""

    order: np.ndarray  # entry indexes
    is_alloc: np.ndarray
    first: np.ndarray  # first event at its address
    prev_alloc: np.ndarray  # the event before it at its address is an alloc
    next_at: np.ndarray  # entry index of the next event at its address; n: none


def _match(c: Columns) -> _Matched:
    ok = c.addr_valid & c.size_valid & ((c.action == ALLOC) | (c.action == FREE_COMPLETED))
    idx = np.flatnonzero(ok)
    order = idx[np.argsort(c.addr[idx], kind="stable")]
    addr = c.addr[order]
    is_alloc = c.action[order] == ALLOC
    boundary = addr[1:] != addr[:-1]
    first = np.r_[True, boundary] if order.size else np.zeros(0, bool)
    prev_alloc = np.r_[False, is_alloc[:-1]] & ~first if order.size else first
    next_at = np.r_[order[1:], 0] if order.size else order
    if order.size:
        next_at[np.r_[boundary, True]] = c.n
    return _Matched(order, is_alloc, first, prev_alloc, next_at)


def _baseline(
    c: Columns, m: _Matched, live_at_end: dict[int, Allocation]
) -> tuple[dict[int, Allocation], dict[int, int]]:
    """Allocations alive before the first entry, by address (freed without an alloc
    before it, or alive at the end with no alloc as the last event at the address), and
    the entry index each one ends at (the first event at its address; n: never)."""
    frees = np.flatnonzero(~m.is_alloc & ~m.prev_alloc)  # the free has nothing to free
    _, first_of_addr = np.unique(c.addr[m.order[frees]], return_index=True)
    picked = np.sort(m.order[frees[first_of_addr]])
    last = np.r_[c.addr[m.order][1:] != c.addr[m.order][:-1], True] if m.order.size else m.first
    seen = set(c.addr[m.order[last & m.is_alloc]].tolist())
    firsts = m.order[m.first]
    start = dict(zip(c.addr[firsts].tolist(), firsts.tolist()))
    before: dict[int, Allocation] = {}
    for i in picked.tolist():
        before[int(c.addr[i])] = Allocation(int(c.size[i]), c.stream_of(i), c.frames(i))
    for addr, block in live_at_end.items():
        if addr not in seen and addr not in before:
            before[addr] = block
    return before, {a: start.get(a, c.n) for a in before}


def replay(trace: Any, live_at_end: dict[int, Allocation], reserved_at_end: int) -> Replay:
    """The history replayed from its starting level (see the module's definitions)."""
    c = columns(trace)
    out = Replay(entries=c.total, skipped=c.total - c.n)
    m = _match(c)
    out.baseline, ends = _baseline(c, m, live_at_end)
    af = (c.action == ALLOC) | (c.action == FREE_COMPLETED)
    bad_free = ~m.is_alloc & ~m.prev_alloc & ~m.first
    out.skipped += int(np.count_nonzero(af & ~(c.addr_valid & c.size_valid)))
    out.skipped += int(np.count_nonzero(bad_free))
    out.ooms = [c.entry(i) for i in np.flatnonzero(c.action == OOM).tolist()]
    reserving = np.isin(c.action, RESERVE) & c.size_valid
    releasing = np.isin(c.action, RELEASE) & c.size_valid
    reserve_change = np.where(reserving, c.size, 0) - np.where(releasing, c.size, 0)
    # Each matched event's change: +size for an alloc; a free takes back what the event
    # before it at its address allocated, or its own size when it frees the baseline.
    delta = np.zeros(c.n, np.int64)
    stream = np.full(c.n, c.NO_STREAM, np.int64)
    changes = reserving | releasing
    o = m.order
    delta[o[m.is_alloc]] = c.size[o[m.is_alloc]]
    stream[o[m.is_alloc]] = c.stream[o[m.is_alloc]]
    from_alloc = np.flatnonzero(~m.is_alloc & m.prev_alloc)
    delta[o[from_alloc]] = -c.size[o[from_alloc - 1]]
    stream[o[from_alloc]] = c.stream[o[from_alloc - 1]]
    from_start = o[~m.is_alloc & m.first]
    delta[from_start] = -c.size[from_start]
    stream[from_start] = c.stream[from_start]
    changes[o[~bad_free]] = True
    rows = np.flatnonzero(changes)
    level = sum(a.size for a in out.baseline.values())
    reserved = reserved_at_end - int(reserve_change.sum())
    known = np.flatnonzero(~np.isnan(c.time))
    if known.size:
        out.time_range = (float(c.time[known].min()), float(c.time[known].max()))
    out.times = np.r_[c.time[known[0]] if known.size else np.nan, c.time[rows]]
    out.active = level + np.r_[0, np.cumsum(delta[rows])]
    out.reserved = reserved + np.r_[0, np.cumsum(reserve_change[rows])]
    out.per_stream = _per_stream(c, out.baseline, delta[rows], stream[rows])
    if out.active.size:
        out.peak_index = int(np.argmax(out.active))
        peak_entry = -1 if out.peak_index == 0 else int(rows[out.peak_index - 1])
        out.at_peak = _live_after(c, m, out.baseline, ends, peak_entry)
    return out


def _per_stream(
    c: Columns, baseline: dict[int, Allocation], delta: np.ndarray, stream: np.ndarray
) -> dict[int | None, tuple[np.ndarray, np.ndarray]]:
    start: dict[int | None, int] = {}
    for a in baseline.values():
        start[a.stream] = start.get(a.stream, 0) + a.size
    out = {s: (np.zeros(1, np.int64), np.array([v], np.int64)) for s, v in start.items()}
    moved = delta != 0
    for code in np.unique(stream[moved]).tolist():
        key = None if code == c.NO_STREAM else int(code)
        at = np.flatnonzero(moved & (stream == code))
        values = start.get(key, 0) + np.cumsum(delta[at])
        rows = at + 1  # row 0 is the starting level
        if key in out:
            out[key] = (np.r_[out[key][0], rows], np.r_[out[key][1], values])
        else:
            out[key] = (rows, values)
    return out


def _live_after(
    c: Columns, m: _Matched, baseline: dict[int, Allocation], ends: dict[int, int], entry: int
) -> list[Allocation]:
    """The allocations alive just after entry index `entry` (-1: before the first)."""
    live = [a for addr, a in baseline.items() if ends[addr] > entry]
    alive = m.is_alloc & (m.order <= entry) & (m.next_at > entry)
    for i in np.sort(m.order[alive]).tolist():
        live.append(Allocation(int(c.size[i]), c.stream_of(i), c.frames(i)))
    return live
