"""Set and order helpers written for speed against numpy's own: `kind_mask` (compared
per kind, or through a table for many kinds) against `np.isin`, `common.in_sorted`
(binary search in sorted known values) against `np.isin`, `common.distinct` against
`np.unique`, the op tree's children by parent then start, the Kernels view's longest
call per group, the trace view levels' dominant name per bucket and its index's orders
against `np.lexsort`; `common.nonzero_rows` against `np.flatnonzero`; `common.repeated`
against `np.broadcast_to(...).copy()`; `launches.to_ns` against its `np.nan_to_num` form."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core import common
from kinetoscope.analysis.core.common import (
    distinct,
    in_sorted,
    lexsort_ints,
    nonzero_rows,
    repeated,
)
from kinetoscope.analysis.core.launches import MAX_NS, to_ns
from kinetoscope.analysis.core.optree import _by_parent_then_start
from kinetoscope.analysis.kernels.view import _longest_earliest
from kinetoscope.model.categories import Kind, kind_mask
from kinetoscope.trace_view.index import _segment_order, by_depth
from kinetoscope.trace_view.levels import most_busy


@pytest.mark.parametrize("count", [0, 1, 2, 4, 5, 16])
def test_kind_mask_is_isin(count: int) -> None:
    rng = np.random.default_rng(count)
    kind = rng.integers(0, 16, 5000).astype(np.uint8)
    kinds = [Kind(k) for k in rng.choice(16, count, replace=False)]
    mask = kind_mask(kind, kinds)
    assert mask.dtype == np.bool_
    assert np.array_equal(mask, np.isin(kind, np.array(kinds, dtype=np.uint8)))
    assert np.array_equal(kind_mask(kind, [*kinds, *kinds]), mask)  # a kind asked twice


def test_nonzero_rows_is_flatnonzero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mask's rows found a block at a time (several, the last one short): flatnonzero's,
    as int32 (a trace's rows fit)."""
    monkeypatch.setattr(common, "_NONZERO_BLOCK", 7)
    t = TraceBuilder()
    for i in range(50):
        t.op(f"op{i}", 1000.0 + i, 1.0)
    model = t.model(tmp_path)
    rng = np.random.default_rng(2)
    for share in (0.0, 0.3, 1.0):
        mask = rng.random(len(model)) < share
        rows = nonzero_rows(model, mask)
        assert rows.dtype == np.int32
        assert rows.tolist() == np.flatnonzero(mask).tolist()


def test_in_sorted_is_isin() -> None:
    """Empty values, empty known values, narrow ids among wide known ones, wide ranges."""
    rng = np.random.default_rng(3)
    for n, m, high in ((0, 5, 10), (50, 0, 10), (2000, 30, 100), (500, 400, 1 << 40)):
        values = rng.integers(-5, high, n)
        known = np.unique(rng.integers(-5, high, m))
        assert np.array_equal(in_sorted(values, known), np.isin(values, known))
    narrow = rng.integers(-1, 300, 1000).astype(np.int32)
    known = np.unique(rng.integers(0, 300, 40))
    assert np.array_equal(in_sorted(narrow, known), np.isin(narrow, known))
    # Float times against np.unique's of them (the critical path's cut times): -0.0 and
    # 0.0 one value, a NaN never found, as np.isin.
    times = np.array([3.5, -0.0, np.nan, 1e-9, 7.0, 3.5, np.inf])
    known = np.unique(np.array([0.0, 3.5, np.nan, np.inf, 2.0, np.nan]))
    assert np.array_equal(in_sorted(times, known), np.isin(times, known))


def test_distinct_is_numpys_unique() -> None:
    """The same values, order and dtype as np.unique: small and wide ranges, negatives,
    unsigned, empty, floats and booleans (numpy's own), 2-D input (flattened), a few
    values and many (each side of SMALL_DISTINCT)."""
    rng = np.random.default_rng(8)
    cases = [
        np.empty(0, np.int16),
        np.array([True, False]),
        rng.random(50),
        np.arange(6).reshape(2, 3),
        np.empty(0, np.float64),
        np.array([1 << 40, 5, 1 << 40, -3, 5, -3], np.int64),  # wide, repeated: sorted here
        np.array([(1 << 64) - 1, 0, (1 << 63) + 5, 0], np.uint64),  # past int64, few
    ]
    for n, low, high, dtype in (
        (500, 0, 8, np.int64),
        (500, -1, 8, np.int16),
        (300, 3, 40, np.uint8),
        (300, 0, 1 << 40, np.int64),
        (5000, -(1 << 20), 1 << 20, np.int32),
        (100, 7, 8, np.int32),
        (400, -(1 << 15), 1 << 15, np.int16),
        (1, 3, 4, np.int64),  # a few values (SMALL_DISTINCT): a set, not the table
        (128, -5, 5, np.int8),
        (129, -5, 5, np.int8),
        (40, 0, 1 << 40, np.int64),
    ):
        cases.append(rng.integers(low, high, size=n).astype(dtype))
    for values in cases:
        got, want = distinct(values), np.unique(values)
        assert got.dtype == want.dtype
        assert got.tolist() == want.tolist()


def test_children_by_parent_then_start_is_lexsort() -> None:
    """Children already by start within each parent (the op tree's), shuffled ones, equal
    starts and NaN starts: the lexsort's order."""
    rng = np.random.default_rng(12)
    for trial in range(300):
        n = int(rng.integers(0, 40))
        parent = rng.integers(0, 5, n)
        start = rng.integers(0, 8, n).astype(float)
        if trial % 2:
            start = np.sort(start)
        if trial % 5 == 0 and n:
            start[rng.integers(0, n)] = np.nan
        want = np.lexsort((start, parent))
        assert _by_parent_then_start(parent, start).tolist() == want.tolist()


