"""The serving view on small built traces with hand-computed answers: iterations from
engine annotations (nested ones merged), from Python frames, from graph launches; the
phase rules; the GPU work of each iteration; per-phase statistics; and the traces that
have no iterations saying why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import CPU_TID, GPU_PID, TraceBuilder
from kinetoscope.analysis.serving import serving, supports
from kinetoscope.api.endpoints import span_pages, supported_views

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
FLASH = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>(Flash_fwd_params)"
PAGED = "void vllm::paged_attention_v2_kernel<float, float, 128, 16, 128, true, 512>(float*)"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
DECODE_ATTN = "void flashinfer::BatchDecodeWithPagedKVCacheKernel<true, 2u>(flashinfer::paged_kv_t)"
PREFILL_ATTN = "void flashinfer::BatchPrefillWithPagedKVCacheKernel<1u>(flashinfer::paged_kv_t)"


def graph_launch(
    t: TraceBuilder,
    ts: float,
    kernels: list[tuple[str, float, float]],
    runtime: str = "cudaGraphLaunch",
) -> None:
    """A graph launch call at `ts` whose replay runs `kernels` (name, start, duration)."""
    corr = t.runtime(runtime, ts, 3.0)
    for name, start, dur in kernels:
        t.events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": GPU_PID,
                "tid": 7,
                "ts": start,
                "dur": dur,
                "args": {"correlation": corr, "device": 0, "stream": 7},
            }
        )


def annotated_vllm() -> TraceBuilder:
    """A prefill, then two decode iterations (graph replays), the second with an
    all-reduce: the numbers of `test_iterations_from_annotations` come from these times."""
    t = TraceBuilder()
    t.annotation("execute_context_2(40)_generation_0(0)", 100, 100)
    t.launch(110, 5, t.new_id(), gpu_ts=150, gpu_dur=30, name=FLASH)
    t.launch(120, 5, t.new_id(), gpu_ts=185, gpu_dur=40, name=GEMM)
    t.annotation("execute_context_0(0)_generation_2(2)", 300, 50)
    graph_launch(t, 305, [(PAGED, 310, 20), (GEMM, 330, 10)])
    t.annotation("execute_context_0(0)_generation_2(2)", 400, 50)
    graph_launch(t, 402, [(PAGED, 420, 20), (GEMM, 440, 10)])
    t.launch(410, 3, t.new_id(), gpu_ts=455, gpu_dur=15, name=NCCL, stream=20)
    return t


def test_iterations_from_annotations(tmp_path: Path) -> None:
    view = serving(annotated_vllm().model(tmp_path))
    assert (view["engine"], view["source"], view["reason"]) == ("vllm", "annotations", None)
    its = view["iterations"]
    expected = [
        # phase, start, dur, host dur, gpu start, gpu end, busy, idle, scheduling, queue
        ("prefill", 100, 125, 100, 150, 225, 70, 5, 10, 40),
        ("decode", 300, 50, 50, 310, 340, 30, 0, 5, 5),
        ("decode", 400, 70, 50, 420, 470, 45, 5, 2, 18),
    ]
    got = [
        (
            i["phase"],
            i["start_us"],
            i["dur_us"],
            i["host_dur_us"],
            i["gpu_start_us"],
            i["gpu_end_us"],
            i["gpu_busy_us"],
            i["gpu_idle_us"],
            i["scheduling_us"],
            i["queue_us"],
        )
        for i in its
    ]
    assert got == expected
    assert [(i["gap_before_us"], i["gpu_gap_before_us"]) for i in its] == [
        (None, None),
        (75, 85),
        (50, 80),
    ]
    assert [(i["kernel_us"], i["graph_replayed_us"], i["graph_replayed_pct"]) for i in its] == [
        (70, 0, 0.0),
        (30, 30, 100.0),
        (45, 30, 66.67),
    ]
    assert [(i["tokens"], i["requests"]) for i in its] == [(40, 2), (2, 2), (2, 2)]
    assert [(i["collective_calls"], i["collective_us"]) for i in its] == [(0, 0), (0, 0), (1, 15)]
    assert [(k["name"], k["calls"], k["total_us"]) for k in its[2]["top_kernels"]] == [
        (PAGED, 1, 20),
        (NCCL, 1, 15),
        (GEMM, 1, 10),
    ]


def test_phase_statistics(tmp_path: Path) -> None:
    phases = serving(annotated_vllm().model(tmp_path))["phases"]
    assert list(phases) == ["prefill", "decode"]
    decode, prefill = phases["decode"], phases["prefill"]
    assert decode["count"] == 2
    # median of (50, 70); p90 linear between ranks: 50 + 0.9 x 20
    assert decode["dur_us"] == {"median": 60.0, "p90": 68.0, "mean": 60.0, "total": 120.0}
    assert decode["tokens"] == 4 and decode["requests"] == 4
    assert decode["tokens_per_s"] == pytest.approx(4 / 120e-6, abs=1e-3)
    assert prefill["tokens_per_s"] == pytest.approx(40 / 125e-6, abs=1e-3)
    assert decode["classes_us"] == {
        "other": 0.0,
        "communication": 15.0,
        "gemm": 20.0,
        "attention": 40.0,
        "conv": 0.0,
        "unknown": 0.0,
    }
    assert prefill["classes_us"]["attention"] == 30 and prefill["classes_us"]["gemm"] == 40
    assert decode["graph_replayed_pct"] == pytest.approx(100 * 60 / 75, abs=0.01)
    assert (decode["collective_calls"], decode["collective_types"]) == (1, {"all_reduce": 1})
    assert prefill["first_token_us"]["value_us"] == 125
    assert decode["per_output_token_us"]["value_us"] == 60
    assert decode["first_token_us"]["value_us"] is None
    assert "one token" in decode["per_output_token_us"]["assumption"]


def test_nested_markers_are_one_iteration(tmp_path: Path) -> None:
    """SGLang's step span inside the iteration annotation of the same thread adds to it;
    another thread's iteration at the same time is its own."""
    t = TraceBuilder()
    outer = "execute_16_context_1(sq16sk16sqsq256sqsk256)_generation_0(sq0sk0sqsq0sqsk0)"
    t.annotation(outer, 0, 100)
    t.annotation("step[EXTEND bs=1 toks=16]", 10, 80)
    t.annotation("step[DECODE bs=8]", 50, 20, tid=CPU_TID + 1)
    its = serving(t.model(tmp_path))["iterations"]
    assert [(i["marker"], i["phase"], i["tokens"], i["requests"]) for i in its] == [
        (outer, "prefill", 16, 1),
        ("step[DECODE bs=8]", "decode", 8, 8),
    ]
    assert its[1]["phase_from"] == "SGLang step span: forward mode DECODE"


