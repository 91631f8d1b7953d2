"""The vectorised history replay (`snapshot_history.replay`) against a reference that
replays the entries one at a time, as the module's docstring defines it, on random
histories that include every inconsistency a damaged file can hold: frees of addresses
never allocated, double frees, a second alloc of a live address, entries with missing or
mistyped fields, entries that are not dicts."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from kinetoscope.analysis.memory.snapshot_history import Allocation, replay

RESERVE = ("segment_alloc", "segment_map")
RELEASE = ("segment_free", "segment_unmap")


def _int(v: Any) -> int | None:
    return v if type(v) is int else None


def _time(e: dict) -> float:
    t = e.get("time_us")
    return float(t) if type(t) in (int, float) else float("nan")


def reference(trace: list, live_at_end: dict[int, Allocation], reserved_at_end: int) -> dict:
    """One entry at a time: a dict of live allocations by address."""
    entries = [e for e in trace if isinstance(e, dict)]
    seen: dict[int, Allocation] = {}
    live: dict[int, Allocation] = {}
    for e in entries:  # the baseline: what the history frees without allocating it
        addr, size = _int(e.get("addr")), _int(e.get("size"))
        if addr is None or size is None:
            continue
        if e.get("action") == "alloc":
            seen[addr] = Allocation(size, _int(e.get("stream")), e.get("frames"))
        elif e.get("action") == "free_completed" and seen.pop(addr, None) is None:
            live.setdefault(addr, Allocation(size, _int(e.get("stream")), e.get("frames")))
    for addr, block in live_at_end.items():
        if addr not in seen:
            live.setdefault(addr, block)
    level = sum(a.size for a in live.values())

    def reserve(e: dict) -> int:
        size = _int(e.get("size")) or 0
        return size if e.get("action") in RESERVE else -size if e.get("action") in RELEASE else 0

    reserved = reserved_at_end - sum(map(reserve, entries))
    levels, snapshots, skipped = [level], [list(live.values())], len(trace) - len(entries)
    for e in entries:
        action, addr, size = e.get("action"), _int(e.get("addr")), _int(e.get("size"))
        if action in RESERVE + RELEASE and size is not None:
            reserved += reserve(e)
        elif action in ("alloc", "free_completed") and (addr is None or size is None):
            skipped += 1
            continue
        elif action == "alloc":
            live[addr] = Allocation(size, _int(e.get("stream")), e.get("frames"))
            level += size
        elif action == "free_completed":
            if addr not in live:
                skipped += 1
                continue
            level -= live.pop(addr).size
        else:
            continue
        levels.append(level)
        snapshots.append(list(live.values()))
    peak = int(np.argmax(levels))
    return {"active": levels, "reserved": reserved, "skipped": skipped, "at_peak": snapshots[peak]}


def _history(r: random.Random) -> list:
    addrs = [r.randrange(1, 12) * 512 for _ in range(8)]
    actions = ["alloc", "free_completed", "free_requested", "segment_alloc", "segment_free"]
    actions += ["oom", "segment_map", "segment_unmap", "snapshot", "other"]
    trace: list = []
    for i in range(r.randrange(0, 60)):
        entry = {
            "action": r.choice(actions),
            "addr": r.choice(addrs),
            "size": r.choice([0, 512, 1024, 4096]),
            "stream": r.choice([0, 3, 7, None]),
            "time_us": r.choice([1_000 + i, None]),
            "frames": [{"filename": "m.py", "line": r.randrange(3), "name": "f"}],
        }
        if r.random() < 0.1:
            entry[r.choice(list(entry))] = r.choice([True, "x", -5, 1.5, None, [1]])
        trace.append(entry if r.random() > 0.03 else 5)
    return trace


def _held(live: list[Allocation]) -> list[tuple[int, int]]:
    return sorted((a.size, -1 if a.stream is None else a.stream) for a in live)


def test_replay_equals_one_entry_at_a_time_on_random_damaged_histories() -> None:
    r = random.Random(34)
    for _ in range(1500):
        trace = _history(r)
        live_at_end = {r.randrange(1, 12) * 512: Allocation(512, 0, []) for _ in range(3)}
        got, want = replay(trace, live_at_end, 1 << 20), reference(trace, live_at_end, 1 << 20)
        assert got.active.tolist() == want["active"]
        assert int(got.reserved[-1]) == want["reserved"]
        assert got.skipped == want["skipped"]
        assert _held(got.at_peak) == _held(want["at_peak"])
        times = [t for t in (_time(e) for e in trace if isinstance(e, dict)) if t == t]
        assert got.time_range == ((min(times), max(times)) if times else None)


def test_per_stream_levels_end_at_each_streams_live_bytes() -> None:
    r = random.Random(7)
    for _ in range(300):
        trace = _history(r)
        got = replay(trace, {}, 0)
        want = reference(trace, {}, 0)
        assert got.active.tolist() == want["active"]
        for rows, values in got.per_stream.values():
            assert (np.diff(rows) > 0).all() and rows.size == values.size
        final = sum(int(v[-1]) for _, v in got.per_stream.values())
        assert final == want["active"][-1]
