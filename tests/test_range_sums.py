"""The range summary's running sums (trace_view/range_sums.py) give, per name, what the
event-by-event sum gives over the same range: real traces of two vendors' mixes, ranges
from a few events wide to the whole trace, every track alone and all of them; and a track
where an event outlives its parent is summed event by event."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.trace_view.index import index_of
from kinetoscope.trace_view.range_summary import (
    _add_totals,
    _overlapping,
    _per_name,
    _worker_per_name,
    range_summary,
)
from kinetoscope.trace_view.range_sums import (
    PerName,
    build_range_sums,
    irregular_tracks,
    range_per_name,
)
from kinetoscope.trace_view.workers import WorkerTrace, select_tracks

TRACES = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
)

Sums = dict[str, tuple[int, float, float]]


def ranges(lo: float, hi: float, count: int, seed: int) -> list[tuple[float, float]]:
    """The whole extent, then widths from 1e-6 of it to all of it (log-uniform)."""
    rng = random.Random(seed)
    out = [(lo, hi + 1.0)]
    while len(out) < count:
        width = (hi - lo) * 10.0 ** rng.uniform(-6.0, 0.0)
        t0 = lo + rng.uniform(-0.01 * (hi - lo), hi - lo - width)
        out.append((t0, t0 + width))
    return out


def by_name(model: TraceModel, per_name: PerName) -> Sums:
    codes = per_name.code.tolist()
    return {
        model.names[c]: (n, t, s)
        for c, n, t, s in zip(
            codes,
            per_name.count.tolist(),
            per_name.total.tolist(),
            per_name.self_time.tolist(),
        )
    }


def assert_same(
    fast: dict[str, tuple[int, float, float]], slow: dict[str, tuple[int, float, float]]
) -> None:
    assert fast.keys() == slow.keys()
    for name, (n, total, own) in slow.items():
        f_n, f_total, f_own = fast[name]
        assert f_n == n, name
        assert f_total == pytest.approx(total, rel=1e-9, abs=1e-6), name
        assert f_own == pytest.approx(own, rel=1e-9, abs=1e-6), name


@pytest.mark.parametrize("trace", TRACES)
def test_running_sums_equal_the_event_by_event_sums(trace: str) -> None:
    model = build_model(str(corpus_path(trace)))
    index = index_of(model)
    worker = WorkerTrace(None, model)
    # Small buckets: ranges cover whole buckets, edges, and both at once.
    sums = build_range_sums(index, len(model.names), events_per_bucket=16)
    assert sums.n_buckets > 100
    regular = np.flatnonzero(~sums.irregular)
    assert regular.size >= 2, "the trace's tracks are summed by the running sums"
    choices = [regular] + [regular[i : i + 1] for i in range(regular.size)]
    checked = 0
    for i, (a, b) in enumerate(ranges(index.t_min, index.t_max, 240, seed=7)):
        tracks = choices[i % len(choices)]
        slow = _per_name(worker, _overlapping(index, tracks, a, b), a, b)
        fast = range_per_name(sums, index, tracks, a, b)
        assert_same(by_name(model, fast), by_name(model, slow))
        checked += int(slow.count.sum())
    assert checked > len(index)  # the ranges held many events, not only empty ones


def test_route_answers_the_same_with_default_buckets() -> None:
    """The route (default bucket size: one bucket on a small trace, every range read at
    its edges) against the event-by-event sums, rows in the route's order."""
    model = build_model(str(corpus_path(TRACES[0])))
    index = index_of(model)
    worker = WorkerTrace(None, model)
    tracks = np.arange(len(index.tracks))
    for a, b in ranges(index.t_min, index.t_max, 20, seed=3):
        view = range_summary([worker], {"t0": a, "t1": b, "limit": 100_000})
        slow = by_name(model, _per_name(worker, _overlapping(index, tracks, a, b), a, b))
        route = {r["name"]: (r["count"], r["total_us"], r["self_us"]) for r in view["rows"]}
        assert_same(route, slow)
        assert view["event_count"] == sum(n for n, _, _ in slow.values())


