"""`overlapping_events` (analysis/core/health/checks.py) counts every slice that starts inside
an earlier slice of its lane and ends after it (by more than the 1 µs tolerance each
side), also where both sit inside a longer slice: hand-computed small lanes, and the
numpy walk of `health/nesting.py` against the heap of open ends it replaced."""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core.health import checks, nesting
from kinetoscope.analysis.core.health.checks import overlapping_events
from kinetoscope.analysis.core.health.nesting import lane_crossings
from kinetoscope.analysis.core.tree_arrays import nesting_order, next_up

T = 1000.0


def _crossing_names(tmp_path: Path, slices: list[tuple[str, float, float]]) -> list[str]:
    t = TraceBuilder()
    for name, ts, dur in slices:
        t.op(name, T + ts, dur)
    model = t.model(tmp_path)
    rows = overlapping_events(model).rows
    return sorted(model.names[int(model.events["name"][r])] for r in rows.tolist())


CASES = {
    "alone": ([("a", 0, 10), ("b", 5, 10)], ["b"]),
    "nested in a longer slice": ([("outer", 0, 100), ("a", 10, 10), ("b", 15, 10)], ["b"]),
    "three crossing in a row": (
        [("outer", 0, 100), ("a", 10, 10), ("b", 15, 10), ("c", 22, 10)],
        ["b", "c"],
    ),
    # b crosses a, and c crosses a too though it sits inside b.
    "inside the crossing one": ([("a", 0, 10), ("b", 5, 20), ("c", 6, 9)], ["b", "c"]),
    "nested and disjoint only": (
        [("outer", 0, 100), ("a", 10, 10), ("a1", 11, 2), ("b", 20, 10), ("c", 40, 60)],
        [],
    ),
    "same start: nests": ([("a", 0, 10), ("b", 0, 20)], []),
    "within the tolerance": ([("outer", 0, 100), ("a", 10, 10), ("b", 19.5, 1.3)], []),
    "just past the tolerance": ([("outer", 0, 100), ("a", 10, 10), ("b", 18.5, 3)], ["b"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_crossing_counts(tmp_path: Path, case: str) -> None:
    slices, want = CASES[case]
    assert _crossing_names(tmp_path, slices) == want


def test_lanes_are_apart(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("outer", T, 100)
    t.op("a", T + 10, 10, tid=2)
    t.op("b", T + 15, 10)
    assert overlapping_events(t.model(tmp_path)).total == 0


def _heap_crossings(lane: np.ndarray, start: np.ndarray, end: np.ndarray, tol: float) -> list[bool]:
    """The rule as first written: per lane, a heap of the ends still open; those ending by
    the next slice's start (+ tol) dropped; the slice crosses when the earliest end left
    is before its own end (- tol)."""
    out = [False] * start.size
    open_ends: list[float] = []
    for i in range(start.size):
        if i and lane[i] != lane[i - 1]:
            open_ends = []
        while open_ends and open_ends[0] <= start[i] + tol:
            heapq.heappop(open_ends)
        out[i] = bool(open_ends) and open_ends[0] < end[i] - tol
        heapq.heappush(open_ends, float(end[i]))
    return out


def _random_lanes(rng: np.random.Generator, shape: int) -> tuple[np.ndarray, ...]:
    n = int(rng.integers(1, 60))
    lane = rng.integers(0, int(rng.integers(1, 4)), n)
    if shape == 0:  # whole microseconds, many equal starts and ends
        start = rng.integers(0, 40, n).astype(float)
        end = start + rng.integers(0, 30, n)
    elif shape == 1:  # tenths
        start = np.round(rng.random(n) * 50, 1)
        end = start + np.round(rng.random(n) * 20, 1)
    else:  # a walk forward in half microseconds: children ending within the tolerance
        start = np.cumsum(rng.integers(0, 3, n) * 0.5)
        end = start + rng.integers(0, 12, n) * 0.5
    order = np.lexsort((-end, start, lane))
    return lane[order], start[order], end[order]


def test_lane_crossings_match_the_heap_rule() -> None:
    """The walk (compiled, and in numpy passes) gives the heap's answer on lanes with and
    without crossings."""
    rng = np.random.default_rng(7)
    seen = {True: 0, False: 0}
    for trial in range(3000):
        lane, start, end = _random_lanes(rng, trial % 3)
        want = _heap_crossings(lane, start, end, 1.0)
        assert lane_crossings(lane, start, end, 1.0).tolist() == want, (lane, start, end)
        passes = nesting._lane_crossings_passes(lane, start, end, 1.0)
        assert passes.tolist() == want, (lane, start, end)
        seen[any(want)] += 1
    assert min(seen.values()) > 100  # both kinds of lanes were tried


def test_nesting_order_is_lexsorts() -> None:
    rng = np.random.default_rng(3)
    for trial in range(1000):
        n = int(rng.integers(0, 80))
        group = rng.integers(0, 4, n)
        start = rng.integers(0, 10, n).astype(float)
        end = start + rng.integers(0, 5, n)
        if trial % 3 == 0:  # NaN starts and ends sort last, as lexsort puts them
            start[rng.random(n) < 0.1] = np.nan
            end[rng.random(n) < 0.1] = np.nan
        if trial % 4 == 1:  # starts ascending in input order: sorted by group alone
            start = np.sort(start)
            end = start + rng.integers(0, 5, n)
        want = np.lexsort((-end, start, group))
        assert nesting_order(group, start, end).tolist() == want.tolist()


def test_next_up_is_nextafter_bit_for_bit() -> None:
    """The float just above each value (the parent searches' targets), as
    np.nextafter(x, inf) gives it: positive floats by their bits, the rest by numpy."""
    rng = np.random.default_rng(4)
    special = [0.0, -0.0, 5e-324, -5e-324, 1e-310, 1.0, -1.0, np.inf, -np.inf, np.nan]
    values = np.concatenate(
        [special, [np.finfo(np.float64).max], rng.random(200) * 1.7e15, -rng.random(50)]
    )
    with np.errstate(over="ignore"):
        want = np.nextafter(values, np.inf)
    assert next_up(values).view(np.int64).tolist() == want.view(np.int64).tolist()
    assert next_up(values[::3]).view(np.int64).tolist() == want[::3].view(np.int64).tolist()
    small = np.arange(5, dtype=np.float32)
    assert next_up(small).dtype == np.float32
    assert next_up(small).tolist() == np.nextafter(small, np.float32(np.inf)).tolist()


@pytest.mark.parametrize("compiled", [True, False])
def test_batches_and_cuts_give_the_heap_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """Lanes checked a few slices at a time (batches of whole lanes; a long lane cut where
    every earlier slice has ended, or walked whole by the compiled walk), written out of
    start order: the heap's answer, per lane sorted by (start, longer first, file order)."""
    monkeypatch.setattr(checks, "_BATCH_SLICES", 4)
    if not compiled:
        monkeypatch.setattr(checks, "_nesting", None)
    rng = np.random.default_rng(11)
    crossed = 0
    for trial in range(40):
        t = TraceBuilder()
        tids = rng.integers(1, 4, 60)
        start = np.cumsum(rng.integers(0, 4, 60)) * 0.5 + (rng.random(60) < 0.2) * 30
        dur = rng.integers(0, 12 if trial % 2 else 5, 60) * 0.5  # short: none cross
        for i in range(60):
            t.op(f"s{i}", T + float(start[i]), float(dur[i]), tid=int(tids[i]))
        model = t.model(tmp_path, f"w{trial}.pt.trace.json")
        got = sorted(
            model.names[int(c)] for c in model.events["name"][overlapping_events(model).rows]
        )
        order = np.lexsort((np.arange(60), -(start + dur), start, tids))
        heap = _heap_crossings(tids[order], start[order], (start + dur)[order], 1.0)
        assert got == sorted(f"s{i}" for i, hit in zip(order.tolist(), heap) if hit)
        crossed += any(heap)
    assert 5 < crossed < 40  # lanes with and without crossings


def test_rows_by_lane_are_a_stable_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows put in lane order lane by lane (few lanes), placed a block at a time (many) or
    by a sort (wide codes): each the stable argsort's order."""
    monkeypatch.setattr(checks, "_BATCH_SLICES", 700)  # several blocks, the last one short
    rng = np.random.default_rng(5)
    for lanes, dtype in ((3, np.uint16), (40, np.uint16), (5, np.int64), (1, np.uint16)):
        lane = rng.integers(0, lanes, 5000).astype(dtype)
        rows = np.sort(rng.choice(10**6, 5000, replace=False)).astype(np.int32)
        order = np.argsort(lane, kind="stable")
        got_rows, got_lane = checks._by_lane(rows, lane)
        assert got_rows.dtype == rows.dtype and got_lane.dtype == lane.dtype
        assert got_rows.tolist() == rows[order].tolist()
        assert got_lane.tolist() == lane[order].tolist()
