"""The compiled passes of the trace view's windows (`trace_view/_passes.c`) against numpy's:
the `trace` route's answer, encoded, byte for byte on real traces (a V100 and an H100
trace, windows from a few µs to the whole trace, several widths, every track or one), the
`range_summary` and `flows` answers on the same windows, and each pass on small built
inputs where numpy's corner cases live: NaN samples and starts, ties of weight and of
key, empty segments and buckets, unsorted parts (the helper declines, the sort answers)."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import numpy as np
import pytest
from corpus import corpus_model
from kinetoscope.analysis.core.intervals import IntervalUnion
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.trace_view import counters, window
from kinetoscope.trace_view.counters import Counter, counter_series
from kinetoscope.trace_view.workers import WorkerTrace, time_extent

pytestmark = pytest.mark.skipif(window._passes is None, reason="compiled passes not built")

TRACES = [
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
]


def without_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(window, "_passes", None)
    monkeypatch.setattr(counters, "_passes", None)


def encoded(route: str, workers: list[WorkerTrace], params: dict[str, str]) -> bytes:
    endpoint = ENDPOINTS[route]
    return msgspec.json.encode(endpoint.of_traces(workers, endpoint.decode(params)))


def windows(workers: list[WorkerTrace], count: int, seed: int) -> list[dict[str, str]]:
    """The whole trace, then windows of widths uniform in log scale over 6 decades."""
    lo, hi = time_extent(workers)
    rng = random.Random(seed)
    span = hi - lo
    asks: list[dict[str, str]] = [{}]
    tracks = [f"t{i}" for i in range(len(workers[0].index.tracks))]
    while len(asks) < count:
        width = span * 10.0 ** rng.uniform(-6.0, 0.0)
        t0 = lo + rng.uniform(-0.01 * span, span - width)
        ask = {"t0": repr(t0), "t1": repr(t0 + width)}
        ask["width"] = str(rng.choice([1500, 1500, 333, 4000]))
        if rng.random() < 0.2:
            ask["tracks"] = rng.choice(tracks)
        if rng.random() < 0.1:
            ask["max_items"] = str(rng.choice([50, 1000]))
        asks.append(ask)
    return asks


@pytest.mark.parametrize("trace", TRACES)
def test_window_answers_are_numpys_byte_for_byte(
    trace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    workers = [WorkerTrace(None, corpus_model(trace))]
    asks = windows(workers, 150, seed=len(trace))
    routes = ("trace", "range_summary", "flows")
    compiled = {r: [encoded(r, workers, a) for a in asks] for r in routes}
    without_passes(monkeypatch)
    for route in routes:
        plain = [encoded(route, workers, a) for a in asks]
        differ = [a for a, x, y in zip(asks, compiled[route], plain) if x != y]
        assert not differ, f"{route}: {len(differ)} windows differ, first {differ[0]}"
    counted = [msgspec.json.decode(b) for b in compiled["trace"]]
    assert sum(d["item_count"] for d in counted) > 1000  # windows that hold events
    assert any(any(t["counter"] for t in d["tracks"]) for d in counted)  # and counters


def series_both_ways(counter: Counter, t0: float, t1: float, buckets: int) -> list[Any]:
    compiled = counter_series(counter, t0, t1, buckets)
    keep = counters._passes
    counters._passes = None
    try:
        plain = counter_series(counter, t0, t1, buckets)
    finally:
        counters._passes = keep
    return [compiled, plain]


@pytest.mark.parametrize("seed", range(30))
def test_sample_counter_series(seed: int) -> None:
    """Samples on bucket edges, repeated times, runs of equal values, NaN samples, buckets
    holding fewer samples than a fine block and more than many blocks."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    times = np.sort(rng.choice(np.arange(0.0, 500.0, 0.5), n))
    values = rng.choice([0.0, 1.0, 5.0, 7.5, -2.0], n)
    if seed % 3 == 0:
        values[rng.integers(0, n, 3)] = np.nan
    counter = Counter("c", "c", "memory_allocated", "bytes", None, 10.0, times=times, values=values)
    asks = ((0.0, 500.0, 100), (0.0, 500.0, 3), (-20.0, 10.0, 7), (100.5, 101.0, 50), (499, 900, 3))
    for t0, t1, buckets in asks:
        (cs, cv), (ps, pv) = series_both_ways(counter, t0, t1, buckets)
        assert cs.tobytes() == ps.tobytes()
        assert cv.tobytes() == pv.tobytes()


