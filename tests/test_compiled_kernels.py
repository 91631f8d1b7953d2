"""Inductor kernels attributed to their fused aten ops and the model source (issue 29):
real compiled traces (H100 Triton, CPU C++) and small built traces for the rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import kinetoscope as ks
from builders import TraceBuilder
from kinetoscope.analysis.kernels.compiled import (
    compiled_kernels,
    is_compile_marker,
    kernel_name_ops,
    wrapper_fused_ops,
)
from kinetoscope.analysis.kernels.endpoint import supports
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.ingest.build import build_model

DATA = Path(__file__).parent / "data"
H100_COMPILED = DATA / "h100" / "compiled"
CPU_COMPILED = DATA / "compiled_cpu"
VOCAB = {"add", "view", "native_layer_norm", "native_layer_norm_backward", "gelu", "sum"}


def test_kernel_names_split_into_known_ops() -> None:
    name = "triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6"
    assert kernel_name_ops(name, VOCAB) == [
        "aten::add",
        "aten::native_layer_norm",
        "aten::native_layer_norm_backward",
        "aten::view",
    ]
    assert kernel_name_ops("cpp_fused_gelu_view_1", VOCAB) == ["aten::gelu", "aten::view"]
    # a part no known op starts stays whole up to the next known op
    assert kernel_name_ops("triton_poi_fused_foo_bar_add_0", VOCAB) == [
        "aten::foo_bar",
        "aten::add",
    ]
    assert kernel_name_ops("ampere_sgemm_128x64_nn", VOCAB) == []


def test_compile_markers_are_recognised() -> None:
    for name in (
        "Torch-Compiled Region: 0/0",
        "CompiledFunction",
        "CompiledFunctionBackward",
        "## Call CompiledFxGraph fs4i2a3dwx ##",
        "## fx_generated__abc.py ##",
    ):
        assert is_compile_marker(name), name
    assert not is_compile_marker("aten::mm")


def test_wrapper_comment_names_the_kernel_file() -> None:
    text = (
        "# kernel path: /tmp/ind/fe/cfeabc.py\n"
        "# Topologically Sorted Source Nodes: [gelu, x], Original ATen: [aten.gelu, aten.add]\n"
        "triton_poi_fused_add_gelu_0 = async_compile.triton('x')\n"
    )
    assert wrapper_fused_ops(text) == {"cfeabc": ["aten::gelu", "aten::add"]}


def _compiled_step(t: TraceBuilder, stack_trace: str | None) -> None:
    """Model frame → compiled region → wrapper frame → Inductor kernel op → kernel."""
    t.python("train.py(12): step", 0, 100)
    t.python("model.py(40): forward", 1, 98)
    t.annotation("Torch-Compiled Region: 0/0", 2, 96)
    t.op("CompiledFunction", 3, 94)
    t.python("torch/_inductor/output_code.py(600): __call__", 4, 92)
    t.python("/tmp/ind/ab/cabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij.py(300): call", 5, 90)
    t.python("torch/_inductor/runtime/triton_heuristics.py(1407): run", 6, 88)
    extra = {"stack_trace": stack_trace} if stack_trace else {}
    ext = t.op(
        "triton_poi_fused_gelu_mul_0",
        10,
        20,
        kernel_name="triton_poi_fused_gelu_mul_0",
        kernel_hash="cnotinanyfolder",
        **extra,
    )
    t.launch(12, 2, ext, gpu_ts=30, gpu_dur=8, name="triton_poi_fused_gelu_mul_0")
    ext = t.op("aten::mm", 40, 20)
    t.launch(42, 2, ext, gpu_ts=50, gpu_dur=4, name="sm90_gemm")


def test_built_trace_source_model_first_then_wrapper(tmp_path: Path) -> None:
    t = TraceBuilder()
    _compiled_step(t, None)
    model = t.model(tmp_path)
    rows = {r["name"]: r for r in kernels(model, "op")["rows"]}
    triton = rows["triton_poi_fused_gelu_mul_0"]
    assert triton["op_name"] == "triton_poi_fused_gelu_mul_0"
    assert triton["fused_ops"] == ["aten::gelu", "aten::mul"]  # from the name
    assert [(f["filename"], f["line"], f["name"]) for f in triton["source"]] == [
        ("model.py", 40, "forward"),
        ("train.py", 12, "step"),
        ("/tmp/ind/ab/cabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij.py", 300, "call"),
    ]
    # a kernel of a plain op gets neither column
    assert "fused_ops" not in rows["sm90_gemm"] and "source" not in rows["sm90_gemm"]
    by_name = {r["name"]: r for r in kernels(model, "name")["rows"]}
    assert by_name["triton_poi_fused_gelu_mul_0"]["source"] == triton["source"]


def test_built_trace_stack_trace_arg_comes_first(tmp_path: Path) -> None:
    t = TraceBuilder()
    trace = (
        'File "/home/u/torch/nn/modules/module.py", line 1700, in _call_impl\n'
        'File "/home/u/model.py", line 41, in forward\n    return gelu(x) * 2\n'
    )
    _compiled_step(t, trace)
    model = t.model(tmp_path)
    (info,) = compiled_kernels(model).values()
    assert info["source"][0] == {
        "filename": "/home/u/model.py",
        "line": 41,
        "name": "forward",
        "generated": False,
    }
    assert info["source"][1]["filename"] == "model.py"


def test_h100_compiled_triton_kernels_name_model_lines_and_fused_ops() -> None:
    view = ks.open(str(H100_COMPILED)).trace().kernels(group_by="op")
    triton = view[view["name"].str.startswith("triton_")]
    assert len(triton) > 10
    for row in triton.itertuples():
        assert row.op_name == row.name  # the Inductor kernel's own op, not a marker
        assert row.fused_ops and all(o.startswith("aten::") for o in row.fused_ops)
        assert row.source[-1]["name"] == "call"  # the generated wrapper's frame
        assert [f["generated"] for f in row.source] == [False] * (len(row.source) - 1) + [True]
    gelu = triton[triton["name"] == "triton_poi_fused_gelu_view_2"].iloc[0]
    # from the wrapper's `Original ATen` comment in inductor_code/
    assert gelu.fused_ops == ["aten::view", "aten::gelu"]
    assert gelu.source[0] == {
        "filename": "record_gpu.py",
        "line": 81,
        "name": "forward",
        "generated": False,
    }
    forward = triton[~triton["name"].str.contains("backward|sum_view")]
    assert all(r[0]["filename"] == "record_gpu.py" for r in forward["source"])


def test_h100_compiled_without_inductor_code_reads_the_kernel_names(tmp_path: Path) -> None:
    src = next(H100_COMPILED.glob("*.pt.trace.json.gz"))
    shutil.copy(src, tmp_path / src.name)
    model = build_model(str(tmp_path / src.name))
    rows = {r["name"]: r for r in kernels(model, "name")["rows"]}
    assert rows["triton_poi_fused_gelu_view_2"]["fused_ops"] == ["aten::gelu", "aten::view"]
    assert rows["triton_red_fused_sum_view_2"]["fused_ops"] == ["aten::sum", "aten::view"]


def test_cpu_compiled_traces_record_no_kernel_events() -> None:
    """Inductor's C++ kernels run as a nameless `<built-in function kernel>` frame: no
    Inductor kernel event to attribute, and no GPU kernel for the Kernels view."""
    for name in ("plain", "enriched"):
        model = build_model(str(CPU_COMPILED / f"{name}.pt.trace.json.gz"))
        assert not supports(model)
        assert compiled_kernels(model) == {}
        assert any(is_compile_marker(n) for n in model.names)
        assert any(n.endswith("): forward") for n in model.names)
