"""bench/taxonomy_survey.py, the survey of kernel classes between two taxonomy tables, on a
real MI300X SGLang trace: a base table whose attention families count as GEMM reports
exactly the trace's attention kernels, with their time and share of the trace's kernels."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from corpus import CORPUS, corpus_missing, corpus_model
from kinetoscope.analysis.core.kernel_classes import kernel_classes
from kinetoscope.analysis.core.rules import load
from kinetoscope.analysis.core.taxonomy import WORKS, parse_families

SGLANG = (
    "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"
)


def survey_module() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "bench" / "taxonomy_survey.py"
    spec = importlib.util.spec_from_file_location("taxonomy_survey", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_survey_reports_the_kernels_a_table_moves() -> None:
    if not (CORPUS / SGLANG).exists():
        corpus_missing(SGLANG)
    survey = survey_module()
    table = copy.deepcopy(load("kernel_taxonomy"))
    for family in table["families"]:
        if family["work"] == "attention":
            family["work"] = "gemm"
    changes: dict[str, Any] = {}
    vendor, names = survey.survey_trace(CORPUS / SGLANG, "sglang", parse_families(table), changes)
    assert vendor == "amd" and names > 0
    # The expected moves, from the product's own classes of the same trace.
    model = corpus_model(SGLANG)
    classes = kernel_classes(model)
    dur = model.events["dur"][classes.rows].astype(np.float64)
    attention = classes.work == WORKS.index("attention")
    kernel_names = model.names_of(classes.rows)
    moved = {kernel_names[i] for i in np.flatnonzero(attention).tolist()}
    assert set(changes) == moved and len(moved) >= 2
    for name, change in changes.items():
        mine = [kernel_names[i] == name for i in range(len(kernel_names))]
        assert change.before.startswith("gemm/") and change.after.startswith("attention/")
        assert change.kernels == sum(mine)
        assert change.us == pytest.approx(float(dur[mine].sum()))
        assert change.share_max == pytest.approx(float(dur[mine].sum() / dur.sum()))
    fmha = [c for n, c in changes.items() if "FmhaBatchPrefillWithPagedKVCache" in n]
    assert len(fmha) == 1 and fmha[0].before == "gemm/yes (fused_attention)"
