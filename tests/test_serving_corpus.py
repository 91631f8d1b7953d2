"""The serving view on real traces: the corpus's MI300X serving traces (vLLM piecewise
graphs, SGLang prefill, SGLang's decode capture, xDiT diffusion), numbers read by hand off
their events; and the serving loop recorded on this machine's CPU
(`samples/record_serving_cpu.py`: vLLM's annotation, SGLang's frames, two tensor-parallel
gloo ranks), against the schedule it served."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import corpus_model
from kinetoscope.analysis.serving import serving
from kinetoscope.ingest.build import build_model

INFERENCE = "tracelens/tests/traces/inference/"
SERVING_DATA = Path(__file__).parent / "data" / "serving"
# (context requests, context tokens, generation requests) per iteration, as recorded
SCHEDULE = [(2, 40, 0), (0, 0, 2), (0, 0, 2), (0, 0, 2), (1, 12, 2), (0, 0, 3), (0, 0, 3)]
PHASES = ["prefill", "decode", "decode", "decode", "mixed", "decode", "decode"]


@pytest.mark.corpus
def test_vllm_piecewise_iteration() -> None:
    """One iteration: the detailed annotation (8192 tokens: 9 context requests with 8155,
    37 generation ones with 37) is [0, 26353.441] µs of the trace; its 25 hipGraphLaunch
    calls and eager launches ran on the GPU from 151231.271 µs (the first copy, launched
    at 2211.769) to 307697.688 µs (the last GEMM's end)."""
    view = serving(corpus_model(INFERENCE + "vllm_prefilldecode_piecewise/graph_execution.json.gz"))
    assert (view["engine"], view["source"], view["iteration_count"]) == ("vllm", "annotations", 1)
    it = view["iterations"][0]
    assert it["phase"] == "mixed"
    assert (it["tokens"], it["requests"]) == (8192, 46)
    assert (it["context_requests"], it["context_tokens"]) == (9, 8155)
    assert (it["generation_requests"], it["generation_tokens"]) == (37, 37)
    assert it["host_dur_us"] == pytest.approx(26353.441, abs=0.002)
    assert it["dur_us"] == pytest.approx(307697.688, abs=0.002)
    assert it["scheduling_us"] == pytest.approx(2211.769, abs=0.002)
    assert it["queue_us"] == pytest.approx(151231.271 - 2211.769, abs=0.002)
    assert it["graph_replayed_pct"] == pytest.approx(96.1, abs=0.01)
    assert it["top_kernels"][0]["name"] == "_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu"
    assert it["top_kernels"][0]["calls"] == 24


@pytest.mark.corpus
def test_sglang_prefill_iteration() -> None:
    """One prefill iteration: `execute_15360_context_15(...)` ([0, 522741.423] µs, by
    TraceLens's patched SGLang) holds SGLang's own `step[EXTEND bs=15 toks=15360]`; its
    GPU work ran to 987367.474 µs, after the stream waited ~493 ms on an event."""
    view = serving(
        corpus_model(INFERENCE + "sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz")
    )
    assert (view["engine"], view["iteration_count"]) == ("sglang", 1)
    it = view["iterations"][0]
    assert (it["phase"], it["tokens"], it["requests"]) == ("prefill", 15360, 15)
    assert it["host_dur_us"] == pytest.approx(522741.423, abs=0.002)
    assert it["dur_us"] == pytest.approx(987367.474, abs=0.002)
    assert it["gpu_idle_us"] > 490_000  # the GPU idles inside the iteration: the wait
    assert view["phases"]["prefill"]["first_token_us"]["value_us"] == it["dur_us"]


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("rel", "start"),
    [
        (
            "sglang_decode/capture_traces/bs_32_rank0.json.gz",
            "a graph capture trace (batch 32 DECODE)",
        ),
        (
            "vllm_prefilldecode_piecewise/capture_traces/"
            "graph_capture_rank_0.1773709679453551615.pt.trace.json.gz",
            "a graph capture trace (batch 8192 PIECEWISE)",
        ),
        (
            "xdit_sd_3.5/profile_trace_rank_0.json.gz",
            "diffusion serving (execute_diffusion_1_256x256",
        ),
    ],
)
def test_traces_without_iterations_say_why(rel: str, start: str) -> None:
    view = serving(corpus_model(INFERENCE + rel))
    assert view["iterations"] == [] and view["reason"] is not None
    assert view["reason"].startswith(start)


@pytest.mark.corpus
@pytest.mark.parametrize(
    "rel",
    [
        "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "hta/tests/data/trace_diff/test/test.json.gz",  # training with cudaGraphLaunch
    ],
)
def test_training_traces_have_no_iterations(rel: str) -> None:
    view = serving(corpus_model(rel))
    assert view["iterations"] == [] and view["engine"] is None
    assert "ProfilerStep steps: a training or plain inference loop" in str(view["reason"])


def _recorded(rel: str) -> dict:
    return serving(build_model(str(SERVING_DATA / rel)))


def test_recorded_vllm_annotations() -> None:
    view = _recorded("vllm/engine.pt.trace.json.gz")
    its = view["iterations"]
    assert [i["phase"] for i in its] == PHASES
    assert [
        (i["context_requests"], i["context_tokens"], i["generation_requests"]) for i in its
    ] == SCHEDULE
    assert [i["tokens"] for i in its] == [ct + gr for _, ct, gr in SCHEDULE]
    # The scheduler slept 3 ms between iterations.
    assert all(3000 <= i["gap_before_us"] < 10_000 for i in its[1:])
    decode = view["phases"]["decode"]
    assert (decode["count"], decode["tokens"]) == (5, 12)


def test_recorded_sglang_frames() -> None:
    view = _recorded("sglang_frames/engine.pt.trace.json.gz")
    assert view["source"] == "python_frames" and view["engine"] == "sglang"
    # SGLang runs the mixed batch as an extend: its frame says prefill.
    assert [i["phase"] for i in view["iterations"]] == [
        "decode" if cr == 0 else "prefill" for cr, _, _ in SCHEDULE
    ]


@pytest.mark.parametrize("rank", [0, 1])
def test_recorded_tensor_parallel_rank(rank: int) -> None:
    """Each rank's iterations, with the two all-reduces (one per block) inside each."""
    view = _recorded(f"tp2/rank{rank}.pt.trace.json.gz")
    assert (view["rank"], view["world_size"]) == (rank, 2)
    assert [i["phase"] for i in view["iterations"]] == PHASES
    assert [i["collective_calls"] for i in view["iterations"]] == [2] * len(SCHEDULE)
    assert all(i["collective_us"] > 0 for i in view["iterations"])
    assert view["phases"]["decode"]["collective_types"] == {"all_reduce": 10}
