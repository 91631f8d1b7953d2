"""The Operators view's roofline fields against an independent computation from the raw
JSON (tests/independent/roofline.py), per op row, on every corpus trace with shapes and
GPU work. The agreement table: `python tests/test_independent_roofline.py`."""

from __future__ import annotations

import csv
import math
from typing import Any

import pytest
from corpus import CORPUS, corpus_missing, corpus_trace_model
from independent.roofline import operator_rows
from kinetoscope.analysis.operators.view import operators

FIELDS = ("flops", "bytes", "tflops", "gbps", "pct_of_peak", "bound")


def shaped_gpu_traces() -> list[str]:
    """Corpus traces with recorded shapes and a GPU (MANIFEST.tsv's columns), not the
    derived (damaged) copies. The 2020-21 traces whose shapes are `Input dims` (lower
    case) write `"Input type": []`: no formula applies, neither side has work (both
    give 0 rows; checked once, 12 traces, and left out here for time)."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    with manifest.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return sorted(
        r["path"]
        for r in rows
        if r["input_shapes"].startswith("y")
        and "'Input dims'" not in r["input_shapes"]
        and not r["device"].startswith("cpu")
        and "no GPU events" not in r["device"]
        and not r["path"].startswith("derived/")
    )


def _same(field: str, ours: Any, theirs: Any) -> bool:
    if ours is None or theirs is None or isinstance(ours, str):
        return ours == theirs
    if field == "pct_of_peak":
        return abs(ours - theirs) <= 0.011
    return math.isclose(ours, theirs, rel_tol=1e-3 if field in ("tflops", "gbps") else 1e-9)


def compare(rel: str) -> dict[str, list[str]]:
    """Per field, the op names whose value differs (and "rows": the names compared)."""
    view = {r["name"]: r for r in operators(corpus_trace_model(CORPUS / rel))["rows"]}
    checked = operator_rows(CORPUS / rel)
    out: dict[str, list[str]] = {"rows": sorted(checked)}
    for field in FIELDS:  # rows where the checker has a value (not null)
        out["known_" + field] = [n for n, row in checked.items() if row[field] is not None]
    for field in FIELDS:
        out[field] = [
            n
            for n, row in checked.items()
            if not _same(field, view.get(n, {}).get(field), row[field])
        ]
    # Rows the product gives work and the checker does not.
    out["only_product"] = sorted(
        n
        for n, r in view.items()
        if (r.get("flops") is not None or r.get("bytes") is not None) and n not in checked
    )
    return out


@pytest.mark.parametrize("rel", shaped_gpu_traces() or ["(corpus missing)"])
def test_roofline_agrees_with_the_independent_checker(rel: str) -> None:
    if not (CORPUS / rel).exists():
        corpus_missing(rel)
    result = compare(rel)
    differ = {k: v for k, v in result.items() if k in (*FIELDS, "only_product") and v}
    assert not differ, differ


if __name__ == "__main__":
    print("| trace | op rows | " + " | ".join(FIELDS) + " |")
    print("|---|---|" + "---|" * len(FIELDS))
    for rel in shaped_gpu_traces():
        r = compare(rel)
        n = len(r["rows"])
        cells = [f"{n - len(r[f])}/{n} ({len(r['known_' + f])} known)" for f in FIELDS]
        extra = f" (product only: {r['only_product']})" if r["only_product"] else ""
        print(f"| {rel} | {n} | " + " | ".join(cells) + f" |{extra}")


DEVICES = [
    ("AMD Instinct MI300X VF", 206141652992, 304),
    ("AMD Instinct MI300X OAM", 206141652992, 304),
    ("AMD Instinct MI300A", 128 << 30, 228),
    ("AMD Instinct MI325X VF", 256 << 30, 304),
    ("NVIDIA H100 80GB HBM3", 85017493504, 132),
    ("NVIDIA H100 80GB HBM3 VF", 85017493504, 132),
    ("NVIDIA H100 PCIe VF", 85520809984, 114),
    ("NVIDIA H100", 102085492736, 132),
    ("NVIDIA H200 141GB HBM3e", 140 * 10**9, 132),
    ("NVIDIA H200 NVL", 140 << 30, 132),
    ("NVIDIA A100-SXM4-40GB VF", 42505273344, 108),
    ("NVIDIA A100-SXM4-40GB", 84990623744, 108),
    ("NVIDIA A100-PCIE-40GB VF", 42505273344, 108),
    ("NVIDIA A100-PG509-200", 42505273344, 108),
    ("Tesla V100-DGXS-32GB", 34089730048, 80),
    ("Tesla V100-SXM2-16GB", 16945709056, 80),
    ("NVIDIA A10G", 24 << 30, 80),
    ("", 206141652992, 304),
    ("AMD Radeon Graphics", 68702699520, 104),
]


@pytest.mark.parametrize(("name", "memory", "sms"), DEVICES)
def test_peak_lookup_agrees_with_the_checker(name: str, memory: int, sms: int) -> None:
    """The device-peaks lookup (exact, family, unnamed) against the checker's own, on the
    corpus's names and the suffixed names of real deployments."""
    from independent.roofline import match_peaks as checker_match
    from kinetoscope.analysis.core.roofline.peaks import match_peaks as product_match

    ours = product_match(name, memory, sms)
    theirs = checker_match({"name": name, "totalGlobalMem": memory, "numSms": sms})
    assert ((ours.device, ours.match) if ours else None) == (
        (theirs[0]["id"], theirs[1]) if theirs else None
    )
