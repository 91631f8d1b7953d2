"""Where our roofline work agrees with a peer's and where it differs on purpose, pinned on
the calls of the corpus H100 Qwen trace (tracelens/tests/traces/h100/Qwen_...). The peer's
figures are TraceLens's reference output for the same trace (AMD-AGI/TraceLens,
tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs/unified_perf_summary.csv
and BinaryElementwise.csv, commit 410dbdea / 87031cdf): per call `GFLOPS` (10^9 FLOP) and
`Data Moved (MB)`, which is MiB (2^20 bytes). Those files are not in the corpus; the
numbers are copied here as facts. docs/metrics.md ("Where we differ") says why we differ."""

from __future__ import annotations

from typing import Any

import pytest
from kinetoscope.analysis.core.roofline.families import work_of
from kinetoscope.analysis.core.roofline.formulas import Call

BF16, F32 = "c10::BFloat16", "float"
MIB = 1 << 20

# (op, Input Dims, Input type, Concrete Inputs, TraceLens GFLOPS, TraceLens MiB moved)
TRACELENS = {
    "mm": (
        "aten::mm",
        [[8944, 1024], [1024, 2816]],
        [BF16, BF16],
        ["", ""],
        51.581550592,
        71.0078125,
    ),
    "addmm": (
        "aten::addmm",
        [[1024], [8944, 1024], [1024, 1024], [], []],
        [BF16, BF16, BF16, "Scalar", "Scalar"],
        ["", "", "", "1", "1"],
        18.766086144,
        36.939453125,
    ),
    "sdpa_causal": (
        "aten::_scaled_dot_product_flash_attention",
        [[16, 16, 559, 64]] * 3 + [[], [], [], []],
        [BF16] * 3 + ["Scalar"] * 4,
        ["", "", "", "0.", "True", "False", "0.125"],
        10.239377408,
        69.875,
    ),
    "add": (
        "aten::add",
        [[16, 16, 559, 64], [16, 16, 559, 64], []],
        [BF16, BF16, "Scalar"],
        ["", "", "1"],
        0.009158656,
        52.40625,
    ),
    "add_number": (
        "aten::add",
        [[16, 559, 1], [], []],
        [F32, "double", "Scalar"],
        ["", "", "1"],
        8.944e-06,
        0.06824493408203125,
    ),
    "mul_broadcast": (
        "aten::mul",
        [[16, 559, 1024], [16, 559, 1]],
        [F32, F32],
        ["", ""],
        0.009158656,
        69.90911865234375,
    ),
    "copy": (
        "aten::copy_",
        [[16, 16, 559, 64], [16, 16, 559, 64], []],
        [BF16, BF16, "Scalar"],
        ["", "", "False"],
        0.009158656,
        34.9375,
    ),
}


def _ours(key: str) -> Any:
    name, dims, types, concrete, _, _ = TRACELENS[key]
    work = work_of(name, Call(dims, types, concrete))
    assert work is not None
    return work


@pytest.mark.parametrize("key", sorted(TRACELENS))
def test_bytes_agree_with_tracelens(key: str) -> None:
    """Bytes: each input read once and each output written once, as TraceLens counts."""
    assert _ours(key).bytes == TRACELENS[key][5] * MIB


@pytest.mark.parametrize("key", ["mm", "sdpa_causal", "add", "add_number", "mul_broadcast"])
def test_flops_agree_with_tracelens(key: str) -> None:
    """2·M·N·K; causal attention halved (both); one FLOP per element-wise output."""
    assert _ours(key).flops == round(TRACELENS[key][4] * 1e9)


def test_addmm_bias_add_is_not_counted() -> None:
    """TraceLens adds one FLOP per output element for addmm's bias (M·N = 9,158,656 of
    18,766,086,144); we count 2·M·N·K only, as PyTorch's flop_counter does."""
    assert _ours("addmm").flops == 2 * 8944 * 1024 * 1024 == 18756927488
    assert round(TRACELENS["addmm"][4] * 1e9) - _ours("addmm").flops == 8944 * 1024


def test_copy_has_no_flops() -> None:
    """TraceLens counts one FLOP per copied element; a copy computes nothing: 0 here (its
    roof is the memory one either way, so pct_of_peak and bound do not change)."""
    assert _ours("copy").flops == 0.0
    assert round(TRACELENS["copy"][4] * 1e9) == 16 * 16 * 559 * 64
