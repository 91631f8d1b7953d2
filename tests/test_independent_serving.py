"""The serving view's iterations against an independent computation from the raw JSON
(tests/independent/serving.py), over every corpus trace, the recorded serving traces of
tests/data/serving and a built one with GPU work: where each iteration starts and ends,
its phase, tokens and GPU busy time, and per phase the count, median and p90 of the
iteration times. Traces without engine markers must have no iterations on both sides."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import corpus_trace_model, corpus_traces
from independent.serving import summary
from kinetoscope.analysis.serving import serving
from kinetoscope.ingest.build import build_model
from test_serving import annotated_vllm

SERVING_DATA = Path(__file__).parent / "data" / "serving"
TOL = 0.002  # µs: both sides round to the nanosecond


def _agree(view: dict, facts: dict) -> None:
    got = [
        (i["start_us"], i["dur_us"], i["phase"], i["tokens"], i["gpu_busy_us"])
        for i in view["iterations"]
    ]
    want = [
        (i["start_us"], i["dur_us"], i["phase"], i["tokens"], i["gpu_busy_us"])
        for i in facts["iterations"]
    ]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[2:4] == w[2:4]
        assert g[0] == pytest.approx(w[0], abs=TOL) and g[1] == pytest.approx(w[1], abs=TOL)
        assert g[4] == pytest.approx(w[4], abs=TOL)
    assert set(view["phases"]) == set(facts["phases"])
    for phase, stats in facts["phases"].items():
        mine = view["phases"][phase]
        assert mine["count"] == stats["count"]
        assert mine["dur_us"]["median"] == pytest.approx(stats["median"], abs=TOL)
        assert mine["dur_us"]["p90"] == pytest.approx(stats["p90"], abs=TOL)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: Path(p).name)
def test_corpus_iterations_agree_with_the_raw_json(path: Path) -> None:
    if "derived" in Path(path).parts:
        pytest.skip("bad input: covered by test_decode and test_damaged_files")
    facts = summary(path)
    view = serving(corpus_trace_model(path))
    _agree(view, facts)
    if not facts["iterations"]:
        assert view["reason"]  # says why, never invents iterations


@pytest.mark.parametrize(
    "path", sorted(SERVING_DATA.rglob("*.pt.trace.json.gz")), ids=lambda p: p.parent.name
)
def test_recorded_iterations_agree_with_the_raw_json(path: Path) -> None:
    view = serving(build_model(str(path)))
    assert view["iteration_count"] == 7
    _agree(view, summary(path))


def test_built_gpu_iterations_agree_with_the_raw_json(tmp_path: Path) -> None:
    path = annotated_vllm().write(tmp_path / "w.pt.trace.json")
    _agree(serving(build_model(str(path))), summary(path))


@pytest.mark.parametrize("shapes", [True, False], ids=["shapes", "no-shapes"])
@pytest.mark.parametrize("vendor", ["cuda", "rocm"])
def test_built_vllm_v1_phases_agree_with_the_raw_json(
    tmp_path: Path, vendor: str, shapes: bool
) -> None:
    """vLLM V1's default shape (no annotation): the phases the checker derives from the
    raw JSON (the ops' leading dims, graph launch calls, kernel time) are the view's."""
    from serving_v1_jobs import CUDA, ROCM, vllm_v1_trace

    trace = vllm_v1_trace(CUDA if vendor == "cuda" else ROCM, shapes)
    path = trace.write(tmp_path / "w.pt.trace.json")
    facts = summary(path)
    assert [i["phase"] for i in facts["iterations"]].count("decode") == 9
    _agree(serving(build_model(str(path))), facts)
