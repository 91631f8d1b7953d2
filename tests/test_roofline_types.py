"""Element sizes the roofline counts bytes in: the output type of element-wise ops by
PyTorch's type promotion (0-d tensors and Python numbers included), tensor lists (`cat`)
sized by their kernel's template type or unknown, `dtype`/`out_dtype` arguments read, and
nothing guessed where the trace does not say. Values hand-computed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core.roofline.dtypes import BY_NAME, Operand, result_type
from kinetoscope.analysis.core.roofline.families import work_of
from kinetoscope.analysis.core.roofline.formulas import Call
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators

BF16, F32, LONG, BOOL, INT = "c10::BFloat16", "float", "long int", "bool", "int"
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504, "numSms": 132}
N = 1 << 20


def _bytes(name: str, dims: list[Any], types: list[str], concrete: list[str] | None = None) -> Any:
    work = work_of(name, Call(dims, types, concrete if concrete is not None else [""] * len(dims)))
    assert work is not None
    return None if math.isnan(work.bytes) else work.bytes


@pytest.mark.parametrize(
    ("operands", "expected"),
    [
        ([("bfloat16", 0), ("float32", 0)], "float32"),
        ([("float32", 1), ("bfloat16", 0)], "bfloat16"),  # a 0-d tensor of the same category
        ([("int32", 0), ("int64", 1)], "int32"),
        ([("uint8", 0), ("int64", 1)], "uint8"),  # torch.result_type's own doc example
        ([("int32", 0), ("float32", 2)], "float32"),  # int tensor + 1.0: the default dtype
        ([("int64", 0), ("float64", 1)], "float64"),  # a 0-d tensor of a higher category
        ([("bool", 0), ("int64", 2)], "int64"),
        ([("float16", 0), ("bfloat16", 0)], "float32"),
        ([("int8", 0), ("uint8", 0)], "int16"),
        ([("float64", 0), ("complex64", 2)], "complex128"),
        ([("float8_e4m3fn", 0), ("bfloat16", 0)], None),  # undefined in PyTorch
    ],
)
def test_result_type(operands: list[tuple[str, int]], expected: str | None) -> None:
    found = result_type([Operand(BY_NAME[n], tier) for n, tier in operands])
    assert (found.name if found else None) == expected


def test_mixed_dtype_elementwise_bytes() -> None:
    # bf16 × fp32: fp32 output (the first input's bf16 counted 0.67× the bytes before)
    assert _bytes("aten::mul", [[N], [N]], [BF16, F32]) == N * 2 + N * 4 + N * 4
    # 0-d fp32 × bf16: bf16 output (1.5× before)
    assert _bytes("aten::mul", [[], [N]], [F32, BF16]) == 4 + N * 2 + N * 2
    # where(bool, long, long): the condition is no operand: long output (0.72× before)
    assert _bytes("aten::where", [[N], [N], [N]], [BOOL, LONG, LONG]) == N + 3 * N * 8
    # add(int32, 2.5, alpha=1): a float number makes it float32; alpha does not count
    add = _bytes("aten::add", [[N], [], []], [INT, "Scalar", "Scalar"], ["", "2.5", "1"])
    assert add == N * 4 + N * 4
    # add(int32, 0-d long): same category, the dimensioned tensor's type
    assert _bytes("aten::add", [[N], [], []], [INT, LONG, "Scalar"], ["", "", "1"]) == N * 4 * 2 + 8
    # true division of integers writes float32; a rounding mode keeps int64
    assert _bytes("aten::div", [[N], [N]], [LONG, LONG]) == 2 * N * 8 + N * 4
    floor = _bytes("aten::div", [[N], [N], []], [LONG, LONG, "c10::string_view"], ["", "", "floor"])
    assert floor == 3 * N * 8
    # masked_fill keeps self's type
    assert _bytes("aten::masked_fill", [[N], [N], []], [BF16, BOOL, "Scalar"], ["", "", "0.5"]) == (
        N * 2 + N + N * 2
    )


def test_unknown_types_give_unknown_bytes() -> None:
    # a number whose value was not recorded could make an integer result float
    assert _bytes("aten::mul", [[N], []], [LONG, "Scalar"], ["", ""]) is None
    # ...but not a floating one
    assert _bytes("aten::mul", [[N], []], [F32, "Scalar"], ["", ""]) == N * 4 * 2
    # _to_copy: an unknown ScalarType code, or no Concrete Inputs at all
    assert _bytes("aten::_to_copy", [[N], []], [F32, "Scalar"], ["", "99"]) is None
    assert _bytes("aten::_to_copy", [[N], []], [F32, "Scalar"], []) is None
    assert _bytes("aten::_to_copy", [[N], []], [F32, ""], ["", ""]) == N * 8  # dtype=None
    assert _bytes("aten::_to_copy", [[N], []], [F32, "Scalar"], ["", "15"]) == N * 6
    # _scaled_mm: out_dtype None is the input's fp8; bf16 where given; unrecorded: unknown
    fp8 = "c10::Float8_e4m3fn"
    dims = [[256, 512], [512, 256], [], [], [], [], [], []]
    types = [fp8, fp8, F32, F32, "", "", "Scalar", "Scalar"]
    base = 256 * 512 * 2 + 8
    assert _bytes("aten::_scaled_mm", dims, types, [""] * 8) == base + 256 * 256
    concrete = ["", "", "", "", "", "", "15", "False"]
    assert _bytes("aten::_scaled_mm", dims, types, concrete) == base + 256 * 256 * 2
    assert _bytes("aten::_scaled_mm", dims, types, []) is None


def _cat_trace(kernel: str) -> TraceBuilder:
    b = TraceBuilder()
    b.header["deviceProperties"] = [H100]
    args = {
        "Input Dims": [[[16, 16, 559, 32], [16, 16, 559, 32]], []],
        "Input type": ["TensorList", "Scalar"],
        "Concrete Inputs": ["", "-1"],
    }
    ext = b.op("aten::cat", 0.0, 100.0, **args)
    b.launch(1.0, 1.0, ext, gpu_ts=10.0, gpu_dur=20.0, name=kernel)
    return b


def test_cat_bytes_from_its_kernel_template_type(tmp_path: Path) -> None:
    """The Qwen H100 trace's bf16 cat: 9,158,656 elements of 2 bytes (the kernel's
    `OpaqueType<2u>`), not the 4 bytes once assumed (which doubled its GB/s)."""
    kernel = (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
        "namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous "
        "namespace)::OpaqueType<2u>*)"
    )
    model = _cat_trace(kernel).model(tmp_path)
    elements = 2 * 16 * 16 * 559 * 32
    row = next(r for r in operators(model)["rows"] if r["name"] == "aten::cat")
    assert row["bytes"] == 2 * elements * 2 == 36634624
    assert row["gbps"] == 1832.0  # 36634624 B / 20 µs
    assert row["pct_of_peak"] == round(100 * 36634624 / 20e-6 / 3350e9, 2) == 54.68
    k = next(r for r in kernels(model)["rows"] if "CatArray" in r["name"])
    assert k["bytes"] == 36634624


def test_cat_without_a_typed_kernel_has_unknown_bytes(tmp_path: Path) -> None:
    model = _cat_trace("some_concat_kernel").model(tmp_path)
    row = next(r for r in operators(model)["rows"] if r["name"] == "aten::cat")
    assert row["bytes"] is None and row["gbps"] is None
    assert row["pct_of_peak"] is None and row["bound"] is None


def test_reduction_arguments_and_output_types() -> None:
    shape = [64, 1024]
    # sum(x, dim=[1]): 64 outputs in the input's type
    assert _bytes(
        "aten::sum",
        [shape, [], [], []],
        [BF16, "ScalarList", "Scalar", ""],
        ["", "[1]", "False", ""],
    ) == (64 * 1024 * 2 + 64 * 2)
    # sum(x, dtype=float32), the two-argument form: a full reduction, one float32 out
    assert _bytes("aten::sum", [shape, []], [BF16, "Scalar"], ["", "6"]) == 64 * 1024 * 2 + 4
    # a sum of int32 is int64
    assert _bytes(
        "aten::sum",
        [shape, [], [], []],
        [INT, "ScalarList", "Scalar", ""],
        ["", "[1]", "False", ""],
    ) == (64 * 1024 * 4 + 64 * 8)
    # norm(x, p=2, dim=[1], keepdim): p is not a dim
    assert _bytes(
        "aten::norm",
        [shape, [], [], []],
        [F32, "Scalar", "ScalarList", "Scalar"],
        ["", "2", "[1]", "False"],
    ) == (64 * 1024 * 4 + 64 * 4)
    # var(x, unbiased=True): a full reduction, not an unreadable dim
    assert _bytes("aten::var", [shape, []], [F32, "Scalar"], ["", "True"]) == 64 * 1024 * 4 + 4


def test_type_names_of_other_platforms_and_unknown_types() -> None:
    # `long` (some builds write it for int64) is 8 bytes; `unsigned int` 4
    assert (
        _bytes("aten::add", [[N], [N], []], ["long", "long", "Scalar"], ["", "", "1"]) == 3 * N * 8
    )
    assert _bytes("aten::clone", [[N], []], ["unsigned int", ""], ["", ""]) == 2 * N * 4
    # a tensor of a type we cannot size: unknown, not 0 bytes
    assert (
        _bytes("aten::add", [[N], [N], []], [F32, "c10::Float4_e2m1fn_x2", "Scalar"], ["", "", "1"])
        is None
    )


def test_corpus_qwen_cat_row() -> None:
    """The corpus H100 Qwen trace's cat rows: 48 bf16 calls (kernel `OpaqueType<2u>`) of
    2 × [16, 16, 559, 32] and one fp32 call (`OpaqueType<4u>`) of 2 × [1, 559, 32]; each
    element read and written once. Before, 4 bytes were assumed for the bf16 lists:
    twice the bytes, 1,743 GB/s and 52 % of the H100's 3.35 TB/s."""
    from corpus import corpus_model

    model = corpus_model("tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    row = next(r for r in operators(model)["rows"] if r["name"] == "aten::cat")
    bf16 = 48 * 2 * (2 * 16 * 16 * 559 * 32) * 2
    fp32 = 2 * (2 * 559 * 32) * 4
    assert row["bytes"] == bf16 + fp32 == 1758748160
    assert row["gbps"] == 871.6 and row["pct_of_peak"] == 26.02 and row["bound"] == "memory"
    k = max(
        (r for r in kernels(model)["rows"] if "CatArrayBatchedCopy" in r["name"]),
        key=lambda r: r["calls"],
    )
    assert k["gbps"] == 873.0 and k["pct_of_peak"] == 26.06
