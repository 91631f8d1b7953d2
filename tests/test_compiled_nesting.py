"""The compiled helpers of nested ranges (`analysis/core/_nesting.c`) against numpy's
passes and the definitions written out by brute force: the parent search
(`tree_arrays.previous_reaching`), on random ranges that nest, overlap, tie and have zero
length, with and without the first candidates an index of a superset hands on (the op
ranges' search); an index's parents (`host_ranges._index_sorted`), the walk up them
(`HostRanges._walk`) and the search of a thread's starts
(`HostRanges._start_bound`, `tree_arrays.sorted_search`); the union length per group
(`tree_arrays.segment_union_length`), the merge of a union of intervals
(`intervals.IntervalUnion`), bit for bit; the thread key of each row
(`common.thread_keys`), times rounded to whole nanoseconds (`host_ranges.snap_ns`), the
union of each name's ranges on a thread (the Memory view's `index.name_spans`), the union
of each op-tree node's children (`optree.children_union_length`) and a tree's depths
(`tree_arrays.depths`)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from corpus import corpus_model, corpus_path
from kinetoscope.analysis.core import (
    common,
    host_ranges,
    intervals,
    optree,
    tree_arrays,
    trusted_rows,
)
from kinetoscope.analysis.core.host_ranges import HostRanges
from kinetoscope.analysis.core.intervals import IntervalUnion
from kinetoscope.analysis.core.tree_arrays import (
    next_up,
    previous_reaching,
    segment_union_length,
    sorted_search,
)
from kinetoscope.analysis.memory import index as memory_index
from kinetoscope.analysis.memory import operator_stats
from kinetoscope.ingest.build import build_model


def brute_force(values: np.ndarray, targets: np.ndarray, start: np.ndarray | None) -> np.ndarray:
    out = np.full(values.size, -1, dtype=np.int64)
    for i in range(values.size):
        j = i - 1 if start is None else int(start[i])
        while j >= 0 and values[j] < targets[i]:
            j -= 1
        out[i] = j
    return out


def ranges(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Ends of ranges sorted by (start, longer first) as a parent search reads them: the
    values, and the targets (the end, nudged past it where the range has zero length)."""
    rng = np.random.default_rng(seed)
    start = np.sort(rng.integers(0, 60, n)).astype(np.float64)
    end = start + rng.choice([0.0, 0.5, 1.0, 3.0, 10.0, 40.0], n)
    order = np.lexsort((-end, start))
    start, end = start[order], end[order]
    targets = np.where(end > start, end, next_up(end))
    return end, targets


@pytest.mark.parametrize("seed", range(40))
def test_both_ways_give_the_definition(seed: int) -> None:
    values, targets = ranges(seed, 1 + seed * 7)
    expected = brute_force(values, targets, None)
    assert np.array_equal(previous_reaching(values, targets), expected)
    assert np.array_equal(tree_arrays._previous_reaching_passes(values, targets, None), expected)


@pytest.mark.parametrize("seed", range(20))
def test_first_candidates_from_a_superset(seed: int) -> None:
    """Every other range dropped: each one's search starts at the last kept range at or
    before its parent among all of them (nothing between reaches it)."""
    values, targets = ranges(seed, 5 + seed * 11)
    parent = brute_force(values, targets, None)
    keep = np.arange(values.size) % 2 == 0
    last_kept = np.cumsum(keep) - 1
    start = np.where(parent >= 0, last_kept[np.maximum(parent, 0)], -1)[keep]
    expected = brute_force(values[keep], targets[keep], None)
    assert np.array_equal(previous_reaching(values[keep], targets[keep], start), expected)
    passes = tree_arrays._previous_reaching_passes(values[keep], targets[keep], start)
    assert np.array_equal(passes, expected)


def _random_index(rng: np.random.Generator, n: int) -> HostRanges:
    """An index of one thread's random ranges, built as the views build theirs."""
    start = np.sort(rng.integers(0, 50, n)).astype(np.float64)
    end = start + rng.choice([0.0, 1.0, 2.0, 5.0, 20.0], n)
    order = np.lexsort((-end, start))
    start, end = start[order], end[order]
    return host_ranges._index_sorted(np.arange(n), np.zeros(n, np.int64), start, end, origin=0.0)


