"""Device peaks matched by model family: names with suffixes (SR-IOV `VF`, `OAM`, memory
size and type, SXM/PCIe forms) find their entry, and the view says which entry and how it
was matched; a different model (H200 for H100, MI300A for MI300X) never matches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.roofline.peaks import family_of, match_peaks
from kinetoscope.analysis.operators.view import operators

GIB = 1 << 30
MI300X_VF = {
    "id": 0,
    "name": "AMD Instinct MI300X VF",
    "totalGlobalMem": 206141652992,
    "numSms": 304,
}


@pytest.mark.parametrize(
    ("name", "memory", "sms", "expected"),
    [
        ("AMD Instinct MI300X VF", 206141652992, 304, ("MI300X", "family")),
        ("AMD Instinct MI300X VF", None, None, ("MI300X", "family")),  # reports neither
        ("AMD Instinct MI300X OAM", 206141652992, 304, ("MI300X", "exact")),
        ("AMD Instinct MI300A", 128 * GIB, 228, None),  # an APU: another model
        ("AMD Instinct MI325X VF", 256 * GIB, 304, ("MI325X", "family")),
        ("NVIDIA H100 80GB HBM3", 85017493504, 132, ("H100-SXM", "exact")),
        ("NVIDIA H100 80GB HBM3 VF", 85017493504, 132, ("H100-SXM", "family")),
        ("NVIDIA H100 SXM5 80GB", 85017493504, 132, ("H100-SXM", "exact")),
        ("NVIDIA H100 PCIe VF", 85520809984, 114, ("H100-PCIe", "family")),
        ("NVIDIA H100", 102085492736, 132, None),  # 95 GiB, no form: no entry has it
        ("NVIDIA H200 141GB HBM3e", 140 * 10**9, 132, ("H200-SXM", "family")),
        ("NVIDIA H200 NVL", 140 * GIB, 132, None),  # the NVL form is not in the data
        ("NVIDIA GH200 480GB", 95 * GIB, 132, None),
        ("NVIDIA A100-SXM4-40GB", 42505273344, 108, ("A100-SXM4-40GB", "exact")),
        ("NVIDIA A100-SXM4-40GB VF", 42505273344, 108, ("A100-SXM4-40GB", "family")),
        ("NVIDIA A100-SXM4-40GB", 84990623744, 108, None),  # the name's size contradicts
        ("NVIDIA A100 80GB PCIe", 84990623744, 108, ("A100-PCIe-80GB", "exact")),
        ("NVIDIA A100-PCIE-40GB VF", 42505273344, 108, ("A100-PCIe-40GB", "family")),
        ("NVIDIA A100-PG509-200", 42505273344, 108, None),
        ("Tesla V100-DGXS-32GB", 34089730048, 80, None),
        ("NVIDIA A10G", 24 * GIB, 80, None),  # not the A10
        ("NVIDIA L40", 48 * GIB, 142, None),  # not the L40S
        ("", 206141652992, 304, ("MI300X", "unnamed")),
    ],
)
def test_family_matching(
    name: str, memory: int | None, sms: int | None, expected: tuple[str, str] | None
) -> None:
    found = match_peaks(name, memory, sms)
    assert ((found.device, found.match) if found else None) == expected


def test_family_of_sets_aside_vendor_form_and_decorations() -> None:
    assert family_of("AMD Instinct MI300X VF") == ("MI300X", "")
    assert family_of("NVIDIA A100-SXM4-40GB") == ("A100", "SXM")
    assert family_of("NVIDIA H100 80GB HBM3") == ("H100", "")
    assert family_of("NVIDIA A100-PG509-200") is None  # two tokens left: not one model
    assert family_of("NVIDIA H100 SXM5 PCIe") is None  # two forms


def test_mi300x_vf_trace_gets_the_mi300x_roofs(tmp_path: Path) -> None:
    """A built trace whose device calls itself `AMD Instinct MI300X VF`: an mm row gets
    the MI300X bf16 roof (1307.4 TFLOP/s) and the view names the entry and the match."""
    b = TraceBuilder()
    b.header["deviceProperties"] = [MI300X_VF]
    args = {
        "Input Dims": [[4096, 4096], [4096, 4096]],
        "Input type": ["c10::BFloat16", "c10::BFloat16"],
        "Concrete Inputs": ["", ""],
    }
    ext = b.op("aten::mm", 0.0, 100.0, **args)
    b.launch(1.0, 1.0, ext, gpu_ts=10.0, gpu_dur=200.0, name="Cijk_mm")
    view = operators(b.model(tmp_path))
    assert [(r["device"], r["match"]) for r in view["roofs"]] == [("MI300X", "family")]
    row = next(r for r in view["rows"] if r["name"] == "aten::mm")
    flops = 2 * 4096**3
    assert row["pct_of_peak"] == round(100 * flops / 200e-6 / 1307.4e12, 2) == 52.56
    assert row["bound"] == "compute"


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", "H100-SXM"),
        ("tracelens/tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz", "MI300X"),
        ("hta/tests/data/trace_diff/test/test.json.gz", "V100-SXM2"),
        ("hta/tests/data/trace_diff/control/control.json.gz", None),  # A100-PG509-200
    ],
)
def test_corpus_device_names(rel: str, expected: str | None) -> None:
    """The real names of the corpus: exact entries stay exact; Meta's A100-PG509-200 stays
    unknown (its clocks are not a datasheet's)."""
    roofs: list[dict[str, Any]] = list(operators(corpus_model(rel))["roofs"])
    assert {r["device"] for r in roofs} == ({expected} if expected else set())
    assert all(r["match"] == "exact" for r in roofs)
