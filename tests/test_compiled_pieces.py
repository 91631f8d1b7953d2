"""The compiled passes of the critical path's host pieces (`analysis/critical_path/
_pieces.c`) and their numpy twins give the same pieces: on corpus traces (every column of
`host_pieces`), on random nested ranges and query times (`containing_sorted` equals
`HostRanges.containing`), and unsorted input is handed to the twin. Skips where no C
compiler built it (CI asserts it is built)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.analysis.core.host_ranges import build_ranges
from kinetoscope.analysis.critical_path import host
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel

pytestmark = pytest.mark.skipif(host._pieces is None, reason="the compiled passes are not built")

TRACES = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "hta/tests/data/trace_diff/control/control.json.gz",
)


def _numpy_pieces(model: TraceModel, monkeypatch: pytest.MonkeyPatch) -> host.Pieces:
    with monkeypatch.context() as patch:
        patch.setattr(host, "_pieces", None)
        return host.host_pieces(model)


@pytest.mark.parametrize("name", TRACES)
def test_corpus_pieces_equal(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model = build_model(str(corpus_path(name)))
    compiled = host.host_pieces(model)
    twin = _numpy_pieces(model, monkeypatch)
    assert len(compiled) > 1000
    for column in host.Pieces.__dataclass_fields__:
        assert np.array_equal(getattr(compiled, column), getattr(twin, column)), column


def _random_model(rng: np.random.Generator, folder: Path) -> TraceModel:
    """Ops on three threads: nested (children inside their parent), touching, equal
    starts, zero lengths and ranges that overlap without nesting."""
    b = TraceBuilder()
    for tid in (1, 2, 5):
        t = 0.0
        for _ in range(int(rng.integers(20, 60))):
            t += float(rng.choice([0.0, 0.5, 3.0]))
            dur = float(rng.choice([0.0, 1.0, 7.5, 20.0]))
            b.op("aten::outer", t, dur, tid=tid)
            inner = t + float(rng.choice([0.0, 0.25, 2.0]))
            b.op("aten::inner", inner, float(rng.choice([0.0, 0.5, dur, dur + 1.0])), tid=tid)
    return b.model(folder)


def test_random_containing_equal(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    inside = outside = 0
    for k in range(25):
        folder = tmp_path / str(k)
        folder.mkdir()
        model = _random_model(rng, folder)
        rows = np.flatnonzero(model.events["dur"] >= 0)
        index = build_ranges(model, rows)
        thread = np.sort(rng.choice(index.threads, 400))
        t = np.concatenate(
            [np.sort(rng.uniform(-5, 400, int((thread == k).sum()))) for k in np.unique(thread)]
        )
        t[rng.integers(0, t.size, 40)] = np.round(t[rng.integers(0, t.size, 40)])
        t = np.concatenate([np.sort(t[thread == k]) for k in np.unique(thread)])
        found = host.containing_sorted(index, thread, t)
        assert np.array_equal(found, index.containing(thread, t))
        inside += int((found >= 0).sum())
        outside += int((found < 0).sum())
    assert inside > 1000 and outside > 100  # both answers met


def test_unsorted_queries_fall_back(tmp_path: Path) -> None:
    model = _random_model(np.random.default_rng(3), tmp_path)
    index = build_ranges(model, np.flatnonzero(model.events["dur"] >= 0))
    thread = np.full(50, index.threads[0])
    t = np.random.default_rng(4).uniform(0, 200, 50)  # not sorted
    assert np.array_equal(host.containing_sorted(index, thread, t), index.containing(thread, t))
    bounds = host.piece_bounds(np.array([2, 1, 1]), np.array([0.0, 1.0, 2.0]))
    assert [a.tolist() for a in bounds] == [[1], [1.0], [2.0], [1.5]]