@pytest.mark.parametrize("strict", [False, True])
def test_walk_up_the_parents_both_ways(monkeypatch: pytest.MonkeyPatch, strict: bool) -> None:
    """Per query, the first range up the parents from its candidate whose end reaches
    (or passes) the target: compiled, numpy's passes, and the walk written out."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        index = _random_index(rng, 1 + trial * 3)
        candidate = rng.integers(-1, len(index), 50).astype(np.int64)
        target = rng.integers(0, 80, 50).astype(np.float64)
        target[::7] = np.nan  # a NaN time reaches no end: the walk stops at once
        want = []
        for c, t in zip(candidate.tolist(), target.tolist()):
            while c >= 0 and (index.end[c] <= t if strict else index.end[c] < t):
                c = int(index.parent[c])
            want.append(c)
        assert index._walk(candidate, target, strict).tolist() == want
        with monkeypatch.context() as m:
            m.setattr(host_ranges, "_nesting", None)
            assert index._walk(candidate, target, strict).tolist() == want


def test_union_lengths_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled sums equal numpy's to the bit (the same float operations in the same
    order), on times of 2024-on traces (microsecond floats with fractions) and groups
    that repeat apart; and the definition to rounding."""
    rng = np.random.default_rng(9)
    for trial in range(200):
        n = int(rng.integers(1, 80))
        n_groups = int(rng.integers(1, 6))
        group = np.sort(rng.integers(0, n_groups, n))
        if trial % 5 == 0:  # a group's ranges in two runs apart
            group[: n // 3] = n_groups - 1
        starts = 1.7e15 + np.round(rng.random(n) * 1e4, 3)
        ends = starts + np.round(rng.random(n) * rng.choice([1.0, 100.0, 3e3]), 3)
        order = np.lexsort((starts, group)) if trial % 5 else np.arange(n)
        group, starts, ends = group[order], starts[order], ends[order]
        got = segment_union_length(group, starts, ends, n_groups)
        with monkeypatch.context() as m:
            m.setattr(tree_arrays, "_nesting", None)
            passes = segment_union_length(group, starts, ends, n_groups)
        assert got.view(np.int64).tolist() == passes.view(np.int64).tolist()
        if trial % 5:
            for g in range(n_groups):
                mine = sorted(zip(starts[group == g].tolist(), ends[group == g].tolist()))
                total, reach = 0.0, -np.inf
                for a, b in mine:
                    total += max(0.0, b - max(a, reach))
                    reach = max(reach, b)
                assert got[g] == pytest.approx(total, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("side", ["left", "right"])
def test_start_bounds_both_ways(monkeypatch: pytest.MonkeyPatch, side: str) -> None:
    """Per query, its thread's ranges and the position after the starts before its time
    (or at it): compiled, and numpy's search thread by thread, on threads with equal
    starts, queries of threads with no range and NaN times, in time order or not."""
    rng = np.random.default_rng(13)
    for trial in range(120):
        n = int(rng.integers(1, 60))
        thread = np.sort(rng.integers(0, 3, n)) * 2  # odd keys: threads without ranges
        start = rng.integers(0, 30, n).astype(np.float64)
        order = np.lexsort((start, thread))
        index = host_ranges._index_sorted(
            np.arange(n), thread[order], start[order], start[order] + 1.0, origin=0.0
        )
        queries = rng.integers(0, 6, 40).astype(np.int64)
        t = rng.integers(-2, 33, 40).astype(np.float64)
        t[::9] = np.nan
        if trial % 2:  # in time order per thread, as the views ask (the search's shortcut)
            by_time = np.lexsort((t, queries))
            queries, t = queries[by_time], t[by_time]
        got = index._start_bound(queries, t, side)  # type: ignore[arg-type]
        with monkeypatch.context() as m:
            m.setattr(host_ranges, "_nesting", None)
            want = index._start_bound(queries, t, side)  # type: ignore[arg-type]
        for a, b in zip(got, want):
            assert a.tolist() == b.tolist()


def test_index_parents_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """An index's parents, compiled and by numpy's sequence of sentinels, on threads of
    nested, overlapping and zero-length ranges; and the op ranges' way, every other range
    kept, each search starting at the last kept range at or before its parent."""
    rng = np.random.default_rng(17)
    for trial in range(80):
        n = 1 + trial * 2
        thread = np.sort(rng.integers(0, 3, n))
        start = rng.integers(0, 40, n).astype(np.float64)
        end = start + rng.choice([0.0, 0.5, 2.0, 6.0, 30.0], n)
        order = np.lexsort((-end, start, thread))
        args = (np.arange(n), thread[order], start[order], end[order])
        got = host_ranges._index_sorted(*args)
        with monkeypatch.context() as m:
            m.setattr(host_ranges, "_nesting", None)
            want = host_ranges._index_sorted(*args)
        assert got.parent.tolist() == want.parent.tolist()
        assert got.thread_lo.tolist() == want.thread_lo.tolist()
        keep = np.arange(n) % 2 == 0
        last_kept = np.cumsum(keep) - 1
        at = np.where(got.parent >= 0, last_kept[np.maximum(got.parent, 0)], -1)[keep]
        kept = tuple(a[keep] for a in args)
        got_kept = host_ranges._index_sorted(*kept, start_at=at)
        with monkeypatch.context() as m:
            m.setattr(host_ranges, "_nesting", None)
            want_kept = host_ranges._index_sorted(*kept, start_at=at)
        assert got_kept.parent.tolist() == want_kept.parent.tolist()


@pytest.mark.parametrize("block", [1 << 16, 7])
@pytest.mark.parametrize("side", ["left", "right"])
def test_sorted_search_is_searchsorted(
    side: str, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """np.searchsorted's positions, on sorted times with ties and NaN last, keys in
    ascending runs (the compiled search's shortcut) or not, NaN keys included; the keys
    searched in one block or in blocks of 7 (a run of keys cut between blocks)."""
    monkeypatch.setattr(tree_arrays, "_QUERY_BLOCK", block)
    rng = np.random.default_rng(21)
    for trial in range(100):
        a = np.sort(rng.integers(0, 20, int(rng.integers(0, 50))).astype(np.float64))
        if trial % 4 == 0:
            a = np.append(a, [np.nan, np.nan])
        v = rng.integers(-2, 23, 60).astype(np.float64)
        if trial % 2:  # ascending runs, as spans sorted by name then start come
            v = np.concatenate([np.sort(v[:30]), np.sort(v[30:])])
        if trial % 3 == 0:
            v[5] = np.nan
        want = np.searchsorted(a, v, side)  # type: ignore[call-overload]
        assert sorted_search(a, v, side).tolist() == want.tolist()  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", ["i4", "u4", "i2", "i8"])
def test_sorted_search_of_integers_is_searchsorted(dtype: str) -> None:
    """Integer ids (a launch's correlation) searched as the float64 that holds each
    exactly, up to int32's and uint32's ends: np.searchsorted's positions, int64; int64
    ids (not all exact in float64) by numpy itself, the same positions."""
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    for trial in range(40):
        a = np.sort(rng.integers(info.min, info.max, int(rng.integers(0, 80)), dtype=dtype))
        a = np.concatenate([[info.min], a, a[:5], [info.max]]).astype(dtype)
        a.sort()
        v = np.concatenate([a[::3], rng.integers(info.min, info.max, 40, dtype=dtype)])
        v = np.concatenate([v, [info.min, info.max]]).astype(dtype)
        if trial % 2:
            v.sort()  # ascending keys, as GPU rows' correlations come
        for side in ("left", "right"):
            got = sorted_search(a, v, side)  # type: ignore[arg-type]
            want = np.searchsorted(a, v, side)  # type: ignore[call-overload]
            assert got.dtype == np.int64 and got.tolist() == want.tolist()


def merged_by_definition(starts: np.ndarray, ends: np.ndarray) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted((a, b) for a, b in zip(starts.tolist(), ends.tolist()) if b > a):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_interval_union_both_ways(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The compiled merge equals numpy's passes to the bit (starts, ends, prefix sums)
    and the definition: ascending starts (one pass) and shuffled ones (sorted first),
    empty, zero-length, reversed and NaN intervals, touching and nested ones, and the
    union of two unions."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 120))
    starts = 1.7e15 + np.round(rng.random(n) * 1e3, 3)
    ends = starts + np.round(rng.choice([-1.0, 0.0, 0.5, 3.0, 40.0], n) * rng.random(n), 3)
    if n > 3:
        ends[1] = starts[2]  # touching: one interval
        starts[3] = np.nan
    if seed % 2:
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
    other = IntervalUnion(starts[::-1] + 7.0, ends[::-1] + 7.0)
    got = [IntervalUnion(starts, ends), IntervalUnion(starts, ends).union(other)]
    with monkeypatch.context() as m:
        m.setattr(intervals, "_nesting", None)
        passes = [IntervalUnion(starts, ends), IntervalUnion(starts, ends).union(other)]
    for mine, theirs in zip(got, passes):
        for field in ("starts", "ends", "prefix"):
            a, b = getattr(mine, field), getattr(theirs, field)
            assert a.dtype == b.dtype == np.float64
            assert a.view(np.int64).tolist() == b.view(np.int64).tolist()
    assert list(zip(got[0].starts.tolist(), got[0].ends.tolist())) == merged_by_definition(
        starts, ends
    )


@pytest.mark.parametrize("seed", range(20))
def test_union_of_unions_is_the_merge_of_both(seed: int) -> None:
    """`IntervalUnion.union` (the two sorted unions interleaved, no filter, no scan)
    gives the bits of merging the two sets of intervals together from scratch: shared
    starts, touching and nested intervals, an empty side."""
    rng = np.random.default_rng(seed)
    sides = []
    for _ in range(2):
        n = int(rng.integers(0, 200)) if seed % 5 else 0
        starts = 1.7e15 + np.round(rng.random(n) * 300, 1)
        ends = starts + np.round(rng.choice([0.0, 0.1, 2.0, 30.0], n), 1)
        sides.append((starts, ends))
    (s1, e1), (s2, e2) = sides
    if s1.size and s2.size:
        s2[: min(s1.size, s2.size) // 2] = s1[: min(s1.size, s2.size) // 2]  # shared starts
    got = IntervalUnion(s1, e1).union(IntervalUnion(s2, e2))
    a, b = IntervalUnion(s1, e1), IntervalUnion(s2, e2)
    whole = IntervalUnion(np.concatenate([a.starts, b.starts]), np.concatenate([a.ends, b.ends]))
    for field in ("starts", "ends", "prefix"):
        assert getattr(got, field).view(np.int64).tolist() == (
            getattr(whole, field).view(np.int64).tolist()
        )


def test_thread_keys_both_ways(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The compiled keys equal numpy's: a corpus trace's rows in file order, shuffled and
    repeated, int32 rows; a trace writing one thread's tid as "7" and as 7 (one key);
    out-of-range rows fall back to numpy, which raises as it always did."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": "7", "ts": 1, "dur": 2},
        {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 7, "ts": 4, "dur": 2},
        {"ph": "X", "cat": "cpu_op", "name": "c", "pid": "2", "tid": 8, "ts": 5, "dur": 2},
    ]
    (tmp_path / "mixed.json").write_text(json.dumps({"traceEvents": events}))
    mixed = build_model(str(tmp_path / "mixed.json"))
    model = corpus_model("hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz")
    rng = np.random.default_rng(4)
    for m in (model, mixed):
        n = len(m)
        for rows in (np.arange(n), rng.integers(0, n, 3 * n), np.arange(n, dtype=np.int32)[::-1]):
            got = common.thread_keys(m, rows)
            with monkeypatch.context() as patched:
                patched.setattr(common, "_nesting", None)
                want = common.thread_keys(m, rows)
            assert got.dtype == want.dtype == np.int64
            assert got.tolist() == want.tolist()
    keys = common.thread_keys(mixed, np.arange(3))
    assert keys[0] == keys[1] != keys[2]
    with pytest.raises(IndexError):
        common.thread_keys(model, np.array([0, len(model)]))


def test_snap_ns_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """Times rounded to whole nanoseconds in one compiled pass equal numpy's steps to the
    bit: 2024-on microsecond floats with fractions, exact half nanoseconds (rounded to
    even), negatives, NaN and infinities, an empty array, float32 (numpy's)."""
    rng = np.random.default_rng(6)
    origin = 1.7e15
    times = origin + np.round(rng.random(5000) * 1e6, 4)
    times[:6] = [origin + 0.0005, origin + 0.0015, origin - 2.5, np.nan, np.inf, -np.inf]
    for t in (times, times[::3], np.empty(0), times.astype(np.float32), np.arange(9.0) / 7):
        got = host_ranges.snap_ns(t, origin)
        with monkeypatch.context() as m:
            m.setattr(host_ranges, "_nesting", None)
            want = host_ranges.snap_ns(t, origin)
        assert got.dtype == want.dtype == np.float64
        assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


def spans_by_definition(names: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[tuple]:
    """Per name (ascending), its ranges merged where one starts by the furthest end of
    those before it, in (start, longer first) order."""
    out = []
    for code in sorted(set(names.tolist())):
        spans: list[list[float]] = []
        for s, e in zip(start[names == code].tolist(), end[names == code].tolist()):
            if spans and s <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], e)
            else:
                spans.append([s, e])
        out += [(code, s, e) for s, e in spans]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_name_spans_both_ways(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The union of each name's ranges (Memory's operator table), compiled and in numpy's
    passes: the same codes (int16 and int32), starts and ends, the definition's where the
    times are finite; a NaN end (furthest of all) or start in some."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    start = rng.integers(0, 50, n).astype(np.float64)
    end = start + rng.choice([0.0, 1.0, 2.0, 5.0, 20.0], n)
    if seed % 4 == 1:
        end[rng.integers(0, n)] = np.nan
    if seed % 4 == 2:
        start[rng.integers(0, n)] = np.nan
    order = np.lexsort((-end, start))
    names = rng.integers(0, 6, n).astype(np.int16 if seed % 2 else np.int32)
    ops = memory_index.ThreadOps(np.arange(n), start[order], end[order], names[order])
    got = memory_index.name_spans(ops)
    with monkeypatch.context() as m:
        m.setattr(memory_index, "_nesting", None)
        want = memory_index.name_spans(ops)
    for mine, theirs in zip(got, want):
        assert mine.dtype == theirs.dtype
        assert np.array_equal(mine, theirs, equal_nan=True)
    assert got[0].dtype == names.dtype
    if seed % 4 in (0, 3):
        assert list(zip(*(a.tolist() for a in got))) == spans_by_definition(
            ops.names, ops.starts, ops.ends
        )


@pytest.mark.parametrize("seed", range(40))
def test_span_sums_both_ways(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The Memory view's sums of the events inside each name's spans on a thread, in one
    compiled pass and in numpy's prefix sums: the same sums, to the bit, with ties, empty
    spans, NaN bounds and NaN times (last); fractional bytes go to numpy's."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 90)), int(rng.integers(1, 40))
    ts = np.sort(rng.integers(0, 60, n).astype(np.float64))
    if seed % 5 == 0 and n:
        ts[-1] = np.nan
    nbytes = rng.choice([-300.0, -5.0, 0.0, 7.0, 1024.0], n)
    if seed % 9 == 4 and n:
        nbytes[0] = 0.5
    start = rng.integers(0, 60, k).astype(np.float64)
    end = start + rng.choice([0.0, 1.0, 5.0, 30.0], k)
    start[0] = np.nan if seed % 7 == 1 else start[0]
    end[0] = np.nan if seed % 7 == 2 else end[0]
    order = np.lexsort((-end, start))
    names = rng.integers(0, 5, k).astype(np.int32 if seed % 2 else np.int16)[order]
    ops = memory_index.ThreadOps(np.arange(k), start[order], end[order], names)
    index = memory_index.MemoryIndex(
        ts=ts,
        thread=np.full(n, 3, dtype=np.int64),
        op=np.full(n, -1, dtype=np.int64),
        parent=np.full(n, -1, dtype=np.int64),
        devices=[],
        threads={3: ops},
    )
    members = np.arange(n)
    got = operator_stats._total_sums(index, members, nbytes, 6)
    assert operator_stats._span_sums_compiled(ts, nbytes, ops.name_spans, np.zeros((4, 6))) == (
        seed % 9 != 4 or n == 0
    )
    with monkeypatch.context() as m:
        m.setattr(operator_stats, "_nesting", None)
        want = operator_stats._total_sums(index, members, nbytes, 6)
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


@pytest.mark.parametrize("seed", range(30))
def test_rows_sharing_a_start_both_ways(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The duplicate check's first cut (rows whose start another row shares, by start,
    file order among equal ones), compiled and in numpy's passes, and by definition:
    ties, NaN (shares nothing), -0.0 and 0.0 (one start), one row, none."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    ts = rng.integers(0, 1 + n // 2, n).astype(np.float64)
    if n > 4:
        ts[rng.integers(0, n, 3)] = np.nan
        ts[:2] = [0.0, -0.0]
    got = trusted_rows._sharing_a_start(ts)
    with monkeypatch.context() as m:
        m.setattr(trusted_rows, "_nesting", None)
        want = trusted_rows._sharing_a_start(ts)
    assert got.dtype == want.dtype == np.int64
    assert got.tolist() == want.tolist()
    values = ts.tolist()
    shared = {i for i, t in enumerate(values) if sum(1 for u in values if u == t) > 1}
    assert sorted(got.tolist()) == sorted(shared)
    assert got.tolist() == sorted(shared, key=lambda i: (values[i], i))


def test_duplicates_of_a_corpus_trace_both_ways(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A corpus trace with every 40th event written twice: the rows flagged as copies,
    by either first cut, are the same, and are the copies."""
    path = corpus_path("hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz")
    with gzip.open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    copied = [e for i, e in enumerate(events) if i % 40 == 0 and e.get("ph") == "X"]
    doc["traceEvents"] = events + copied
    (tmp_path / "copies.json").write_text(json.dumps(doc))
    model = build_model(str(tmp_path / "copies.json"))
    got = trusted_rows.duplicate_mask(model)
    assert int(got.sum()) >= len(copied) > 0
    with monkeypatch.context() as m:
        m.setattr(trusted_rows, "_nesting", None)
        want = trusted_rows.duplicate_mask(model)
    assert np.array_equal(got, want)


def _random_tree(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A tree of ranges sorted by (start, longer first), as the op tree's nodes are: per
    node its parent (the latest earlier range that contains it), start and end, in
    microsecond floats with fractions."""
    start = np.sort(1.7e15 + np.round(rng.random(n) * 1e3, 3))
    end = start + np.round(rng.random(n) * rng.choice([1.0, 50.0, 400.0]), 3)
    order = np.lexsort((-end, start))
    start, end = start[order], end[order]
    parent = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        inside = np.flatnonzero((start[:i] <= start[i]) & (end[:i] >= end[i]))
        parent[i] = inside[-1] if inside.size else -1
    return parent, start, end


def test_children_cover_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The op tree's union of each node's children (`optree.children_union_length`) in one
    compiled pass in node order equals the sorted numpy passes to the bit; and where the
    children do not come by start, or a time is not finite, the compiled pass declines and
    the sort answers."""
    rng = np.random.default_rng(11)
    for trial in range(120):
        parent, start, end = _random_tree(rng, int(rng.integers(1, 90)))
        if trial % 6 == 5 and parent.size > 3:  # some children out of start order
            start, end = start[::-1].copy(), end[::-1].copy()
        if trial % 10 == 9:
            end[-1] = np.inf
        got = optree.children_union_length(parent, start, end)
        with monkeypatch.context() as m:
            m.setattr(optree, "_nesting", None)
            m.setattr(tree_arrays, "_nesting", None)
            passes = optree.children_union_length(parent, start, end)
        assert got.view(np.int64).tolist() == passes.view(np.int64).tolist()


def test_tree_depths_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """Depths in one compiled pass where parents come first; pointer jumping otherwise
    (the compiled pass declines): the same depths."""
    rng = np.random.default_rng(12)
    for trial in range(60):
        parent, _, _ = _random_tree(rng, int(rng.integers(1, 90)))
        if trial % 3 == 2:  # the nodes shuffled: a parent may come after its child
            perm = rng.permutation(parent.size)
            where = np.empty_like(perm)
            where[perm] = np.arange(perm.size)
            parent = np.where(parent[perm] >= 0, where[np.maximum(parent[perm], 0)], -1)
        got = tree_arrays.depths(parent)
        with monkeypatch.context() as m:
            m.setattr(tree_arrays, "_nesting", None)
            jumps = tree_arrays.depths(parent)
        assert got.tolist() == jumps.tolist()
        expected = []
        for i in range(parent.size):
            d, at = 0, int(parent[i])
            while at >= 0:
                d, at = d + 1, int(parent[at])
            expected.append(d)
        assert got.tolist() == expected
