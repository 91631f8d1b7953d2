"""Honest aggregates: events whose time cannot be trusted (second copies, `"ts": 0`, off
the clock) are left out of the Overview's and the Kernel view's numbers, which say how
many they left out; on a clean trace nothing moves. Recommendations of a trace with
errors carry a caveat."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_path
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.overview.view import overview
from kinetoscope.ingest.build import build_model

TRACES = {
    "a100": "hta/tests/data/critical_path/alexnet/"
    "benchmark_result_2869224_1695835535_trace.json.gz",
    "h100": "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "mi250": "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
}


def _doc(rel: str) -> dict[str, Any]:
    doc = json.loads(gzip.decompress(corpus_path(rel).read_bytes()))
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def _views(doc: dict[str, Any], path: Path) -> tuple[Any, Any]:
    path.write_text(json.dumps(doc))
    model = build_model(str(path))
    return overview(model), kernels(model)


def _damage(doc: dict[str, Any]) -> int:
    """Copies of 4 kernels, 3 kernels at ts 0, 2 kernels an hour late: 9 kernel events."""
    kernel_events = [
        e for e in doc["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"
    ]
    late = max(float(e["ts"]) for e in doc["traceEvents"] if "ts" in e) + 3600e6
    added = [dict(e) for e in kernel_events[:4]]
    added += [{**kernel_events[0], "ts": 0, "dur": 0, "name": f"zero{i}"} for i in range(3)]
    added += [{**kernel_events[0], "ts": late + i, "name": f"late{i}"} for i in range(2)]
    doc["traceEvents"] += added
    return len(added)


@pytest.mark.parametrize("vendor", sorted(TRACES))
def test_damaged_events_are_left_out_and_said(vendor: str, tmp_path: Path) -> None:
    doc = _doc(TRACES[vendor])
    clean_ov, clean_k = _views(doc, tmp_path / "clean.json")
    assert (clean_ov["left_out_events"], clean_k["left_out_events"]) == (0, 0)
    added = _damage(doc)
    ov, k = _views(doc, tmp_path / "damaged.json")
    assert (ov["left_out_events"], k["left_out_events"]) == (added, added)
    # The numbers are those of the clean trace.
    for key in ("kernel_count", "total_us", "tensor_core_time_us", "rows"):
        assert k[key] == clean_k[key], key
    for key in ("breakdown_us", "steps", "devices", "step_count"):
        assert ov[key] == clean_ov[key], key
    # ... and every recommendation says what may distort it.
    assert [r["id"] for r in ov["recommendations"]] == [
        r["id"] for r in clean_ov["recommendations"]
    ]
    for rec in ov["recommendations"]:
        assert "3 zero_timestamps" in rec["message"] and "4 duplicate_events" in rec["message"]
        assert "2 clock_outlier" in rec["evidence"]["caveat"]
    for rec in clean_ov["recommendations"]:
        assert "caveat" not in rec["evidence"]
