"""The compiled pass of the critical path's host pieces (`analysis/critical_path/
_pieces.c`) and its numpy twin give the same pieces, every column: on corpus traces, on
random jobs of nested, touching, zero-length and overlapping ranges with runtime calls,
blocking calls, steps and host transfers; boundaries out of order are handed to the twin.
Skips where no C compiler built it (CI asserts it is built)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.analysis.core.common import launch_rows
from kinetoscope.analysis.core.host_ranges import build_ranges, host_ranges
from kinetoscope.analysis.critical_path import host
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel

pytestmark = pytest.mark.skipif(host._pieces is None, reason="the compiled pass is not built")

TRACES = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "hta/tests/data/trace_diff/control/control.json.gz",
    "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz",
)


def _both(model: TraceModel, monkeypatch: pytest.MonkeyPatch) -> tuple[host.Pieces, host.Pieces]:
    compiled = host.host_pieces(model)
    with monkeypatch.context() as patch:
        patch.setattr(host, "_pieces", None)
        return compiled, host.host_pieces(model)


def _assert_same(compiled: host.Pieces, twin: host.Pieces) -> None:
    for column in host.Pieces.__dataclass_fields__:
        a, b = getattr(compiled, column), getattr(twin, column)
        assert a.dtype.kind == b.dtype.kind, column
        assert np.array_equal(a, b), column


@pytest.mark.parametrize("name", TRACES)
def test_corpus_pieces_equal(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled, twin = _both(build_model(str(corpus_path(name))), monkeypatch)
    assert len(compiled) > 1000
    _assert_same(compiled, twin)


def _random_job(rng: np.random.Generator, folder: Path) -> TraceModel:
    """Steps, ops and launch or synchronize calls on three threads: children inside their
    parent, touching, equal starts, zero lengths, ranges overlapping without nesting,
    and host transfers (gloo) that pieces name as such."""
    b = TraceBuilder()
    b.step(1, 0.0, 150.0)
    for tid in (1, 2, 5):
        t = 0.0
        for _ in range(int(rng.integers(20, 60))):
            t += float(rng.choice([0.0, 0.5, 3.0]))
            dur = float(rng.choice([0.0, 1.0, 7.5, 20.0]))
            name = str(rng.choice(["aten::outer", "gloo:all_reduce"]))
            b.op(name, t, dur, tid=tid)
            inner = t + float(rng.choice([0.0, 0.25, 2.0]))
            b.op("aten::inner", inner, float(rng.choice([0.0, 0.5, dur, dur + 1.0])), tid=tid)
            call = str(rng.choice(["cudaLaunchKernel", "cudaDeviceSynchronize"]))
            b.runtime(call, inner + float(rng.choice([0.0, 0.1])), 0.3, tid=tid)
    return b.model(folder)


def test_random_jobs_equal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    blocking = transfers = kept = 0
    for k in range(25):
        folder = tmp_path / str(k)
        folder.mkdir()
        compiled, twin = _both(_random_job(rng, folder), monkeypatch)
        _assert_same(compiled, twin)
        kept += len(compiled)
        blocking += int(compiled.blocking_call.sum())
        transfers += int((compiled.transfer >= 0).sum())
    assert kept > 2000 and blocking > 100 and transfers > 100  # every kind of piece met


def test_unsorted_boundaries_go_to_numpy(tmp_path: Path) -> None:
    model = _random_job(np.random.default_rng(3), tmp_path)
    ranges = host_ranges(model)
    calls = build_ranges(model, launch_rows(model))
    thread = np.full(4, ranges.threads[0], dtype=np.int64)
    unsorted = np.array([5.0, 1.0, 7.0, 9.0])
    assert host._compiled_pieces(model, ranges, calls, thread, unsorted) is None
    assert host._compiled_pieces(model, ranges, calls, thread, np.sort(unsorted)) is not None
