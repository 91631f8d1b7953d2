"""Trace health (`analysis/core/health`): defects injected into copies of real corpus traces of
every vendor raise each check's count by exactly what was injected, and a clean trace's
counts match a plain-Python reading of its JSON (an oracle that shares no code with the
checks)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_path
from kinetoscope.analysis.core.health.view import health
from kinetoscope.ingest.build import build_model

# One trace per vendor and device (see ../shared/corpus/MANIFEST.tsv).
VENDOR_TRACES = {
    "v100": "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_4/"
    "worker0.1623212756351.pt.trace.json.gz",
    "a100": "hta/tests/data/critical_path/alexnet/"
    "benchmark_result_2869224_1695835535_trace.json.gz",
    "h100": "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "mi250": "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "mi300x": "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/"
    "graph_execution.json.gz",
    "cpu": "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "mtia": "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
}
FREE_TID = 987654  # lanes no corpus trace uses: injected slices meet nothing there


def _load(rel: str) -> dict[str, Any]:
    path = corpus_path(rel)
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def _counts(doc: dict[str, Any], tmp: Path, name: str) -> dict[str, int | None]:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(doc))
    return {c["id"]: c["count"] for c in health(build_model(str(path)))["checks"]}


def _timed(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("ts")]


def _middle_ts(doc: dict[str, Any]) -> float:
    starts = sorted(float(e["ts"]) for e in _timed(doc))
    return starts[len(starts) // 2]


def _pid(doc: dict[str, Any]) -> Any:
    return _timed(doc)[0]["pid"]


def _slice(doc: dict[str, Any], ts: float, dur: float, **more: Any) -> dict[str, Any]:
    event = {"ph": "X", "cat": "cpu_op", "name": "injected", "pid": _pid(doc), "tid": FREE_TID}
    return {**event, "ts": ts, "dur": dur, **more}


def _inject_zero(doc: dict[str, Any]) -> int:
    doc["traceEvents"] += [_slice(doc, 0, 0, name=f"zero{i}") for i in range(3)]
    return 3


def _inject_duplicates(doc: dict[str, Any]) -> int:
    seen = Counter(json.dumps(e, sort_keys=True) for e in _timed(doc))
    unique = [e for e in _timed(doc) if seen[json.dumps(e, sort_keys=True)] == 1]
    doc["traceEvents"] += [dict(e) for e in unique[:4]]
    return 4


def _inject_negative(doc: dict[str, Any]) -> int:
    t = _middle_ts(doc)
    doc["traceEvents"] += [_slice(doc, t + i, -5, name=f"neg{i}") for i in range(2)]
    return 2


def _inject_clock(doc: dict[str, Any]) -> int:
    late = max(float(e["ts"]) for e in _timed(doc)) + 3600e6  # an hour later
    doc["traceEvents"] += [_slice(doc, late + i, 1, name=f"off{i}") for i in range(2)]
    return 2


def _inject_early_kernels(doc: dict[str, Any]) -> int:
    t = _middle_ts(doc)
    for i in range(3):
        corr = 900_000_000 + i
        call = _slice(doc, t + 40 * i, 5, cat="cuda_runtime", name="cudaLaunchKernel")
        call["args"] = {"correlation": corr}
        kernel = {"ph": "X", "cat": "kernel", "name": "early", "pid": 0, "tid": FREE_TID}
        kernel |= {"ts": t + 40 * i - 20, "dur": 3}
        kernel["args"] = {"correlation": corr, "device": 0, "stream": FREE_TID}
        doc["traceEvents"] += [call, kernel]
    return 3


def _inject_overlaps(doc: dict[str, Any]) -> int:
    """Two crossing pairs alone on a lane, and two nested in a longer slice (a crossing
    inside an enclosing slice: the latest end so far is the enclosing one's)."""
    t = _middle_ts(doc)
    for i in range(2):
        base = t + 100 * i
        doc["traceEvents"] += [_slice(doc, base, 10), _slice(doc, base + 5, 15)]
    enclosing = t + 1000
    doc["traceEvents"].append(_slice(doc, enclosing, 500, name="enclosing"))
    for i in range(2):
        base = enclosing + 10 + 100 * i
        doc["traceEvents"] += [_slice(doc, base, 10), _slice(doc, base + 5, 15)]
    return 4


def _inject_flows(doc: dict[str, Any]) -> int:
    t = _middle_ts(doc)
    flow = {"ph": "s", "cat": "ac2g", "name": "ac2g", "pid": _pid(doc), "tid": FREE_TID}
    doc["traceEvents"] += [{**flow, "id": 800_000_000 + i, "ts": t} for i in range(3)]
    return 3


def _inject_outside(doc: dict[str, Any]) -> int:
    spans = [e for e in _timed(doc) if e.get("cat") in ("Trace", "trace")]
    if not spans:
        return 0
    start = min(float(e["ts"]) for e in spans)
    doc["traceEvents"] += [_slice(doc, start - 1000 - 50 * i, 2) for i in range(2)]
    return 2


INJECTIONS = {
    "zero_timestamps": _inject_zero,
    "duplicate_events": _inject_duplicates,
    "negative_duration": _inject_negative,
    "clock_outlier": _inject_clock,
    "kernel_before_launch": _inject_early_kernels,
    "overlapping_events": _inject_overlaps,
    "unmatched_flows": _inject_flows,
    "outside_profiling_window": _inject_outside,
}


@pytest.mark.parametrize("vendor", sorted(VENDOR_TRACES))
def test_injected_defects_raise_each_count_by_what_was_injected(
    vendor: str, tmp_path: Path
) -> None:
    doc = _load(VENDOR_TRACES[vendor])
    clean = _counts(doc, tmp_path, "clean")
    for check, inject in INJECTIONS.items():
        copy = json.loads(json.dumps(doc))
        added = inject(copy)
        found = _counts(copy, tmp_path, check)
        if clean[check] is None and check == "outside_profiling_window":
            assert added == 0 and found[check] is None  # no window: unknown, not 0
            continue
        before = clean[check] or 0
        assert found[check] == before + added, (vendor, check)
        # ... and no other check moved (each injected event is only that defect; on an AMD
        # trace with queue ids, each injected GPU activity is one more on a queue)
        moves = (check, "kernel_before_launch", "stream_ids_are_hsa_queues")
        others = {k: v for k, v in found.items() if k not in moves}
        assert others == {k: v for k, v in clean.items() if k in others}, (vendor, check)


@pytest.mark.parametrize("vendor", ["h100", "mi300x", "mtia"])
def test_a_file_cut_short_is_truncated(vendor: str, tmp_path: Path) -> None:
    text = json.dumps(_load(VENDOR_TRACES[vendor]))
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) * 6 // 10])
    view = health(build_model(str(path)))
    found = {c["id"]: c for c in view["checks"]}
    assert found["truncated_file"]["count"] == 1
    assert view["status"] == "errors" and view["warnings"]