def frames_trace() -> TraceBuilder:
    """vLLM model-runner frames, no annotation: the phase from what ran."""
    t = TraceBuilder()
    frame = "vllm/v1/worker/gpu_model_runner.py(3380): execute_model"
    for k, kernels in enumerate(
        [[DECODE_ATTN], [PREFILL_ATTN], [DECODE_ATTN, PREFILL_ATTN], [GEMM], "graph"]
    ):
        at = 1000.0 * k
        t.python(frame, at, 100)
        if kernels == "graph":
            graph_launch(t, at + 10, [("triton_poi_fused_0", at + 20, 5), (GEMM, at + 30, 5)])
            continue
        for j, name in enumerate(kernels):
            t.launch(at + 10 + j, 1, t.new_id(), gpu_ts=at + 20 + 10 * j, gpu_dur=5, name=name)
    return t


def test_iterations_from_frames(tmp_path: Path) -> None:
    view = serving(frames_trace().model(tmp_path))
    assert view["source"] == "python_frames" and view["engine"] == "vllm"
    assert [i["phase"] for i in view["iterations"]] == [
        "decode",
        "prefill",
        "mixed",
        "unknown",
        "decode",
    ]
    assert view["iterations"][4]["phase_from"].startswith("graph replays: 100.0 % of its kernel")
    assert all(i["tokens"] is None for i in view["iterations"])
    assert view["phases"]["decode"]["tokens_per_s"] is None  # no tokens known: unknown