def test_one_worker_rows_rank_as_the_totals_by_name() -> None:
    """One worker's rows (ranked over its name codes) are those that the totals by name
    text give (several workers' way): the same rows, order, types, limit and truncation."""
    model = build_model(str(corpus_path(TRACES[0])))
    index = index_of(model)
    worker = WorkerTrace(None, model)
    selection = select_tracks([worker], None)[0]
    for a, b in ranges(index.t_min, index.t_max, 30, seed=5):
        totals: dict[str, list[float]] = {}
        _add_totals(worker, _worker_per_name(worker, selection, a, b), totals)
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))
        for limit in (1, 7, 100_000):
            view = range_summary([worker], {"t0": a, "t1": b, "limit": limit})
            expected = [
                {"name": n, "count": v[0], "total_us": v[1], "self_us": v[2]}
                for n, v in ranked[:limit]
            ]
            assert view["rows"] == expected
            assert [type(v) for r in view["rows"] for v in r.values()] == [
                type(v) for r in expected for v in r.values()
            ]
            assert view["truncated"] == (len(ranked) > limit)


def test_names_of_equal_time_rank_by_name(tmp_path: Path) -> None:
    """c (6 µs) first, then a and b (5 µs each) in name order, whatever their codes."""
    b = TraceBuilder()
    b.op("b", 0, 5)
    b.op("a", 10, 5)
    b.op("c", 20, 6)
    worker = WorkerTrace(None, b.model(tmp_path))
    view = range_summary([worker], {"t0": 0, "t1": 30})
    assert [(r["name"], r["total_us"]) for r in view["rows"]] == [
        ("c", 6.0),
        ("a", 5.0),
        ("b", 5.0),
    ]
    cut = range_summary([worker], {"t0": 0, "t1": 30, "limit": 2})
    assert [r["name"] for r in cut["rows"]] == ["c", "a"] and cut["truncated"]


def test_an_event_outliving_its_parent_makes_its_track_irregular(tmp_path: Path) -> None:
    """P [0, 10) holds C [5, 12): C's clipped time may exceed P's own, so P's self time
    needs its own clamp: the track is summed event by event, and the answer is right."""
    b = TraceBuilder()
    b.op("P", 0, 10)
    b.op("C", 5, 7)
    b.op("Q", 20, 10)
    b.op("R", 22, 3)
    model = b.model(tmp_path)
    index = index_of(model)
    assert irregular_tracks(index).any()
    rows = {
        r["name"]: r for r in range_summary([WorkerTrace(None, model)], {"t0": 6, "t1": 30})["rows"]
    }
    assert rows["P"]["total_us"] == 4.0 and rows["P"]["self_us"] == 0.0
    assert rows["C"]["total_us"] == 6.0
    assert rows["Q"]["self_us"] == 7.0 and rows["R"]["total_us"] == 3.0


def test_range_max_equals_the_samples_max() -> None:
    """A counter bucket's highest sample from block maxima and partial blocks equals the
    max over its samples: ranges inside one block, across two, and over many blocks."""
    from kinetoscope.trace_view.counters import BLOCK, range_max

    rng = np.random.default_rng(5)
    samples = rng.normal(size=50 * BLOCK + 7)
    blocks = np.maximum.reduceat(samples, np.arange(0, samples.size, BLOCK))
    lo = rng.integers(0, samples.size - 1, size=400)
    width = np.concatenate([rng.integers(1, 4, 100), rng.integers(1, 3 * BLOCK, 300)])
    hi = np.minimum(lo + width, samples.size)
    lo = np.concatenate([lo, [0, BLOCK - 1, BLOCK, 0]])
    hi = np.concatenate([hi, [samples.size, BLOCK + 1, 2 * BLOCK, BLOCK]])
    expected = [samples[a:b].max() for a, b in zip(lo.tolist(), hi.tolist())]
    assert range_max(samples, blocks, lo, hi).tolist() == expected


def testsample_bounds_equal_two_searches() -> None:
    """Per bucket edge, the first sample at or after it and the last at or before it, with
    samples on edges (repeated ones too), before the first edge and after the last."""
    from kinetoscope.trace_view.counters import sample_bounds

    times = np.sort(np.concatenate([np.arange(-5.0, 105.0, 2.5), [10.0, 10.0, 50.0], [0.0]]))
    for t0, t1, buckets in ((0.0, 100.0, 40), (10.0, 11.0, 7), (-20.0, 200.0, 3), (3.0, 9.0, 1)):
        edges = np.linspace(t0, t1, buckets + 1)
        at, before = sample_bounds(times, edges)
        assert at[:-1].tolist() == np.searchsorted(times, edges[:-1], side="left").tolist()
        assert at[-1] == np.searchsorted(times, t1, side="left")
        right = np.searchsorted(times, edges[:-1], side="right") - 1
        assert before.tolist() == right.tolist()