def _oracle(doc: dict[str, Any]) -> dict[str, int]:
    """Plain Python over the JSON events (metadata aside): zero timestamps, negative
    durations, repeated events, and flows missing a start or an end."""
    events = [e for e in doc["traceEvents"] if isinstance(e, dict) and e.get("ph") != "M"]
    copies = Counter(json.dumps(e, sort_keys=True) for e in events)
    flows: dict[tuple[Any, Any], set[str]] = {}
    for e in events:
        if e.get("ph") in ("s", "f", "t"):
            flows.setdefault((e.get("cat"), e.get("id")), set()).add(e["ph"])
    return {
        "negative_duration": sum(1 for e in events if (e.get("dur") or 0) < 0),
        "zero_timestamps": sum(1 for e in events if e.get("ts") == 0 and not e.get("dur")),
        "duplicate_events": sum(n - 1 for n in copies.values()),
        "unmatched_flows": sum(1 for phs in flows.values() if not {"s", "f"} <= phs),
    }


@pytest.mark.parametrize("vendor", sorted(VENDOR_TRACES))
def test_clean_traces_report_what_is_in_them(vendor: str, tmp_path: Path) -> None:
    doc = _load(VENDOR_TRACES[vendor])
    found = _counts(doc, tmp_path, "clean")
    expected = _oracle(doc)
    assert {k: found[k] for k in expected} == expected
    assert found["truncated_file"] == 0


