"""A ROCm trace's GPU `stream` ids, per producer version (`analysis/core/rocm_streams.py`):
HSA hardware queues until kineto #1424 (June 2026), HIP streams after, told apart by the
`hsa_queue` field #1425 added to every GPU activity. Built traces in both shapes
(libkineto's `"device": {}, "stream": {}, "hsa_queue": {}` args), an NVIDIA trace, and the
corpus's real MI300X trace (roctracer 4.1, queue ids): the health check and the Trace
page's track labels say which."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.health.view import health
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.trace_view.workers import WorkerTrace


def _amd(hsa_queue: bool) -> TraceBuilder:
    """Two kernels of an MI300X trace (HIP runtime launches), with or without `hsa_queue`."""
    t = TraceBuilder()
    t.header["roctracer_version"] = 4
    t.header["deviceProperties"] = [{"id": 0, "name": "AMD Instinct MI300X"}]
    op = t.op("aten::mm", 0, 100)
    for i in range(2):
        extra = {"hsa_queue": 42} if hsa_queue else {}
        t.launch(10 + 30 * i, 5, op, gpu_ts=20 + 30 * i, gpu_dur=10, name="Cijk_gemm",
                 runtime="hipLaunchKernel", stream=3, kind="kernel", **extra)  # fmt: skip
    return t


def _check(model: TraceModel) -> dict[str, Any]:
    found = {c["id"]: c for c in health(model)["checks"]}["stream_ids_are_hsa_queues"]
    return dict(found)


def _gpu_labels(model: TraceModel) -> list[str]:
    route = ENDPOINTS["tracks"]
    tracks = route.of_traces([WorkerTrace(None, model)], route.decode({}))["tracks"]
    return [t["label"] for t in tracks if t["kind"] == "gpu"]


@pytest.mark.parametrize("hsa_queue", [False, True], ids=["before #1424", "since #1425"])
def test_the_stream_ids_meaning_by_producer_version(tmp_path: Path, hsa_queue: bool) -> None:
    model = _amd(hsa_queue).model(tmp_path)
    check = _check(model)
    assert check["severity"] == "info" and check["count"] == (0 if hsa_queue else 2)
    assert _gpu_labels(model) == ["GPU 0 stream 3" if hsa_queue else "GPU 0 HSA queue 3"]


def test_an_nvidia_trace_has_streams(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.header["cupti_version"] = 24
    op = t.op("aten::mm", 0, 100)
    t.launch(10, 5, op, gpu_ts=20, gpu_dur=10, name="sm90_gemm")
    model = t.model(tmp_path)
    assert _check(model)["count"] == 0 and _gpu_labels(model) == ["GPU 0 stream 7"]


def test_the_real_mi300x_trace_has_queue_ids() -> None:
    model = corpus_model(
        "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"
    )
    check = _check(model)
    assert check["count"] and check["count"] >= 534 and check["examples"]
    assert all("HSA queue" in label for label in _gpu_labels(model))
