"""Whole-view expected outputs of real corpus traces (tests/test_expected_views.py).

For each case (a corpus trace, or a run folder for the run-level views) every view of the
registry is computed as its route answers the form without parameters (callstacks and
whatif: of the operator the Operators view lists first, whatif halving it; run_whatif: the
convolutions halved) and stored in tests/expected/<case>/<view>.json:

- `json`: the view's JSON, floats rounded to 6 significant digits (the last bits of a sum
  may differ between CPUs; a change of numbers that matters shows at 6 digits), every list
  longer than 25 items cut to its first 25 and a note of how many were left out;
- `sha256`: the digest of the whole rounded JSON, before the cut, so a change in a row
  past the cut still changes the file.

Regenerate after an intended change of a view, and read the diff before committing it:

    KINETOSCOPE_UPDATE_EXPECTED=1 python -m pytest -q tests/test_expected_views.py
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import msgspec
from corpus import CORPUS, corpus_missing, corpus_model
from kinetoscope.api.endpoints import RUN_VIEWS, VIEWS
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext

EXPECTED = Path(__file__).resolve().parent / "expected"
UPDATE = os.environ.get("KINETOSCOPE_UPDATE_EXPECTED", "") not in ("", "0")
ROWS_KEPT = 25
DIGITS = 6

# case -> corpus trace: one trace of each generation and vendor.
SPAN_CASES = {
    "v100_resnet50": "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/"
    "worker0.1623143089861.pt.trace.json.gz",
    "h100_bert": "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "mi300x_sglang": "tracelens/tests/traces/inference/sglang_prefilldecode/"
    "sglang_Qwen3-8B_prefilldecode.json.gz",
    "ddp_resnet50_rank0": "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
    "worker0_span1.pt.trace.json.gz",
}
# case -> (corpus folder holding the run, run name): the run-level views.
RUN_CASES = {
    "ddp_resnet50_run": ("gaoteng-git-kineto/tb_plugin/test/data/tracing", "resnet50_newAPI_ddp"),
}


# Views that need an operator's name, from the Operators view's first row (the form the
# Operators page opens them in).
NAMED_OPERATOR = {
    "callstacks": lambda op: {"name": op},
    "whatif": lambda op: {"op": op, "factor": "0.5"},
}
# Run-level views that need a query.
RUN_PARAMS = {"run_whatif": {"op": "aten::cudnn_convolution", "factor": "0.5"}}


def rounded(value: Any) -> Any:
    """`value` with every float at DIGITS significant digits (ints and the rest as they are)."""
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0.0:
            return value
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def cut(value: Any) -> Any:
    """Every list longer than ROWS_KEPT as its first rows and a note of the rest."""
    if isinstance(value, dict):
        return {k: cut(v) for k, v in value.items()}
    if isinstance(value, list):
        kept = [cut(v) for v in value[:ROWS_KEPT]]
        if len(value) > ROWS_KEPT:
            kept.append(f"... {len(value) - ROWS_KEPT} more items (in sha256)")
        return kept
    return value


def document(trace: str, view: str, params: dict[str, Any], answer: Any) -> dict[str, Any]:
    """What tests/expected/<case>/<view>.json holds for one answer (None: not offered)."""
    doc: dict[str, Any] = {"trace": trace, "view": view, "params": params}
    if answer is None:
        return {**doc, "supported": False}
    plain = rounded(msgspec.json.decode(msgspec.json.encode(answer)))
    canonical = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return {**doc, "supported": True, "sha256": digest, "json": cut(plain)}


def span_documents(case: str) -> dict[str, dict[str, Any]]:
    """Every span view of the registry for the case's trace."""
    rel = SPAN_CASES[case]
    model = corpus_model(rel)
    docs: dict[str, dict[str, Any]] = {}
    first_operator = None
    for name, view in VIEWS.items():
        params: dict[str, Any] = {}
        if name in NAMED_OPERATOR:
            params = {} if first_operator is None else NAMED_OPERATOR[name](first_operator)
        if not view.supports(model) or (name in NAMED_OPERATOR and not params):
            docs[name] = document(rel, name, params, None)
            continue
        answer = view.of_span(model, view.decode(params))
        if name == "operators" and answer["rows"]:
            first_operator = answer["rows"][0]["name"]
        docs[name] = document(rel, name, params, answer)
    return docs


def run_documents(case: str) -> dict[str, dict[str, Any]]:
    """Every run-level view of the registry for the case's run (span 1 of each worker)."""
    folder, run_name = RUN_CASES[case]
    if not (CORPUS / folder / run_name).is_dir():
        corpus_missing(f"{folder}/{run_name}")
    runs = {r.name: r for r in scan_logdir(str(CORPUS / folder))}
    run = runs[run_name]
    docs = {}
    for name, view in RUN_VIEWS.items():
        params = view.decode(RUN_PARAMS.get(name, {}))
        context = RunContext((run,), "1", params)
        answer = view.of_context(context) if view.supports(run) else None
        docs[name] = document(f"{folder}/{run_name}", name, {"span": "1", **params}, answer)
    return docs


def expected_path(case: str, view: str) -> Path:
    return EXPECTED / case / f"{view}.json"


def as_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
