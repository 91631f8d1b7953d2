"""The diff across vendors: kernels paired by what they do (work class, launching op, its
input shapes), by hand on built traces, then on a real MI300X trace against a real H100
one (a `Cijk_…` GEMM against an `sm90_xmma_gemm_…`); modules paired by path."""

from __future__ import annotations

from pathlib import Path

from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.diff.by_work import pair_by_work, work_groups
from kinetoscope.analysis.diff.view import diff

MI300X = (
    "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"
)
H100 = "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
AMD_GEMM = "Cijk_Alik_Bljk_BBS_BH_MT128x256x32_MI16x16x1_SN_ISA942_WG16_16_1"
NV_GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas"
DIMS = [[64, 128], [128, 256]]


def _trace(
    gemm: str, gemm_us: float, other_dims: list[list[int]], extra: str | None
) -> TraceBuilder:
    """Two aten::mm calls (one on DIMS, one on `other_dims`) each launching `gemm`; an
    elementwise kernel under aten::add; `extra` (a kernel name) under aten::relu."""
    t = TraceBuilder()
    t.step(1, 0, 1000)
    for i, dims in enumerate((DIMS, other_dims)):
        op = t.op("aten::mm", 10 + 200 * i, 100, **{"Input Dims": dims})
        t.launch(20 + 200 * i, 5, op, gpu_ts=30 + 200 * i, gpu_dur=gemm_us, name=gemm)
    add = t.op("aten::add", 500, 50, **{"Input Dims": [[64], [64]]})
    t.launch(510, 5, add, gpu_ts=520, gpu_dur=8, name="elementwise_add_kernel")
    if extra:
        relu = t.op("aten::relu", 600, 50, **{"Input Dims": [[64]]})
        t.launch(610, 5, relu, gpu_ts=620, gpu_dur=4, name=extra)
    return t


def test_kernels_pair_by_work_op_and_shapes_across_vendors(tmp_path: Path) -> None:
    base = _trace(AMD_GEMM, 40, [[32, 32], [32, 32]], None).model(tmp_path, "amd.pt.trace.json")
    target = _trace(NV_GEMM, 30, [[16, 16], [16, 16]], "relu_kernel").model(
        tmp_path, "nv.pt.trace.json"
    )
    pairs = pair_by_work(work_groups(base), work_groups(target))
    got = {
        (p["match"], p["work"], p["op"], str(p["input_shape"])): (
            p["total_us"]["base"],
            p["total_us"]["target"],
            p["ratio"],
        )
        for p in pairs
    }
    assert got == {
        # Same op, same Input Dims: the GEMMs pair by shape, whatever their names.
        ("shape", "gemm", "aten::mm", str(DIMS)): (40.0, 30.0, 0.75),
        ("shape", "other", "aten::add", str([[64], [64]])): (8.0, 8.0, 1.0),
        # Same op, other shapes: paired by op.
        ("op", "gemm", "aten::mm", "None"): (40.0, 30.0, 0.75),
        # Only the target has aten::relu's kernel: its work class, one side.
        ("target_only", "other", "aten::relu", "None"): (0.0, 4.0, None),
    }
    shape_gemm = next(p for p in pairs if p["match"] == "shape" and p["work"] == "gemm")
    assert shape_gemm["base"]["kernels"] == [AMD_GEMM]
    assert shape_gemm["target"]["kernels"] == [NV_GEMM]
    # Per step: the base profiled 2 steps, the target 1 (each side over its own count).
    per_step = pair_by_work(work_groups(base), work_groups(target), (2, 1))
    gemm = next(p for p in per_step if p["match"] == "shape" and p["work"] == "gemm")
    assert gemm["per_step_us"] == {"base": 20.0, "target": 30.0, "delta": 10.0, "delta_pct": 50.0}
    unknown = pair_by_work(work_groups(base), work_groups(target), (0, 1))[0]["per_step_us"]
    assert unknown["base"] is None and unknown["delta"] is None


def test_mi300x_against_h100_pairs_the_gemms() -> None:
    base, target = corpus_model(MI300X), corpus_model(H100)
    view = diff(base, target)
    assert view["vendors"] == ["amd", "nvidia"] and view["devices_differ"]
    gemm = next(
        p
        for p in view["kernels_by_work"]
        if p["work"] == "gemm" and p["op"] == "aten::mm" and p["match"] in ("shape", "op")
    )
    assert gemm["base"] and gemm["target"]
    assert all(k.startswith("Cijk_") for k in gemm["base"]["kernels"])
    assert all(k.startswith("sm90_xmma_gemm_") for k in gemm["target"]["kernels"])
    assert gemm["ratio"] == round(gemm["target"]["total_us"] / gemm["base"]["total_us"], 4)
    # By name, these kernels never match: the name-based rows list them as added/removed.
    names = {k["name"]: k["status"] for k in view["kernels"]}
    assert all(names[k] == "removed" for k in gemm["base"]["kernels"])
    # Every kernel microsecond of each side is in exactly one pair.
    for side, model in (("base", base), ("target", target)):
        paired = sum(p["total_us"][side] or 0.0 for p in view["kernels_by_work"])
        total = sum(g.total_us for g in work_groups(model))
        assert abs(paired - total) < 1e-3 * max(total, 1)
    # Two different models share no module path.
    assert view["modules"] == []


def test_modules_pair_by_path(tmp_path: Path) -> None:
    def model(name: str, scale: float) -> object:
        t = TraceBuilder()
        t.step(1, 0, 1000)
        t.python("nn.Module: Net_0", 10, 500)
        t.python("nn.Module: Linear_0", 20, 200)
        op = t.op("aten::mm", 30, 100, **{"Input Dims": DIMS})
        t.launch(40, 5, op, gpu_ts=50, gpu_dur=40 * scale, name=AMD_GEMM)
        return t.model(tmp_path, name)

    view = diff(model("a.pt.trace.json", 1), model("b.pt.trace.json", 2))  # type: ignore[arg-type]
    ratios = {m["path"]: (m["metric"], m["ratio"]) for m in view["modules"]}
    assert ratios == {
        "Net_0": ("device_total_us", 2.0),
        "Net_0/Linear_0": ("device_total_us", 2.0),
    }
