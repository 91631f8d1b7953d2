"""The health checks that count the rules of torch's own trace validator
(`torch/profiler/_trace_validator.py`, run here), on a built trace per rule and on every
corpus trace: per rule, the checks' counts summed equal the validator's violations (0 = 0
included). And the two producer bugs it does not catch: kernels overrunning the next one
on their stream (told from Programmatic Dependent Launch), and windows of launches whose
kernels were not recorded."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from corpus import corpus_traces
from kinetoscope.analysis.core.health.view import health
from kinetoscope.ingest.build import build_model
from torch.profiler._trace_validator import _RULES, _load_events

RULES = [rule.__name__.lstrip("_") for rule in _RULES]


def validator_counts(path: Path) -> dict[str, int]:
    events = _load_events(str(path))
    return {rule.__name__.lstrip("_"): len(rule(events)) for rule in _RULES}


def check_counts(path: Path) -> dict[str, int]:
    return rule_counts(health(build_model(str(path))))


def rule_counts(view: Any) -> dict[str, int]:
    got: collections.Counter[str] = collections.Counter(dict.fromkeys(RULES, 0))
    for check in view["checks"]:
        if check["torch_rule"]:
            got[check["torch_rule"]] += check["count"] or 0
    return dict(got)


def _sync(t: TraceBuilder, kind: str, ts: float, **args: Any) -> None:
    t.events.append(
        {
            "ph": "X",
            "cat": "cuda_sync",
            "name": kind,
            "pid": 0,
            "tid": 7,
            "ts": ts,
            "dur": 1.0,
            "args": {"cuda_sync_kind": kind, "device": 0, "stream": 7, **args},
        }
    )


def _base() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0.0, 1000.0)
    mm = t.op("aten::mm", 10, 20)
    t.launch(12, 5, mm, gpu_ts=30, gpu_dur=100, name="gemm")
    return t


def _causality(t: TraceBuilder) -> None:
    add = t.op("aten::add", 300, 20)
    t.launch(305, 5, add, gpu_ts=290, gpu_dur=10, name="add_kernel")  # 15 µs before its launch


def _populated(t: TraceBuilder) -> None:
    _sync(t, "Stream Wait Event", 400)  # no record id
    _sync(t, "Event Sync", 410, wait_on_cuda_event_record_corr_id=-1)


def _overlap(t: TraceBuilder) -> None:
    _sync(t, "Stream Sync", 60)  # while gemm [30, 130] runs on stream 7


def _in_past(t: TraceBuilder) -> None:
    later = t.runtime("cudaEventRecord", 600, 1.0)
    _sync(t, "Stream Wait Event", 500, wait_on_cuda_event_record_corr_id=later)
    _sync(t, "Stream Wait Event", 510, wait_on_cuda_event_record_corr_id=99999)


def _nccl(t: TraceBuilder) -> None:
    t.op("record_param_comms", 700, 5, **{"Collective name": "allreduce", "Group size": 2})


def _sequence(t: TraceBuilder) -> None:
    for at, op in ((800, "MulBackward0"), (820, "AddBackward0"), (840, "MulBackward0")):
        name = f"autograd::engine::evaluate_function: {op}"
        t.op(name, at, 10, tid=200, **{"Sequence number": 5})


BREAKS = {
    "check_gpu_kernel_causality": (_causality, 1),
    "check_stream_wait_corr_id_populated": (_populated, 2),
    "check_stream_sync_overlap": (_overlap, 1),
    "check_stream_wait_corr_id_in_past": (_in_past, 2),
    "check_nccl_metadata": (_nccl, 1),
    "check_backward_seq_id_uniqueness": (_sequence, 1),
}


@pytest.mark.parametrize("rule", RULES)
def test_a_built_trace_breaking_one_rule(tmp_path: Path, rule: str) -> None:
    t = _base()
    make, count = BREAKS[rule]
    make(t)
    path = t.write(tmp_path / "w.pt.trace.json")
    want = validator_counts(path)
    assert want[rule] == count and sum(want.values()) == count  # the trace breaks it alone
    assert check_counts(path) == want


def test_a_clean_trace_breaks_none(tmp_path: Path) -> None:
    path = _base().write(tmp_path / "w.pt.trace.json")
    assert validator_counts(path) == check_counts(path) == dict.fromkeys(RULES, 0)


PRODUCER_BUGS = ("kernel_overruns_next", "kernel_overlap_maybe_pdl", "kernels_not_recorded")
# The corpus's one trace with a producer bug: HTA's trace_diff test trace, whose kernel
# durations a tool changed (its control trace, the same job untouched, has none).
KNOWN_BUGS = {"test.json.gz": {"kernel_overruns_next": 18}}


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: Path(p).name)
def test_every_corpus_trace_counts_as_the_validator(path: Path) -> None:
    """Per rule, the checks' counts equal torch's validator's; the producer-bug checks
    stay silent where a trace has neither bug."""
    if "derived" in Path(path).parts:
        pytest.skip("bad input: the validator's strict JSON reader refuses it")
    view = health(build_model(str(path)))
    assert rule_counts(view) == validator_counts(path)
    bugs = {c["id"]: c["count"] for c in view["checks"] if c["id"] in PRODUCER_BUGS and c["count"]}
    assert bugs == KNOWN_BUGS.get(Path(path).name, {})


def test_every_rule_names_its_check_and_strict_fails_on_them(tmp_path: Path) -> None:
    from kinetoscope.analysis.core.health.view import TORCH_RULES

    assert sorted(TORCH_RULES.values()) == sorted(RULES)
    t = _base()
    _nccl(t)
    view = health(t.model(tmp_path))
    flagged = [c for c in view["checks"] if c["count"]]
    assert [(c["id"], c["torch_rule"], c["severity"]) for c in flagged] == [
        ("collective_without_metadata", "check_nccl_metadata", "warning")
    ]
    assert view["status"] == "warnings"  # `check --strict` exits 1 on it
