"""Graph-replay attribution against the independent checker (tests/independent/replay.py):
per trace with graph launches (every corpus trace that has one, the H100 traces of
tests/data/h100, and a built diffusion-serving trace whose capture holds a launch more
than its replays), the replayed kernels, how many are matched to a captured launch, and
the matched device time per capturing op name, from the Kernels view's `graph_replay`
summary and the Operators view's `replayed_us`.

The checker leaves out one rule on purpose: on CUDA it does not read a captured call's
kernel from the warm-up run (the product does). Where that matters (look-alike captures
naming different ops) the two could differ; on these traces the look-alike captures name
the same ops, and they agree."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from corpus import MISSING_ID, corpus_traces
from independent.replay import replay_counts
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import capture_files
from test_graph_replay import capture, hip, replay

H100 = Path(__file__).parent / "data" / "h100"


def _has_graph_launch(path: Path) -> bool:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            return b"GraphLaunch" in f.read()
    except (OSError, EOFError):
        return False  # the damaged files: not a replay trace


@functools.cache
def _replay_traces() -> list[Any]:
    out: list[Any] = []
    for param in corpus_traces():
        path = param.values[0] if hasattr(param, "values") else param
        if getattr(param, "id", None) == MISSING_ID or _has_graph_launch(Path(path)):
            out.append(param)
    return out + sorted(p for p in H100.glob("*/gpu0*.json.gz") if _has_graph_launch(p))


def product(path: Path) -> tuple[int, int, dict[str, float]]:
    model = build_model(str(path))
    captures = [build_model(p) for p in capture_files(str(path))]
    model.attach_captures(lambda: captures)
    summary = kernels(model, "op")["graph_replay"]
    assert summary is not None
    ops = {r["name"]: r["replayed_us"] for r in operators(model)["rows"] if r["replayed_us"]}
    return summary["kernels"], summary["matched"], ops


def _agree(path: Path) -> tuple[int, int]:
    expected = replay_counts(path)
    assert expected is not None
    n, matched, ops = product(path)
    assert (n, matched) == (expected.kernels, expected.matched)
    assert set(ops) == set(expected.op_us)
    for name, us in expected.op_us.items():
        assert ops[name] == pytest.approx(us, abs=0.002), name
    return n, matched


@pytest.mark.parametrize("path", _replay_traces(), ids=lambda p: str(Path(p).parent.name))
def test_replay_attribution_agrees(path: Path) -> None:
    _agree(Path(path))


def test_the_corpus_has_replays_to_check() -> None:
    corpus = [p for p in _replay_traces() if "h100" not in str(p)]
    if corpus and getattr(corpus[0], "id", None) == MISSING_ID:
        pytest.skip("needs the trace corpus")
    names = {Path(p).name for p in corpus}
    assert {"graph_execution.json.gz", "test.json.gz", "rank0.json.gz"} <= names


def test_a_diffusion_serving_shaped_trace_agrees(tmp_path: Path) -> None:
    """A capture of 601 launches (a last GEMM that never replays) in capture_traces/, and
    three replays of its first 600 under a Torch-Compiled Region: all 1800 matched."""
    folder = tmp_path / "serve"
    (folder / "capture_traces").mkdir(parents=True)
    names = [("aten::mm", "gemm"), ("aten::gelu", "gelu"), ("aten::add", "add")]
    launches = [(op, hip(k, 4 + i % 7)) for i in range(600) for op, k in [names[i % 3]]]
    cap = TraceBuilder()
    capture(cap, 0, [*launches, ("aten::addmm", hip("gemm", 2))])
    cap.write(folder / "capture_traces" / "graph_capture_rank_0.1.pt.trace.json")
    run = TraceBuilder()
    run.op("Torch-Compiled Region", 0, 50_000, cat="user_annotation")
    kernels_ = [(a["kernel"], {"grid": a["grid"], "block": a["block"]}) for _, a in launches]
    at = 10.0
    for _ in range(3):
        at = replay(run, at, kernels_, launch="hipGraphLaunch")
    path = run.write(folder / "worker0.2.pt.trace.json")
    assert _agree(path) == (1800, 1800)
    assert product(path)[2] == {"aten::mm": 2400.0, "aten::gelu": 2400.0, "aten::add": 2400.0}
