"""The host-range index (one enclosing-op lookup for the op tree and memory attribution)
against the definitions written out by brute force, on random ranges with ties, zero
lengths and overlaps that do not nest."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from builders import TraceBuilder
from kinetoscope.analysis.host_ranges import HostRanges, host_ranges, op_ranges
from kinetoscope.analysis.memory.index import memory_index
from kinetoscope.analysis.optree import op_tree

THREADS = (100, 101)


def random_trace(seed: int) -> TraceBuilder:
    rng = random.Random(seed)
    b = TraceBuilder()
    for _ in range(60):
        start = rng.randrange(0, 50)
        b.op(
            f"op{rng.randrange(4)}",
            start,
            rng.choice([0, 1, 2, 5, 10, 30]),
            tid=rng.choice(THREADS),
        )
    for _ in range(10):
        b.annotation("note", rng.randrange(0, 50), rng.randrange(0, 20), tid=rng.choice(THREADS))
    b.step(1, 0, 60)
    for _ in range(30):
        b.memory(rng.randrange(0, 60), 8, 1, 8, tid=rng.choice(THREADS))
    return b


def latest(ranges: HostRanges, ok: np.ndarray) -> int:
    found = np.flatnonzero(ok)
    return int(found[-1]) if found.size else -1


def brute_parent(r: HostRanges, i: int) -> int:
    target = r.end[i] if r.end[i] > r.start[i] else np.nextafter(r.end[i], np.inf)
    before = np.arange(len(r)) < i
    return latest(r, before & (r.thread == r.thread[i]) & (r.end >= target))


def brute_enclosing(r: HostRanges, thread: int, t0: float, t1: float) -> int:
    target = t1 if t1 > t0 else np.nextafter(t1, np.inf)
    sorts_before = (r.start < t0) | ((r.start == t0) & (r.end >= t1))
    return latest(r, (r.thread == thread) & sorts_before & (r.end >= target))


def brute_containing(r: HostRanges, thread: int, t: float, before: int | None = None) -> int:
    ok = (r.thread == thread) & (r.start <= t) & (t < r.end)
    if before is not None:
        ok &= np.arange(len(r)) < before
    return latest(r, ok)


def test_lookups_match_their_definitions(tmp_path: Path) -> None:
    for seed in range(8):
        model = random_trace(seed).model(tmp_path, f"w{seed}.pt.trace.json")
        for ranges in (host_ranges(model), op_ranges(model)):
            assert [brute_parent(ranges, i) for i in range(len(ranges))] == ranges.parent.tolist()
            keys = np.unique(ranges.thread)
            rng = np.random.default_rng(seed)
            thread = rng.choice(keys, 200)
            t0 = rng.integers(0, 60, 200).astype(np.float64)
            t1 = t0 + rng.choice([0, 1, 3, 20], 200)
            expected = [brute_enclosing(ranges, k, a, b) for k, a, b in zip(thread, t0, t1)]
            assert ranges.enclosing(thread, t0, t1).tolist() == expected
            inner = ranges.containing(thread, t0)
            assert inner.tolist() == [brute_containing(ranges, k, a) for k, a in zip(thread, t0)]
            outer = ranges.containing_before(inner, t0)
            expected_outer = [
                brute_containing(ranges, k, a, before=int(p)) if p >= 0 else -1
                for k, a, p in zip(thread, t0, inner)
            ]
            assert outer.tolist() == expected_outer


def test_op_tree_and_memory_attribution_read_the_index(tmp_path: Path) -> None:
    """The op tree's parents are the index's; a memory event's op is the innermost
    positive-length cpu_op (ProfilerStep aside) containing it, its parent the next one out."""
    model = random_trace(3).model(tmp_path)
    tree, ranges = op_tree(model), host_ranges(model)
    assert tree.rows.tolist() == ranges.rows.tolist()
    index, ops = memory_index(model), op_ranges(model)
    inner = ops.containing(index.thread, index.ts)
    assert index.op.tolist() == np.where(inner >= 0, ops.rows[inner], -1).tolist()
    names = {model.names[int(c)] for c in model.events["name"][index.op[index.op >= 0]]}
    assert "ProfilerStep#1" not in names and "note" not in names


def test_memory_event_in_ops_that_overlap_without_nesting(tmp_path: Path) -> None:
    """Drift fix: among ops that overlap without nesting (a random trace's thread), the
    event at 50 belongs to the latest-started op containing it, [48, 58), as the memory
    index's rule says; its depth count used to pick [46, 76), and its parent [43, 53).
    The parent op is now the latest-started op around that one: [46, 76)."""
    ops = [(0, 30), (2, 30), (5, 30), (10, 10), (14, 5), (14, 30), (20, 10), (30, 2), (32, 5),
           (33, 1), (36, 30), (37, 5), (39, 5), (43, 10), (44, 1), (45, 5), (46, 30), (48, 2),
           (48, 10), (49, 1)]  # fmt: skip
    b = TraceBuilder()
    for start, dur in ops:
        b.op(f"[{start}, {start + dur})", start, dur)
    b.memory(50, 8, 1, 8)
    model = b.model(tmp_path)
    index = memory_index(model)
    op, parent = (model.names[int(model.events["name"][r])] for r in (index.op[0], index.parent[0]))
    assert (op, parent) == ("[48, 58)", "[46, 76)")