def test_negative_zero_samples_are_numpys() -> None:
    """A -0.0 sample beside 0.0 ones: which zero a bucket shows is numpy's order's."""
    times = np.arange(0.0, 200.0)
    values = np.where(np.arange(200) % 3 == 0, -0.0, 0.0)
    counter = Counter("c", "c", "memory_allocated", "bytes", None, 0.0, times=times, values=values)
    (cs, cv), (ps, pv) = series_both_ways(counter, 0.0, 200.0, 7)
    assert counter.negative_zero
    assert cs.tobytes() == ps.tobytes() and cv.tobytes() == pv.tobytes()


@pytest.mark.parametrize("seed", range(30))
def test_utilization_counter_series(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400 if seed % 2 else 4000))  # many coarse runs (_passes.COARSE)
    starts = rng.uniform(0.0, 1000.0, n)
    ends = starts + rng.choice([0.0, 0.001, 1.0, 30.0, 300.0], n)
    counter = Counter("u", "u", "gpu_utilization", "fraction", 0, 1.0)
    counter.union = IntervalUnion(starts, ends)
    for t0, t1, buckets in ((0.0, 1000.0, 1500), (-50.0, 2000.0, 9), (10.0, 10.5, 40)):
        (cs, cv), (ps, pv) = series_both_ways(counter, t0, t1, buckets)
        assert cs.tobytes() == ps.tobytes()
        assert cv.tobytes() == pv.tobytes()


def records(rng: np.random.Generator, n: int, groups: int) -> dict[str, np.ndarray]:
    """Bucket records sorted by (group, start), with equal keys and equal weights."""
    group = np.sort(rng.integers(0, groups, n)).astype(np.int64)
    start = rng.choice(np.arange(0.0, 50.0, 2.5), n)
    order = np.lexsort((start, group))
    group, start = group[order], start[order]
    busy = rng.choice([0.5, 1.0, 2.0], n)
    return {
        "group": group,
        "start": start,
        "end": start + rng.choice([0.5, 1.0, 4.0], n),
        "count": rng.integers(1, 4, n),
        "busy": busy,
        "name": rng.integers(0, 6, n),
        "dbusy": busy,
        "pos": rng.integers(-1, 100, n),
    }


@pytest.mark.parametrize("seed", range(40))
def test_merged_blocks(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sorted parts merged (equal keys across them), one part, and a part out of order
    (the compiled merge declines it); weights tied inside blocks, a NaN weight."""
    rng = np.random.default_rng(seed)
    parts = [records(rng, int(rng.integers(1, 80)), 4) for _ in range(1 + seed % 2)]
    if seed % 5 == 0:
        parts[0]["start"] = parts[0]["start"][::-1].copy()
    if seed % 7 == 0:
        parts[-1]["dbusy"][0] = np.nan
    bucket = float(rng.choice([1.0, 3.0, 10.0]))
    compiled = window._merge_blocks(parts, bucket)
    monkeypatch.setattr(window, "_passes", None)
    plain = window._merge_blocks(parts, bucket)
    for x, y in zip(compiled, plain):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("seed", range(20))
def test_segment_search(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty segments, targets below, on and above every value, both sides, few segments
    (the per-segment searches) and many (the bisection)."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, 2000, 2 * (1 + seed * 20)))
    lo, hi = cuts[0::2].astype(np.int64), cuts[1::2].astype(np.int64)
    values = np.sort(rng.choice(np.arange(0.0, 30.0), 2000))
    target = rng.choice(np.arange(-1.0, 32.0, 0.5), lo.size)
    for strict in (False, True):
        compiled = window.segment_search(values, lo, hi, target, strict)
        with monkeypatch.context() as m:
            m.setattr(window, "_passes", None)
            plain = window.segment_search(values, lo, hi, target, strict)
        assert np.array_equal(compiled, plain)
        assert ((compiled >= lo) & (compiled <= hi)).all()
