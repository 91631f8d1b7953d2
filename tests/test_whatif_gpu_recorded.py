"""The two-stream GPU job recorded on an H200 (tests/data/gpu_streams, its README): a side
stream's host-to-device copy that the default stream waits for, matrix products beside it,
and a copy back that waits for the default stream.

- Recorded with CUDA sync events on, and the same trace stripped of them, the critical path
  and every prediction are the same (within 1 %): on CUDA 13 the sync events name neither
  the stream nor the record call a wait is for, so both read the waits from the calls.
- From the baseline recorded with the profiler's default settings, the what-if of each
  change is within 5 % of the changed job's measured median step (wall clock, measured by
  the recording script), and off the path it predicts no change."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from kinetoscope.analysis.critical_path.build import rank_graph
from kinetoscope.analysis.critical_path.run import run_critical_path, run_whatif
from kinetoscope.ingest.build import build_model
from recorded_jobs import job_context, measured_file, predicted_median

JOB = Path(__file__).parent / "data" / "gpu_streams"
CHANGED = ["copy_half", "gemm_half", "gemm_double", "offload_double"]
H2D = "Memcpy HtoD (Pinned -> Device)"
D2H = "Memcpy DtoH (Device -> Pinned)"
WITHIN = 0.05


def _trace(run: str) -> Path:
    (path,) = (JOB / run).glob("*.pt.trace.json.gz")
    return path


def _events(run: str) -> list[dict[str, Any]]:
    return json.loads(gzip.decompress(_trace(run).read_bytes()))["traceEvents"]


def _stripped_job(tmp_path: Path) -> Path:
    """A folder of two runs: `recorded` (`baseline_sync` as recorded) and `stripped` (the
    same trace without its cuda_sync events, from the raw JSON: the shape the profiler's
    default settings record)."""
    doc = json.loads(gzip.decompress(_trace("baseline_sync").read_bytes()))
    kept = [e for e in doc["traceEvents"] if e.get("cat") != "cuda_sync"]
    assert len(kept) < len(doc["traceEvents"])
    for run, events in (("recorded", doc["traceEvents"]), ("stripped", kept)):
        (tmp_path / run).mkdir()
        out = tmp_path / run / _trace("baseline_sync").name
        out.write_bytes(gzip.compress(json.dumps({**doc, "traceEvents": events}).encode()))
    return tmp_path


def _path_shape(view: Any) -> list[tuple[Any, ...]]:
    return [(s["kind"], s["name"], s["start_us"], s["dur_us"]) for s in view["segments"]]


def _edges(trace: Path) -> set[tuple[Any, ...]]:
    """The rank graph's edges, each as its ends (a node's name, recorded start and whether
    the end is the node's start or end event) and its role."""
    g = rank_graph(build_model(str(trace))).graph
    name = [g.names[c] for c in g.name.tolist()]
    start = g.start.tolist()

    def end(event: int) -> tuple[str, float, int]:
        return name[event // 2], start[event // 2], event % 2

    roles = g.edge_role.tolist()
    return {
        (end(s), end(d), role)
        for s, d, role in zip(g.edge_src.tolist(), g.edge_dst.tolist(), roles, strict=True)
    }


def test_the_sync_events_and_their_absence_give_the_same_path_and_predictions(
    tmp_path: Path,
) -> None:
    job = _stripped_job(tmp_path)
    recorded = run_critical_path(job_context(job, "recorded"))
    stripped = run_critical_path(job_context(job, "stripped"))
    assert _path_shape(recorded) == _path_shape(stripped)
    (a_trace,), (b_trace,) = (job / "recorded").iterdir(), (job / "stripped").iterdir()
    assert _edges(a_trace) == _edges(b_trace)
    for variant in CHANGED:
        change = measured_file(JOB)[variant]["change"]
        a = run_whatif(job_context(job, "recorded", change))
        b = run_whatif(job_context(job, "stripped", change))
        assert a["predicted_span_us"] == pytest.approx(b["predicted_span_us"], rel=0.01)
        for x, y in zip(a["steps"], b["steps"], strict=True):
            assert x["predicted_us"] == pytest.approx(y["predicted_us"], rel=0.01), variant


def test_the_recorded_sync_events_name_no_record_so_the_waits_come_from_the_calls() -> None:
    waits = [e for e in _events("baseline_sync") if e.get("name") == "Stream Wait Event"]
    assert len(waits) == 24  # two a step, 12 steps
    assert {e["args"]["wait_on_cuda_event_record_corr_id"] for e in waits} == {-1}
    assert {e["args"]["wait_on_stream"] for e in waits} == {-1}
    said = " ".join(run_critical_path(job_context(JOB, "baseline_sync"))["assumptions"])
    assert "24 recorded cross-stream waits name no cudaEventRecord" in said
    assert "24 cross-stream waits inferred" in said


def test_the_inferred_waits_are_the_two_the_job_makes_each_step() -> None:
    """By the job's construction (samples/record_gpu_streams.py): the add waits for the
    host-to-device copy, the copy back waits for the add."""
    model = build_model(str(_trace("baseline")))
    rg = rank_graph(model)
    assert rg.inferred is not None
    names = model.names_of(rg.acts.rows)
    pairs = [
        (names[k], names[n])
        for k, n in zip(rg.inferred.waited.tolist(), rg.inferred.waiting.tolist(), strict=True)
    ]
    add = [n for _, n in pairs if n not in (H2D, D2H)]
    assert len(pairs) == 24 and len(set(add)) == 1 and "add" in add[0]
    assert sorted(set(pairs)) == sorted({(H2D, add[0]), (add[0], D2H)})


@pytest.mark.parametrize("variant", CHANGED)
def test_prediction_within_5_percent_of_the_measured_median_step(variant: str) -> None:
    entry = measured_file(JOB)[variant]
    predicted = predicted_median(run_whatif(job_context(JOB, "baseline", entry["change"])))
    assert abs(predicted - entry["median_us"]) <= WITHIN * entry["median_us"], predicted


def test_the_products_off_the_path_predict_no_change() -> None:
    entry = measured_file(JOB)["gemm_half"]
    view = run_whatif(job_context(JOB, "baseline", entry["change"]))
    assert view["saving_us"] == 0.0
    assert view["matched"] == entry["knobs"]["gemm_repeats"] * 12  # the products, 12 steps


def test_doubled_products_move_the_path_off_the_copy() -> None:
    """The copy is on the baseline's path; the products are not until they outlast it, in
    the prediction and in the changed job's recording."""

    def on_path(segments: list[dict[str, Any]], kind: str) -> set[str]:
        return {s["name"] for s in segments if s["kind"] == kind}

    baseline = run_critical_path(job_context(JOB, "baseline"))["segments"]
    assert H2D in on_path(baseline, "memcpy")
    # only the add: the products are hidden behind the copy
    assert all("elementwise" in k for k in on_path(baseline, "kernel"))
    predicted = run_whatif(
        job_context(JOB, "baseline", measured_file(JOB)["gemm_double"]["change"])
    )
    assert predicted["saving_us"] < 0
    # The changed job's own recording agrees: its path runs through the products.
    changed = run_critical_path(job_context(JOB, "gemm_double"))["segments"]
    for segments in (predicted["critical_path"], changed):
        assert H2D not in on_path(segments, "memcpy")
        assert any("elementwise" not in k for k in on_path(segments, "kernel"))
