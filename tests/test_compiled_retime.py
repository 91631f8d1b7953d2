"""The compiled evaluation of a critical path graph (`analysis/critical_path/_retime.c`)
and its Python twin give the same event times and binding edges, bit for bit: on built
jobs, on a corpus trace under changes, and on random DAGs; the compiled walk back to a
port ends where the Python walk does (one walk, or every walk of a list in one pass).
Skips where no C compiler
built it (CI asserts it is built)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from corpus import corpus_path
from critical_path_default_jobs import backward_thread_trace, send_recv_trace
from kinetoscope.analysis.critical_path import retime
from kinetoscope.analysis.critical_path.changes import Change
from kinetoscope.analysis.critical_path.graph import GraphBuilder, duration_edges, finish
from kinetoscope.analysis.critical_path.span import span_joint
from kinetoscope.ingest.build import build_model

V100 = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)
pytestmark = pytest.mark.skipif(retime._retime is None, reason="the compiled pass is not built")


def _same(graph: object, lag: np.ndarray | None = None) -> None:
    compiled = retime.evaluate(graph, lag)  # type: ignore[arg-type]
    python = retime.evaluate_python(graph, compiled.lag)  # type: ignore[arg-type]
    assert np.array_equal(compiled.value, python.value)
    assert np.array_equal(compiled.binding, python.binding)


def test_built_jobs(tmp_path: Path) -> None:
    for name, trace in [
        ("send_recv", send_recv_trace(False)),
        ("backward", backward_thread_trace()),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        _same(span_joint(trace.model(folder)).graph)


def test_a_corpus_trace_under_changes() -> None:
    model = build_model(
        str(
            corpus_path(
                "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
            )
        )
    )
    joint = span_joint(model)
    _same(joint.graph)
    for change in (Change("kernel", "volta_sgemm_128x64_nt", 0.5), Change("rank_all", "", 3.0)):
        lag, _ = joint.lags(change)
        _same(joint.graph, lag)


def test_random_graphs() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        b = GraphBuilder()
        n = int(rng.integers(5, 300))
        start = np.sort(rng.uniform(0, 1000, n))
        nodes = b.nodes(
            0, np.zeros(n, np.int64), 0, np.full(n, -1), start, start + rng.uniform(0, 50, n)
        )
        graph = b.build()
        dst = rng.integers(1, n, 3 * n)
        src = rng.integers(0, n, 3 * n)
        keep = src < dst
        b.edges(
            2 * nodes[dst[keep]], 2 * nodes[src[keep]] + 1, 1, rng.uniform(-5, 5, int(keep.sum()))
        )
        graph = b.build()
        duration_edges(graph)
        _same(finish(graph))
        _same_walks(finish(graph), rng)


def _same_walks(graph: object, rng: np.random.Generator) -> None:
    """The compiled walk to the first port (a rank summary's local paths) ends where the
    Python walk does, from every event, with ports and without."""
    timing = retime.evaluate(graph)  # type: ignore[arg-type]
    events = timing.value.size
    for ports in (np.zeros(events, bool), rng.random(events) < 0.2):
        ends = []
        for event in range(events):
            links = retime.walk_back(graph, timing, event, -np.inf, ports)  # type: ignore[arg-type]
            assert retime.chain_origin(graph, timing, event, ports) == links[-1].event  # type: ignore[arg-type]
            ends.append(links[-1].event)
        # Every walk in one compiled pass (a rank summary's arrivals), in any order.
        starts = rng.permutation(events)
        batch = retime.chain_origins(graph, timing, starts, ports)  # type: ignore[arg-type]
        assert batch.tolist() == [ends[e] for e in starts.tolist()]


def test_origins_without_the_compiled_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the compiled pass is not built, `chain_origins` walks each event in Python:
    the same origins."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    n = 120
    start = np.sort(rng.uniform(0, 1000, n))
    nodes = b.nodes(0, np.zeros(n, np.int64), 0, np.full(n, -1), start, start + 5)
    dst, src = rng.integers(1, n, 3 * n), rng.integers(0, n, 3 * n)
    keep = src < dst
    b.edges(2 * nodes[dst[keep]], 2 * nodes[src[keep]] + 1, 1, np.zeros(int(keep.sum())))
    graph = b.build()
    duration_edges(graph)
    finish(graph)
    timing = retime.evaluate(graph)
    ports = rng.random(timing.value.size) < 0.2
    events = np.arange(timing.value.size)
    compiled = retime.chain_origins(graph, timing, events, ports)
    monkeypatch.setattr(retime, "_retime", None)
    assert retime.chain_origins(graph, timing, events, ports).tolist() == compiled.tolist()
