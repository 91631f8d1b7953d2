"""The serving view on traces of vLLM V1's default shape (tests/serving_v1_jobs.py): no
annotation, so the phase comes from the work itself (docs/metrics.md, `serving`): op
shapes, then graph replays (piecewise ones count), then attention kernels. Each rule is
shown firing and abstaining, on a CUDA and a ROCm kernel set, with and without shapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.serving import serving
from serving_v1_jobs import CUDA, DECODES, PROMPT, REQUESTS, ROCM, Vendor, vllm_v1_trace

PHASES = ["prefill"] + ["decode"] * DECODES + ["idle"]


@pytest.mark.parametrize("vendor", [CUDA, ROCM], ids=["cuda", "rocm"])
@pytest.mark.parametrize("shapes", [True, False], ids=["shapes", "no-shapes"])
def test_every_iteration_gets_its_phase(tmp_path: Path, vendor: Vendor, shapes: bool) -> None:
    view = serving(vllm_v1_trace(vendor, shapes).model(tmp_path))
    its = view["iterations"]
    assert view["source"] == "python_frames" and view["engine"] == "vllm"
    assert [i["phase"] for i in its] == PHASES
    assert its[-1]["phase_from"] == "no GPU work: the call launched nothing"
    phases = view["phases"]
    assert (phases["prefill"]["count"], phases["decode"]["count"]) == (1, DECODES)
    assert phases["idle"]["count"] == 1  # out of the busy phases' statistics
    assert phases["prefill"]["first_token_us"]["value_us"] == its[0]["dur_us"]
    decode_median = phases["decode"]["dur_us"]["median"]
    assert phases["decode"]["per_output_token_us"]["value_us"] == decode_median
    for i in its[1:-1]:  # never contradicts its own numbers
        assert i["graph_replayed_pct"] == pytest.approx(89.6, abs=0.05)
    if shapes:
        assert [i["tokens"] for i in its] == [REQUESTS * PROMPT] + [REQUESTS] * DECODES + [None]
        assert [i["counts_from"] for i in its] == ["op shapes"] * (DECODES + 1) + [None]
        assert its[0]["phase_from"].startswith("op shapes: 32000 tokens for 32 requests")
        assert its[1]["phase_from"].startswith("op shapes: 32 tokens for 32 requests")
        assert phases["decode"]["tokens_per_s"] is not None
    else:
        assert all(i["tokens"] is None and i["counts_from"] is None for i in its)
        assert its[0]["phase_from"].startswith("eager (0.0 % graph replays) among graph")
        assert "4.4x their median GEMM time" in its[0]["phase_from"]
        assert its[1]["phase_from"].startswith("graph replays: 89.6 % of its kernel time")


def _strip_graphs(t: TraceBuilder) -> TraceBuilder:
    """The same job run eagerly (`enforce_eager`): every graph launch a plain launch."""
    for e in t.events:
        if e["name"] in ("cudaGraphLaunch", "hipGraphLaunch"):
            e["name"] = "cudaLaunchKernel" if e["name"].startswith("cuda") else "hipLaunchKernel"
    return t


@pytest.mark.parametrize("vendor", [CUDA, ROCM], ids=["cuda", "rocm"])
def test_without_shapes_or_graphs_only_phase_specific_kernels_decide(
    tmp_path: Path, vendor: Vendor
) -> None:
    """Eager and without shapes, the graph rules abstain: on CUDA the FlashAttention
    kernels serve both phases (nothing decides: unknown, saying what it saw); on ROCm the
    prefill's Triton `_fwd_kernel` says prefill, `paged_attention_ll4mi` (every
    iteration) decides nothing."""
    its = serving(_strip_graphs(vllm_v1_trace(vendor, shapes=False)).model(tmp_path))["iterations"]
    expected = ("unknown" if vendor is CUDA else "prefill", "unknown")
    assert (its[0]["phase"], its[1]["phase"]) == expected
    assert its[1]["phase_from"].startswith("no engine counts, no op shapes; graph replays 0.0 %")
    assert its[-1]["phase"] == "idle"


def test_shapes_abstain_between_one_and_two_tokens_a_request(tmp_path: Path) -> None:
    """A decode padded to a captured batch (30 requests, 32 query rows): the shapes decide
    nothing; the graph replays do, and the requests are the logits' rows."""
    t = vllm_v1_trace(CUDA, shapes=True)
    for e in t.events:
        dims = e.get("args", {}).get("Input Dims")
        if e["name"] == "aten::linear" and e["ts"] > 50_000:
            dims[0][0] = 30
    its = serving(t.model(tmp_path))["iterations"]
    assert its[1]["phase"] == "decode" and its[1]["phase_from"].startswith("graph replays")
    assert (its[1]["requests"], its[1]["tokens"]) == (30, 30)  # one token a decode request


def test_an_eager_decode_among_replayed_ones_is_not_called_prefill(tmp_path: Path) -> None:
    """One decode run eagerly (a batch larger than the captured sizes): its GEMM time is
    the replayed decodes', not several times it: unknown, with its ratio said."""
    t = vllm_v1_trace(CUDA, shapes=False)
    second = [
        e for e in t.events if e["name"] == "cudaGraphLaunch" and 200_000 <= e["ts"] < 300_000
    ]
    for e in second:
        e["name"] = "cudaLaunchKernel"
    its = serving(t.model(tmp_path))["iterations"]
    assert its[2]["phase"] == "unknown"
    assert "1.0x the replayed ones' GEMM time" in its[2]["phase_from"]


def test_an_sglang_trace_is_named_sglang(tmp_path: Path) -> None:
    """SGLang runs vLLM's kernels: a trace with both engines' names, and SGLang's frames
    or kernels, is SGLang's."""
    t = vllm_v1_trace(CUDA, shapes=False)
    for e in t.events:
        if e["name"].endswith("execute_model"):
            e["name"] = (
                "/sgl/python/sglang/srt/managers/tp_worker.py(445): forward_batch_generation"
            )
    t.op("sgl_kernel::rmsnorm", 5, 1)
    assert serving(t.model(tmp_path))["engine"] == "sglang"
    u = vllm_v1_trace(CUDA, shapes=False)
    u.events = [e for e in u.events if e.get("cat") != "python_function"]
    u.op("vllm::unified_attention_with_output", 1, 1)
    u.op("sgl_kernel::rmsnorm", 5, 1)
    (tmp_path / "u").mkdir()
    assert serving(u.model(tmp_path / "u"))["engine"] == "sglang"