def test_longest_earliest_call_is_the_lexsorts_last() -> None:
    """Per group the last position of `np.lexsort((-ts, dur, group))`: ties in length,
    then in start, resolved as the sort does; NaN times (the sort's own way)."""
    rng = np.random.default_rng(21)
    for trial in range(300):
        n = int(rng.integers(1, 50))
        group = rng.permutation(np.arange(n) % int(rng.integers(1, 6)))
        dur = rng.integers(0, 4, n).astype(float)
        ts = rng.integers(0, 4, n).astype(float)
        if trial % 7 == 0:
            (dur if trial % 2 else ts)[rng.integers(0, n)] = np.nan
        order = np.lexsort((-ts, dur, group))
        want = order[np.r_[np.flatnonzero(np.diff(group[order])), order.size - 1]]
        assert _longest_earliest(group, dur, ts).tolist() == want.tolist()


def test_lexsort_ints_is_lexsort() -> None:
    """Keys and names with ties, negative keys and keys too wide to combine (the
    lexsort's own), empty input: the order of `np.lexsort((name, key))`."""
    rng = np.random.default_rng(30)
    for trial in range(200):
        n = int(rng.integers(0, 60))
        key = rng.integers(-2 if trial % 9 == 0 else 0, 6, n).astype(np.int64)
        if trial % 11 == 0:
            key *= 1 << 58
        name = rng.integers(0, 4, n).astype(np.int32)
        assert lexsort_ints((name, key)).tolist() == np.lexsort((name, key)).tolist()


def test_most_busy_is_the_lexsorts_last() -> None:
    """Per run of equal sorted keys the last position of `np.lexsort((sums, key))`: equal
    sums (the last of them), -0.0 beside 0.0, NaN sums (sorted after every number)."""
    rng = np.random.default_rng(31)
    for trial in range(300):
        n = int(rng.integers(1, 50))
        key = np.sort(rng.integers(0, 6, n)).astype(np.int64)
        sums = rng.integers(0, 3, n).astype(float)
        if trial % 4 == 0:
            sums[sums == 0] = -0.0
        if trial % 5 == 0:
            sums[rng.integers(0, n, 2)] = np.nan
        order = np.lexsort((sums, key))
        want = order[np.r_[np.flatnonzero(np.diff(key[order])), order.size - 1]]
        assert most_busy(key, sums).tolist() == want.tolist()
    assert most_busy(np.zeros(0, np.int64), np.zeros(0)).size == 0


def test_by_depth_is_a_stable_argsort() -> None:
    """Shallow depths (sorted as int16) and deep ones: by depth, then index."""
    rng = np.random.default_rng(32)
    for high in (1, 5, 1 << 15, 1 << 20):
        depth = rng.integers(0, high, 3000).astype(np.int32)
        assert by_depth(depth).tolist() == np.lexsort((np.arange(depth.size), depth)).tolist()
    assert by_depth(np.zeros(0, np.int32)).size == 0


def test_segment_order_is_lexsort() -> None:
    """Events by track then start (the index's sweep order), equal starts, many classes
    and depths: the order of `np.lexsort((ts, cls, depth, track))`."""
    rng = np.random.default_rng(33)
    for trial in range(200):
        n = int(rng.integers(0, 80))
        track = rng.integers(0, 4, n)
        ts = rng.integers(0, 10, n).astype(float)
        sweep = np.lexsort((ts, track))
        track, ts = track[sweep], ts[sweep]
        depth = rng.integers(0, 1 + trial % 7, n).astype(np.int32)
        cls = rng.integers(0, 1 + trial % 5, n).astype(np.int8)
        want = np.lexsort((ts, cls, depth, track))
        assert _segment_order(track, depth, cls).tolist() == want.tolist()


def test_repeated_is_a_broadcast_copy() -> None:
    """Numbers repeated, arrays of the size copied (never the caller's), a one-value
    array broadcast, in the dtype asked; a size that does not broadcast is refused."""
    cases = [(3, 4, np.int8), (2.5, 0, np.float64), (True, 3, bool), (np.int64(7), 2, None)]
    cases += [(np.arange(5), 5, np.float64), (np.array([9]), 3, np.int64), ([1, 2], 2, None)]
    for value, count, dtype in cases:
        got = repeated(value, count, dtype)
        want = np.broadcast_to(np.asarray(value, dtype=dtype), (count,)).copy()
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
        assert got.flags.writeable and not np.shares_memory(got, np.asarray(value))
    with pytest.raises(ValueError):
        repeated(np.arange(3), 4, np.int64)


def test_to_ns_is_its_nan_to_num_form() -> None:
    """NaN to 0, infinities and overflows clipped to MAX_NS, the rest rounded: as
    `np.clip(np.nan_to_num(ns), ...)` gave, for arrays and a 0-d value."""
    us = np.array([0, 1.5, -2.25, np.nan, np.inf, -np.inf, 1e300, -1e300, 12345.0004, 9e12])
    for origin in (0.0, 1e6, -3.5):
        with np.errstate(over="ignore", invalid="ignore"):
            ns = np.rint((us - origin) * 1000.0)
        want = np.clip(np.nan_to_num(ns), -MAX_NS, MAX_NS).astype(np.int64)
        assert to_ns(us, origin).tolist() == want.tolist()
        assert to_ns(np.float64(us[1]), origin) == want[1]