def _built(tmp: Path, events: list[dict[str, Any]]) -> dict[str, Any]:
    path = tmp / "built.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return {c["id"]: c for c in health(build_model(str(path)))["checks"]}


def test_nesting_duplicates_and_clock_on_a_built_trace(tmp_path: Path) -> None:
    def op(name: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
        event = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid}
        return {**event, "ts": ts, "dur": dur, "args": args}

    def alloc(ts: float, addr: int) -> dict[str, Any]:
        args = {"Addr": addr, "Bytes": 512, "Device Type": 1, "Device Id": 0}
        event = {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1}
        return {**event, "ts": ts, "s": "t", "args": args}

    found = _built(
        tmp_path,
        [
            op("child first", 1000, 5),  # same start as its parent, listed before it
            op("parent", 1000, 10),
            op("nested", 1002, 3),
            op("crosses parent", 1008, 6),  # 1008..1014 past the parent's 1010
            op("rounded", 1013.5, 1),  # ends 0.5 µs past: within the 1 µs tolerance
            op("other lane", 1005, 20, tid=2),
            op("parent", 1000, 10),  # a copy
            alloc(1003, 0x10),
            alloc(1003, 0x20),  # same start, another address: not a copy
            op("far", 1000 + 3600e6, 1),  # an hour later
        ],
    )
    overlap = found["overlapping_events"]
    assert overlap["count"] == 1 and overlap["examples"][0]["name"] == "crosses parent"
    dup = found["duplicate_events"]
    assert (dup["count"], dup["examples"][0]["row"]) == (1, 6)
    assert found["clock_outlier"]["count"] == 1
    assert found["clock_outlier"]["examples"][0]["name"] == "far"
    assert found["outside_profiling_window"]["count"] is None  # no window: unknown


@pytest.mark.parametrize("together", [2, 5, 12])
def test_copies_among_many_events_of_one_start(tmp_path: Path, together: int) -> None:
    """Copies are found whether a few events share their start (compared pairwise) or
    many do (sorted): `together` ops at one start, two of them copied, one at the end."""

    def op(name: str, ts: float, dur: float) -> dict[str, Any]:
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}

    events = [op(f"op{i}", 1000, 10 + i) for i in range(together)]
    events += [
        op("op0", 1000, 10),
        op("later", 2000, 1),
        op(f"op{together - 1}", 1000, 9 + together),
    ]
    dup = _built(tmp_path, events)["duplicate_events"]
    assert dup["count"] == 2
    assert [e["row"] for e in dup["examples"]] == [together, together + 2]


def test_copies_among_events_of_other_kinds_at_one_start(tmp_path: Path) -> None:
    """Events of several kinds share one start (a launch, its flow's start mark, an op; a
    kernel and the flow's end mark): only same-kind copies count, each kind's copies
    found though other kinds' rows sit between them in start order."""
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1}
    launch = {**launch, "ts": 100, "dur": 5, "args": {"correlation": 7}}
    flow_s = {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 100}
    flow_f = {**flow_s, "ph": "f", "bp": "e", "pid": 0, "tid": 7, "ts": 120}
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 120}
    kernel = {**kernel, "dur": 4, "args": {"correlation": 7, "device": 0, "stream": 7}}
    op = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100}
    op = {**op, "dur": 9}
    events = [op, launch, flow_s, kernel, flow_f]
    events += [dict(launch), dict(flow_s), dict(kernel), dict(kernel)]  # 4 copies
    events += [{**op, "dur": 8}]  # same start, not a copy
    dup = _built(tmp_path, events)["duplicate_events"]
    assert dup["count"] == 4
    assert sorted(e["row"] for e in dup["examples"]) == [5, 6, 7, 8]
