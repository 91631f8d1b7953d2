"""What the serving view reads from one name: the engines' iteration annotations and
frames (each dialect, with its counts), the markers that are not iterations, and the rules
of `data/serving.json` (every example matches its own list and no other)."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from kinetoscope.analysis.serving.hints import attention_phase, engine_name
from kinetoscope.analysis.serving.markers import parse, phase_of_counts, sglang_forward

RULES = json.loads(resources.files("kinetoscope").joinpath("data", "serving.json").read_text())


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # vLLM's iteration annotation: context / generation requests and tokens
        ("execute_context_2(40)_generation_3(3)", ("mixed", 43, 5, 2, 40, 3, 3)),
        ("execute_context_0(0)_generation_64(64)", ("decode", 64, 64, 0, 0, 64, 64)),
        # the detailed one of the corpus's vLLM trace: sq is a group's query tokens
        (
            "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
            "_generation_37(sq37sk34489sqsq37sqsk34489)",
            ("mixed", 8192, 46, 9, 8155, 37, 37),
        ),
        (
            "execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)"
            "_generation_0(sq0sk0sqsq0sqsk0)",
            ("prefill", 15360, 15, 15, 15360, 0, 0),
        ),
        # vllm-project/vllm#22496: requests only
        ("execute_new_4_cached_0", ("prefill", None, 4, 4, None, 0, None)),
        ("execute_new_0_cached_12", ("decode", None, 12, 0, None, 12, None)),
        ("execute_new_1_cached_12", ("mixed", None, 13, 1, None, 12, None)),
        ("execute_new_0_cached_0", ("idle", None, 0, 0, None, 0, None)),
        # SGLang's step span, with and without its roofline fields
        ("step[EXTEND bs=15 toks=15360]", ("prefill", 15360, 15, 15, 15360, None, None)),
        ("step[DECODE bs=32]", ("decode", 32, 32, None, None, 32, 32)),
        (
            "step[DECODE bs=8 g_sq=32 g_sqsq=128 g_sqsk=9000 g_sk=4000]",
            ("decode", 32, 8, None, None, 8, 32),
        ),
        (
            "step[MIXED bs=3 c=1 g=2 c_sq=12 c_sk=12 c_sqsq=144 c_sqsk=144"
            " g_sq=2 g_sk=90 g_sqsq=2 g_sqsk=90]",
            ("mixed", 14, 3, 1, 12, 2, 2),
        ),
        ("step[IDLE bs=0]", ("idle", 0, 0, None, None, None, None)),
        ("step[TARGET_VERIFY bs=4]", ("decode", 4, 4, None, None, 4, 4)),
    ],
)
def test_iteration_annotations(name: str, expected: tuple[object, ...]) -> None:
    m = parse(name)
    assert m is not None and m.kind == "iteration"
    got = (
        m.phase,
        m.tokens,
        m.requests,
        m.context_requests,
        m.context_tokens,
        m.generation_requests,
        m.generation_tokens,
    )
    assert got == expected


@pytest.mark.parametrize(
    ("name", "kind", "engine"),
    [
        ("vllm/v1/worker/gpu_model_runner.py(3380): execute_model", "frame", "vllm"),
        (
            "/usr/lib/python3/site-packages/vllm/v1/worker/gpu_worker.py(561): execute_model",
            "frame",
            "vllm",
        ),
        (
            "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker.py(445): "
            "forward_batch_generation",
            "frame",
            "sglang",
        ),
        ("capture_32_DECODE", "capture", ""),
        ("capture_8192_PIECEWISE", "capture", ""),
        ("execute_diffusion_1_256x256", "diffusion", "xdit"),
    ],
)
def test_other_markers(name: str, kind: str, engine: str) -> None:
    m = parse(name)
    assert m is not None and (m.kind, m.engine) == (kind, engine)


@pytest.mark.parametrize(
    "name",
    [
        "ProfilerStep#3",
        "execute_model",  # a bare name: no engine path
        "mymodel/worker.py(3): execute_model",
        "execute_context_2_generation_3",  # no counts in parentheses: not the annotation
        "step[extend]",
        "step[EXTEND bs=abc]",
        "capture_x_DECODE",
        "model_inference",
        "## Call CompiledFxGraph abc ##",
    ],
)
def test_names_that_are_not_markers(name: str) -> None:
    assert parse(name) is None


def test_capture_and_diffusion_fields() -> None:
    capture, diffusion = parse("capture_32_DECODE"), parse("execute_diffusion_2_1024x768")
    assert capture is not None and (capture.batch, capture.mode) == (32, "DECODE")
    assert diffusion is not None and (diffusion.batch, diffusion.mode) == (2, "1024x768")


def test_phase_of_counts() -> None:
    assert [phase_of_counts(c, g) for c, g in [(1, 0), (0, 1), (1, 1), (0, 0)]] == [
        "prefill",
        "decode",
        "mixed",
        "idle",
    ]


def test_sglang_model_runner_frames() -> None:
    runner = "/sgl/python/sglang/srt/model_executor/model_runner.py(3003): "
    assert sglang_forward(runner + "forward_extend") == "forward_extend"
    assert sglang_forward(runner + "forward_decode") == "forward_decode"
    assert sglang_forward(runner + "forward") is None
    assert sglang_forward("mine/model_runner.py(3): forward_decode") is None


@pytest.mark.parametrize("phase", ["decode", "prefill"])
def test_attention_phase_examples(phase: str) -> None:
    for name in RULES["attention_phase"][phase]["examples"]:
        assert attention_phase(name) == phase, name


def test_kernels_serving_both_phases_say_none() -> None:
    """vLLM's unified attention, FlashAttention varlen, and vLLM on ROCm's paged attention
    (launched in prefill iterations too): they decide nothing."""
    both = RULES["attention_phase"]["both"]
    assert both["patterns"] == []
    for name in both["examples"]:
        assert attention_phase(name) == "", name


@pytest.mark.parametrize("engine", sorted(RULES["engines"]))
def test_engine_examples(engine: str) -> None:
    for name in RULES["engines"][engine]["examples"]:
        assert engine_name(name) == engine, name


def test_other_names_are_no_engine() -> None:
    for name in ["aten::mm", "sm90_xmma_gemm_bf16", "ProfilerStep#1", "nn.Module: Linear_0"]:
        assert engine_name(name) == ""
