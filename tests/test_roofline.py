"""Roofline: work per op from shapes, device peaks, and the Operators/Kernels row fields,
hand-computed on small built traces; formulas checked on the real H100 traces; on corpus
traces with shapes no row passes 100 % of its roof."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.roofline import peaks as peaks_module
from kinetoscope.analysis.core.roofline.families import work_of
from kinetoscope.analysis.core.roofline.formulas import Call
from kinetoscope.analysis.core.roofline.peaks import match_peaks
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.ingest.build import build_model

H100 = {
    "id": 0,
    "name": "NVIDIA H100 80GB HBM3",
    "totalGlobalMem": 85017493504,
    "numSms": 132,
    "computeMajor": 9,
    "computeMinor": 0,
}
H100_BF16 = 989.5e12
H100_BW = 3350e9
REPO = Path(__file__).resolve().parents[1]


def _trace(device: dict[str, Any], ops: list[tuple[str, dict[str, Any], list[float]]]) -> Any:
    """One op per entry (name, args, its kernels' durations in µs), one after another."""
    b = TraceBuilder()
    b.header["deviceProperties"] = [device]
    ts = 0.0
    for name, args, kernel_durs in ops:
        ext = b.op(name, ts, 100.0, **args)
        gpu_ts = ts + 10.0
        for i, dur in enumerate(kernel_durs):
            b.launch(ts + 1 + i, 1.0, ext, gpu_ts=gpu_ts, gpu_dur=dur, name=f"{name}_k{i}")
            gpu_ts += dur
        ts += 200.0
    return b


def _row(view: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in view["rows"] if r["name"] == name)


def _shapes(dims: list[Any], types: list[str], concrete: list[str] | None = None) -> dict:
    return {
        "Input Dims": dims,
        "Input type": types,
        "Concrete Inputs": concrete if concrete is not None else [""] * len(dims),
    }


def test_mm_on_h100_exact_flops_rate_and_percent(tmp_path: Path) -> None:
    args = _shapes([[4096, 4096], [4096, 4096]], ["c10::BFloat16", "c10::BFloat16"])
    model = _trace(H100, [("aten::mm", args, [200.0])]).model(tmp_path)
    row = _row(operators(model), "aten::mm")
    flops = 2 * 4096**3
    assert row["flops"] == flops == 137438953472
    assert row["bytes"] == 3 * 4096 * 4096 * 2
    assert row["tflops"] == 687.2  # 137438953472 / 200 µs = 687.19 TFLOP/s (4 digits)
    assert row["intensity"] == pytest.approx(flops / (3 * 4096 * 4096 * 2), rel=1e-3)
    assert row["bound"] == "compute"  # 1365 FLOP/B, right of the ridge 989.5/3.35 = 295
    assert row["pct_of_peak"] == round(100 * flops / 200e-6 / H100_BF16, 2) == 69.45
    assert row["dtype"] == "bf16"
    kernel = _row(kernels(model), "aten::mm_k0")
    assert (kernel["flops"], kernel["tflops"], kernel["pct_of_peak"]) == (flops, 687.2, 69.45)


def test_elementwise_add_exact_bytes_rate_memory_bound(tmp_path: Path) -> None:
    args = _shapes([[1024, 1024], [1024, 1024], []], ["c10::BFloat16", "c10::BFloat16", "Scalar"])
    model = _trace(H100, [("aten::add", args, [5.0])]).model(tmp_path)
    row = _row(operators(model), "aten::add")
    nbytes = 3 * 1024 * 1024 * 2  # two inputs read, one output written
    assert row["bytes"] == nbytes == 6291456
    assert row["gbps"] == 1258.0  # 6291456 B / 5 µs = 1258.29 GB/s (4 digits)
    assert row["bound"] == "memory"
    assert row["pct_of_peak"] == round(100 * nbytes / 5e-6 / H100_BW, 2) == 37.56
    assert row["flops"] == 1024 * 1024  # one per output element


def test_kernels_split_their_ops_work_by_duration(tmp_path: Path) -> None:
    args = _shapes([[2048, 2048], [2048, 2048]], ["float", "float"])
    model = _trace(H100, [("aten::mm", args, [30.0, 10.0])]).model(tmp_path)
    view = kernels(model)
    first, second = _row(view, "aten::mm_k0"), _row(view, "aten::mm_k1")
    flops = 2 * 2048**3
    assert first["flops"] == pytest.approx(0.75 * flops)
    assert second["flops"] == pytest.approx(0.25 * flops)
    assert first["tflops"] == second["tflops"] == _row(operators(model), "aten::mm")["tflops"]
    assert first["dtype"] == "fp32"


def test_unknown_device_has_no_roof_but_keeps_rates(tmp_path: Path) -> None:
    device = {**H100, "name": "NVIDIA Imaginary 1", "numSms": 7}
    args = _shapes([[256, 256], [256, 256]], ["c10::Half", "c10::Half"])
    view = operators(_trace(device, [("aten::mm", args, [4.0])]).model(tmp_path))
    row = _row(view, "aten::mm")
    assert row["tflops"] == pytest.approx(2 * 256**3 / 4e-6 / 1e12, rel=1e-3)
    assert row["pct_of_peak"] is None and row["bound"] is None
    assert view["roofs"] == []


def test_no_shapes_no_work(tmp_path: Path) -> None:
    model = _trace(H100, [("aten::mm", {}, [4.0])]).model(tmp_path)
    row = _row(operators(model), "aten::mm")
    assert [row[k] for k in ("flops", "bytes", "tflops", "pct_of_peak", "bound")] == [None] * 5


def test_profiler_flops_arg_replaces_the_formula(tmp_path: Path) -> None:
    args = {**_shapes([[64, 64], [64, 64]], ["float", "float"]), "flops": 1000}
    row = _row(operators(_trace(H100, [("aten::mm", args, [1.0])]).model(tmp_path)), "aten::mm")
    assert row["flops"] == 1000
    assert row["bytes"] == 3 * 64 * 64 * 4


def _work(name: str, dims: list[Any], types: list[str], concrete: list[str]) -> Any:
    return work_of(name, Call(dims, types, concrete))


def test_conv_forward_and_backward_by_hand() -> None:
    # 16×64×32×32 input, 128 3×3 filters, stride 1, padding 1: a 32×32 output.
    bf16 = "c10::BFloat16"
    fwd = _work(
        "aten::cudnn_convolution",
        [[16, 64, 32, 32], [128, 64, 3, 3], [], [], [], [], [], [], []],
        [bf16, bf16, "ScalarList", "ScalarList", "ScalarList", "Scalar", "", "", ""],
        ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"],
    )
    per_pass = 2 * 16 * 128 * 32 * 32 * 64 * 9
    assert fwd.flops == per_pass == 2415919104
    assert fwd.bytes == (16 * 64 * 1024 + 128 * 64 * 9 + 16 * 128 * 1024) * 2
    strided = _work(
        "aten::conv2d",
        [[1, 3, 224, 224], [64, 3, 7, 7], [64], [], [], [], []],
        ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
        ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"],
    )
    assert strided.flops == 2 * 64 * 112 * 112 * 3 * 49  # (224 + 6 - 7) // 2 + 1 = 112
    assert strided.dtype == "tf32"  # cuDNN's default for FP32 convolutions
    bwd = _work(
        "aten::convolution_backward",
        [[16, 128, 32, 32], [16, 64, 32, 32], [128, 64, 3, 3]] + [[]] * 8,
        [bf16, bf16, bf16] + ["ScalarList"] * 8,
        [
            "",
            "",
            "",
            "[128]",
            "[1, 1]",
            "[1, 1]",
            "[1, 1]",
            "False",
            "[0, 0]",
            "1",
            "[True, True, False]",
        ],
    )
    assert bwd.flops == 2 * per_pass  # grad_input and grad_weight, no grad_bias FLOPs


def test_attention_forward_backward_causal_by_hand() -> None:
    bf16, q = "c10::BFloat16", [4, 8, 256, 64]
    fwd = 2 * 4 * 8 * 256 * 256 * (64 + 64)
    full = _work(
        "aten::_scaled_dot_product_efficient_attention",
        [q, q, q, [], [], [], [], []],
        [bf16, bf16, bf16, "", "Scalar", "Scalar", "Scalar", ""],
        ["", "", "", "", "True", "0.", "False", ""],
    )
    assert full.flops == fwd == 536870912
    causal = _work(
        "aten::_flash_attention_forward",
        [[4, 256, 8, 64]] * 3 + [[]] * 12,
        [bf16] * 3 + [""] * 12,
        ["", "", "", "", "", "256", "256", "0.", "True", "False", "0.125", "", "", "", ""],
    )
    assert causal.flops == fwd / 2
    backward = _work(
        "aten::_scaled_dot_product_cudnn_attention_backward",
        [q, q, q, q, q, [4, 8, 256, 1]] + [[]] * 10,
        [bf16] * 5 + ["float"] + [""] * 10,
        [""] * 11 + ["256", "256", "0.", "True", ""],
    )
    assert backward.flops == fwd  # 2× the forward, halved for causal


def test_memory_families_by_hand() -> None:
    f32 = "float"
    red = _work(
        "aten::sum",
        [[8, 16, 4], [], [], []],
        [f32, "ScalarList", "Scalar", ""],
        ["", "[1]", "False", ""],
    )
    assert red.bytes == (8 * 16 * 4 + 8 * 4) * 4
    emb = _work(
        "aten::embedding",
        [[1000, 64], [4, 32], [], [], []],
        [f32, "long int", "Scalar", "Scalar", "Scalar"],
        [""] * 5,
    )
    assert emb.bytes == 4 * 32 * 8 + 2 * 4 * 32 * 64 * 4 and emb.flops == 0
    out_form = _work("aten::mul", [[10, 10], [], [10, 10]], [f32, "double", f32], [""] * 3)
    assert out_form.bytes == 100 * 4 + 8 + 100 * 4  # `out=` is written, not read
    copy = _work("aten::copy_", [[10], [10], []], ["c10::BFloat16", f32, "Scalar"], [""] * 3)
    assert copy.bytes == 10 * 2 + 10 * 4
    assert _work("aten::mm", [[2, 3], [4, 5]], [f32, f32], ["", ""]) is None  # K mismatch


@pytest.mark.parametrize(
    ("name", "memory", "sms", "expected"),
    [
        ("NVIDIA A100-SXM4-40GB", 42505273344, 108, "A100-SXM4-40GB"),
        ("NVIDIA A100-SXM4-80GB", 84990623744, 108, "A100-SXM4-80GB"),
        ("NVIDIA H100 80GB HBM3", 85017493504, 132, "H100-SXM"),
        ("NVIDIA H100 PCIe", 85520809984, 114, "H100-PCIe"),
        ("", 206141652992, 304, "MI300X"),  # ROCm with no name: memory and CU count
        ("AMD Instinct MI300X", 206141652992, 304, "MI300X"),
        ("NVIDIA H100", 102085492736, 132, None),  # a 95 GiB H100: not in the data
        ("NVIDIA A100-PG509-200", 42505273344, 108, None),
        ("", 68702699520, 104, None),
    ],
)
def test_device_matching(name: str, memory: int, sms: int, expected: str | None) -> None:
    found = match_peaks(name, memory, sms)
    assert (found.device if found else None) == expected


def test_every_peak_entry_names_its_source() -> None:
    data = json.loads((REPO / "tb_plugin/data/device_peaks.json").read_text())
    for entry in data["devices"]:
        assert entry["source"] and entry["memory_gbps"] > 0, entry["id"]
        assert entry["peaks_tflops"]["fp32"] > 0, entry["id"]


def data_version() -> int:
    return int(json.loads((REPO / "tb_plugin/data/device_peaks.json").read_text())["version"])


def test_user_peaks_file_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "peaks.json"
    entry = {
        "id": "mine",
        "names": ["NVIDIA H100 80GB HBM3"],
        "memory_gbps": 1000,
        "peaks_tflops": {"bf16": 500},
        "source": "measured",
    }
    user.write_text(json.dumps({"devices": [entry]}))
    monkeypatch.setenv(peaks_module.ENV, str(user))
    peaks_module._user_file.cache_clear()
    peaks_module.entries.cache_clear()
    try:
        found = match_peaks("NVIDIA H100 80GB HBM3", 85017493504, 132)
        assert found is not None and found.device == "mine" and found.tflops["bf16"] == 500
        assert found.tflops["fp8"] is None
        assert peaks_module.peaks_key() != "1"
    finally:
        monkeypatch.delenv(peaks_module.ENV)
        peaks_module._user_file.cache_clear()
        peaks_module.entries.cache_clear()
    assert peaks_module.peaks_key() == str(data_version())


def _h100(run: str) -> Any:
    return build_model(str(next((REPO / "tests/data/h100" / run).glob("*.pt.trace.json.gz"))))


def test_real_h100_gemms_match_the_formula() -> None:
    view = operators(_h100("gemm_bf16"))
    assert view["roofs"][0]["device"] == "H100-SXM"
    mm = 2 * 1024 * 512 * 2048  # aten::mm [1024, 2048] × [2048, 512]
    rows = {r["name"]: r for r in view["rows"]}
    assert rows["aten::mm"]["flops"] == rows["aten::mm"]["calls"] * mm
    assert rows["aten::_scaled_mm"]["dtype"] == "fp8"
    assert (
        rows["aten::cudnn_convolution"]["flops"]
        == rows["aten::cudnn_convolution"]["calls"] * 2415919104
    )
    for name in (
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::linear",
        "aten::matmul",
        "aten::_scaled_mm",
        "aten::convolution_backward",
    ):
        assert 0 < rows[name]["pct_of_peak"] <= 100, name


def test_real_h100_attention_rows() -> None:
    rows = {r["name"]: r for r in operators(_h100("attention"))["rows"]}
    fwd = 2 * 4 * 8 * 256 * 256 * 128
    # Two calls each: the efficient kernel's are not causal, the flash kernel's are.
    assert rows["aten::_efficient_attention_forward"]["flops"] == 2 * fwd
    assert rows["aten::_flash_attention_forward"]["flops"] == fwd  # both causal
    assert rows["aten::_flash_attention_backward"]["flops"] == 2 * fwd
    for name, row in rows.items():
        if row["bound"] == "compute":
            assert row["pct_of_peak"] <= 100, name


CORPUS_WITH_SHAPES = [
    "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "hta/tests/data/negative_queue_length_values_check/rank0.json.gz",
    "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
    "tracelens/tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz",
    "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
]


@pytest.mark.parametrize("rel", CORPUS_WITH_SHAPES)
def test_corpus_rows_stay_under_their_roof(rel: str) -> None:
    model = corpus_model(rel)
    ops, kers = operators(model), kernels(model)
    assert ops["roofs"], "a known device"
    checked = [r for r in ops["rows"] + kers["rows"] if r["pct_of_peak"] is not None]
    assert checked
    over = [(r["name"], r["pct_of_peak"]) for r in checked if r["pct_of_peak"] > 100]
    assert not over


def test_report_text_and_notebook_frames_give_the_same_numbers(tmp_path: Path) -> None:
    import kinetoscope
    import msgspec
    from kinetoscope.analysis.kernels.text import render_kernels
    from kinetoscope.analysis.operators.text import render_operators

    args = _shapes([[4096, 4096], [4096, 4096]], ["c10::BFloat16", "c10::BFloat16"])
    run_dir = tmp_path / "logs" / "run"
    run_dir.mkdir(parents=True)
    _trace(H100, [("aten::mm", args, [200.0])]).write(run_dir / "w0.1.pt.trace.json")
    model = build_model(str(run_dir / "w0.1.pt.trace.json"))
    view = msgspec.json.decode(msgspec.json.encode(operators(model)))  # the route's JSON
    text = render_operators(view)
    assert "Roofline (top 1 of 1 rows with known work)" in text
    line = next(x for x in text.splitlines() if x.startswith("aten::mm") and "compute" in x)
    assert line.split()[1:] == ["687.2", "503.3", "1365", "69.5", "compute"]
    assert "GPU 0 H100-SXM: 3350 GB/s" in text
    assert "compute" in render_kernels(msgspec.json.decode(msgspec.json.encode(kernels(model))))
    with kinetoscope.open(str(run_dir), cache=False) as run:
        frame = run.trace().operators()
    mm = frame[frame["name"] == "aten::mm"].iloc[0]
    assert (mm["tflops"], mm["pct_of_peak"], mm["bound"]) == (687.2, 69.45, "compute")


@pytest.mark.parametrize("run", ["gemm_bf16", "attention"])
def test_the_scanners_work_hash_groups_calls_as_their_args_do(
    run: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The compiled scanner hashes each call's work args (work_sig), and the roofline groups
    # calls by it without reading args; the msgspec path leaves the hash unknown (-1) and
    # the roofline reads the args. Both give the same numbers.
    hashed = _h100(run)
    work_sig = hashed.full_column("work_sig")
    assert (work_sig != -1).all() and (work_sig != 0).any()
    monkeypatch.setenv("KINETOSCOPE_SCANNER", "python")
    read = _h100(run)
    assert (read.full_column("work_sig") == -1).all()
    assert operators(hashed) == operators(read)
    assert kernels(hashed) == kernels(read)
