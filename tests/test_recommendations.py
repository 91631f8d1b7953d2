"""Recommendations that fit the hardware and the cause: no TF32 before compute capability
8.0; no "overlap communication" when the communication time is mostly waiting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.recommendations import communication_advice
from kinetoscope.analysis.overview.view import overview

RESNET_V100 = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


def by_id(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in view["recommendations"]}


def fp32_gemm_trace(major: int, minor: int, name: str = "NVIDIA GPU") -> TraceBuilder:
    """A step whose GPU time is an fp32 GEMM (no tensor cores) of a tensor-core eligible op."""
    t = TraceBuilder()
    t.header["deviceProperties"] = [
        {
            "id": 0,
            "name": name,
            "totalGlobalMem": 2**34,
            "computeMajor": major,
            "computeMinor": minor,
        }
    ]
    t.step(1, 0, 1000)
    mm = t.op("aten::mm", 10, 50)
    t.launch(20, 5, mm, gpu_ts=100, gpu_dur=800, name="volta_sgemm_128x64_nn")
    return t


@pytest.mark.parametrize(("major", "minor", "tf32"), [(7, 0, False), (7, 5, False), (8, 0, True)])
def test_tf32_only_from_compute_capability_8(
    tmp_path: Path, major: int, minor: int, tf32: bool
) -> None:
    rec = by_id(overview(fp32_gemm_trace(major, minor).model(tmp_path)))["tensor_cores"]
    assert ("TF32" in rec["message"]) == tf32
    assert rec["evidence"]["tf32"] is tf32
    assert rec["evidence"]["compute_capability"] == f"{major}.{minor}"
    assert "torch.autocast" in rec["message"]


def test_no_tf32_on_amd(tmp_path: Path) -> None:
    """HIP reports MI300X as 9.4: not NVIDIA's scale, and TF32 is not AMD's advice."""
    trace = fp32_gemm_trace(9, 4, name="AMD Instinct MI300X")
    rec = by_id(overview(trace.model(tmp_path)))["tensor_cores"]
    assert "TF32" not in rec["message"] and rec["evidence"]["tf32"] is False


@pytest.mark.corpus
def test_no_tf32_on_the_v100_sample() -> None:
    """The 2021 sample ran on V100s (7.0): the old plugin's tensor-core advice stands,
    without TF32."""
    view = overview(corpus_model(RESNET_V100))
    rec = by_id(view)["tensor_cores"]
    assert view["devices"][0]["compute_capability"] == "7.0"
    assert "TF32" not in rec["message"] and not rec["evidence"]["tf32"]
    assert "torch.autocast" in rec["message"]


def allreduce_trace(world_size: int, training: bool = True) -> TraceBuilder:
    """A step that is 60 % all_reduce kernel (after a backward op, when `training`)."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": world_size}
    t.step(1, 0, 1000)
    if training:
        t.op("autograd::engine::evaluate_function: MmBackward0", 2, 5)
    comm = t.op("record_param_comms", 10, 20)
    t.launch(15, 5, comm, gpu_ts=100, gpu_dur=600, name="ncclDevKernel_AllReduce_Sum_f32_RING_LL")
    return t


def test_one_trace_of_a_job_cannot_tell_waiting_from_transfer(tmp_path: Path) -> None:
    rec = by_id(overview(allreduce_trace(2).model(tmp_path)))["communication"]
    assert rec["evidence"]["sync_wait_pct"] is None
    assert "cannot tell waiting for other ranks from transfer" in rec["message"]
    assert "straggler" in rec["message"] and "overlap" in rec["message"]


def test_a_single_rank_has_no_one_to_wait_for(tmp_path: Path) -> None:
    rec = by_id(overview(allreduce_trace(1).model(tmp_path)))["communication"]
    assert rec["evidence"]["sync_wait_pct"] == 0.0
    assert "none of it is waiting" in rec["message"]
    assert "overlap communication with computation" in rec["message"]


def test_inference_gets_no_training_advice(tmp_path: Path) -> None:
    """A tensor-parallel inference (or serving) rank: no gradient to bucket or accumulate,
    and no Distributed view of a run it is not part of to point at."""
    rec = by_id(overview(allreduce_trace(2, training=False).model(tmp_path)))["communication"]
    assert "DDP" not in rec["message"] and "gradient" not in rec["message"]
    assert "tensor-parallel collectives" in rec["message"]
    assert "a run of its ranks' traces together has a Distributed view" in rec["message"]


def test_mostly_waiting_points_at_the_straggler() -> None:
    waiting = communication_advice(30.0, 300.0, ["ProfilerStep#1"], 96.0)
    assert waiting["id"] == "communication_wait"
    assert waiting["link"] == {"view": "distributed", "anchor": "stragglers"}
    assert "96 % of it is waiting" in waiting["message"]
    assert "Overlapping communication would not help" in waiting["message"]
    transfer = communication_advice(30.0, 300.0, [], 20.0)
    assert transfer["id"] == "communication" and transfer["evidence"]["sync_wait_pct"] == 20.0
    assert "overlap communication with computation" in transfer["message"]
    # the threshold: half of the communication time
    assert communication_advice(30.0, 300.0, [], 50.0)["id"] == "communication_wait"
    assert communication_advice(30.0, 300.0, [], 49.9)["id"] == "communication"
