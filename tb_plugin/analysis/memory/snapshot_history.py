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
  an int) are skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

FREED = "free_completed"
RESERVE = ("segment_alloc", "segment_map")
RELEASE = ("segment_free", "segment_unmap")


@dataclass
class Allocation:
    size: int
    stream: int | None
    frames: Any


@dataclass
class Replay:
    """What the replay of one device's history found."""

    times: list[float | None] = field(default_factory=list)  # per level change
    active: list[int] = field(default_factory=list)  # device level after each change
    reserved: list[int] = field(default_factory=list)
    per_stream: dict[int | None, tuple[list[int], list[int]]] = field(default_factory=dict)
    baseline: dict[int, Allocation] = field(default_factory=dict)  # by address
    peak_index: int | None = None  # into times/active; None: no history
    at_peak: list[Allocation] = field(default_factory=list)
    ooms: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    entries: int = 0


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def time_of(entry: dict[str, Any]) -> float | None:
    """An entry's `time_us` (epoch microseconds); None when absent or not a number."""
    t = entry.get("time_us")
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        return float(t)
    return None


def _entries(trace: Any) -> list[dict[str, Any]]:
    return [e for e in trace if isinstance(e, dict)] if isinstance(trace, list) else []


def baseline(
    entries: list[dict[str, Any]], live_at_end: dict[int, Allocation]
) -> dict[int, Allocation]:
    """Allocations alive before the first entry, by address: freed without an alloc in
    the history, or alive at the end and never allocated in it."""
    seen: dict[int, Allocation] = {}
    before: dict[int, Allocation] = {}
    for e in entries:
        action, addr, size = e.get("action"), _int(e.get("addr")), _int(e.get("size"))
        if addr is None or size is None:
            continue
        if action == "alloc":
            seen[addr] = Allocation(size, _int(e.get("stream")), e.get("frames"))
        elif action == FREED and seen.pop(addr, None) is None and addr not in before:
            before[addr] = Allocation(size, _int(e.get("stream")), e.get("frames"))
    for addr, block in live_at_end.items():
        if addr not in seen and addr not in before:
            before[addr] = block
    return before


def replay(trace: Any, live_at_end: dict[int, Allocation], reserved_at_end: int) -> Replay:
    """The history replayed from its starting level (see the module's definitions)."""
    entries = _entries(trace)
    out = Replay(entries=len(trace) if isinstance(trace, list) else 0)
    out.skipped = out.entries - len(entries)
    out.baseline = baseline(entries, live_at_end)
    live = dict(out.baseline)
    level = sum(a.size for a in live.values())
    streams: dict[int | None, int] = {}
    for a in live.values():
        streams[a.stream] = streams.get(a.stream, 0) + a.size
    reserved = reserved_at_end - sum(_reserve_change(e) for e in entries)
    first = next((t for t in map(time_of, entries) if t is not None), None)
    _record(out, first, level, reserved)
    for s, value in streams.items():
        out.per_stream[s] = ([0], [value])
    for e in entries:
        change = _apply(out, e, live)
        if change is None:
            continue
        size, stream = change
        level += size
        reserved += _reserve_change(e)
        _record(out, time_of(e), level, reserved)
        if size:
            streams[stream] = streams.get(stream, 0) + size
            points = out.per_stream.setdefault(stream, ([], []))
            points[0].append(len(out.active) - 1)
            points[1].append(streams[stream])
    if out.active:
        out.peak_index = int(np.argmax(np.asarray(out.active, dtype=np.int64)))
    return out


def _reserve_change(e: dict[str, Any]) -> int:
    size = _int(e.get("size"))
    if size is None:
        return 0
    if e.get("action") in RESERVE:
        return size
    if e.get("action") in RELEASE:
        return -size
    return 0


def _apply(
    out: Replay, e: dict[str, Any], live: dict[int, Allocation]
) -> tuple[int, int | None] | None:
    """(change of the active level, its stream) by entry `e`: 0 for a reserved-only
    change, None when it changes neither."""
    action, addr, size = e.get("action"), _int(e.get("addr")), _int(e.get("size"))
    if action == "oom":
        out.ooms.append(e)
        return None
    if action in RESERVE or action in RELEASE:
        return (0, None) if size is not None else None
    if action not in ("alloc", FREED):
        return None  # free_requested, snapshot, unknown: no level change
    if addr is None or size is None:
        out.skipped += 1
        return None
    if action == "alloc":
        stream = _int(e.get("stream"))
        live[addr] = Allocation(size, stream, e.get("frames"))
        return size, stream
    block = live.pop(addr, None)
    if block is None:  # a second free of one address: the file is inconsistent
        out.skipped += 1
        return None
    return -block.size, block.stream


def _record(out: Replay, t: float | None, level: int, reserved: int) -> None:
    out.times.append(t)
    out.active.append(level)
    out.reserved.append(reserved)


def live_at(trace: Any, start: dict[int, Allocation], changes: int) -> list[Allocation]:
    """The allocations alive after the first `changes` level changes of the replay."""
    live = dict(start)
    done = 0
    scratch = Replay()
    for e in _entries(trace):
        if done >= changes:
            break
        if _apply(scratch, e, live) is not None:
            done += 1
    return list(live.values())