def test_sglang_frames_say_the_phase(tmp_path: Path) -> None:
    t = TraceBuilder()
    worker = "/sgl/python/sglang/srt/managers/tp_worker.py(445): forward_batch_generation"
    runner = "/sgl/python/sglang/srt/model_executor/model_runner.py({}): {}"
    t.python(worker, 0, 100)
    t.python(runner.format(3003, "forward_extend"), 10, 80)
    t.python(worker, 200, 100)
    t.python(runner.format(2950, "forward_decode"), 210, 80)
    its = serving(t.model(tmp_path))["iterations"]
    assert [(i["phase"], i["phase_from"]) for i in its] == [
        ("prefill", "SGLang model runner frame: forward_extend"),
        ("decode", "SGLang model runner frame: forward_decode"),
    ]


def engine_graph_trace(attention_in_graph: bool) -> TraceBuilder:
    """No markers; vLLM's ops name the engine; three graph launches."""
    t = TraceBuilder()
    for k in range(3):
        at = 1000.0 * k
        t.op("vllm::unified_attention_with_output", at, 5)
        kernels = [(PAGED if attention_in_graph else GEMM, at + 20, 10), (GEMM, at + 40, 10)]
        graph_launch(t, at + 10, kernels)
    return t


def test_a_graph_launch_per_decode_step(tmp_path: Path) -> None:
    view = serving(engine_graph_trace(True).model(tmp_path))
    assert (view["source"], view["engine"], view["iteration_count"]) == (
        "graph_launches",
        "vllm",
        3,
    )
    assert {i["phase"] for i in view["iterations"]} == {"decode"}
    assert [i["start_us"] for i in view["iterations"]] == [10, 1010, 2010]
    assert [i["gpu_busy_us"] for i in view["iterations"]] == [20, 20, 20]


def test_piecewise_graphs_without_markers_are_not_iterations(tmp_path: Path) -> None:
    view = serving(engine_graph_trace(False).model(tmp_path))
    assert view["iterations"] == [] and view["source"] is None
    assert view["reason"] is not None and view["reason"].startswith("the trace's names are vllm's")


def training_trace() -> TraceBuilder:
    t = TraceBuilder()
    for step in range(3):
        at = 1000.0 * step
        t.step(step + 1, at, 900)
        mm = t.op("aten::mm", at + 10, 50)
        t.launch(at + 20, 5, mm, gpu_ts=at + 30, gpu_dur=100, name=GEMM)
        graph_launch(t, at + 200, [(GEMM, at + 300, 50)])
    return t


def test_a_training_trace_has_no_iterations(tmp_path: Path) -> None:
    model = training_trace().model(tmp_path)
    view = serving(model)
    assert view["iterations"] == [] and view["phases"] == {} and view["engine"] is None
    assert view["reason"] == (
        "no serving engine markers: no vLLM or SGLang iteration annotation, engine Python "
        "frame or engine op/kernel name; it has 3 ProfilerStep steps: a training or plain "
        "inference loop"
    )
    assert not supports(model)
    assert "serving" not in span_pages(model) and "serving" not in supported_views(model)


def test_the_page_is_listed_for_engine_traces(tmp_path: Path) -> None:
    model = annotated_vllm().model(tmp_path)
    assert supports(model) and "serving" in span_pages(model)
    assert "serving" in supported_views(model)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (
            "capture_32_DECODE",
            "a graph capture trace (batch 32 DECODE): it records graphs being captured, no "
            "serving iteration ran; their replays are in the serving trace beside it",
        ),
        (
            "execute_diffusion_1_256x256",
            "diffusion serving (execute_diffusion_1_256x256: a request of 1 image(s) of "
            "256x256): its work is denoising steps, not the prefill and decode iterations "
            "of LLM serving",
        ),
    ],
)
def test_markers_that_are_not_iterations(tmp_path: Path, name: str, reason: str) -> None:
    t = TraceBuilder()
    t.annotation(name, 0, 100)
    t.launch(10, 5, t.new_id(), gpu_ts=20, gpu_dur=10, name=GEMM)
    model = t.model(tmp_path)
    view: Any = serving(model)
    assert (view["iterations"], view["reason"]) == ([], reason)
    assert supports(model)  # the page says why
    assert view["captures"] == ([{"batch": 32, "mode": "DECODE"}] if "capture" in name else [])
