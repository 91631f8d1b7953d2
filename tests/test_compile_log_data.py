"""The committed TORCH_TRACE compile logs and their profiler traces (tests/data/compile_logs,
recorded by samples/record_compile_logs.py) hold what their README says, so the data for
issue 48 cannot rot silently. The logs are read here with the standard library only."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from kinetoscope.ingest.build import build_model

DATA = Path(__file__).parent / "data" / "compile_logs"
SCRIPT = Path(__file__).parent.parent / "samples" / "record_compile_logs.py"
CASES = (
    "graph_break",
    "recompile_shapes",
    "recompile_value",
    "compile_failure",
    "cache_hit",
    "two_ranks",
    "before_window",
    "recompile_ints",
)
# `[rank0]:` (only outside TORCH_TRACE), glog level, MMDD, local wall time, pid,
# source file:line, an optional ` [frame/compile]` trace id, then the JSON metadata.
LINE = re.compile(
    r"^(?:\[rank\d+\]:)?[VIWEC](\d{4}) (\d\d:\d\d:\d\d\.\d{6}) (\d+) (\S+):(\d+)\]"
    r"(?: \[[^\]]*\])? (\{.*)$"
)


def _records(path: Path) -> list[dict[str, Any]]:
    """Each record: its type (first metadata key), metadata, prefix time, payload text."""
    out: list[dict[str, Any]] = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("\t"):
                out[-1]["payload"].append(line[1:].rstrip("\n"))
                continue
            m = LINE.match(line.rstrip("\n"))
            assert m, f"{path.name}: unparsed line {line[:80]!r}"
            meta = json.loads(m.group(6))
            record = {"type": next(iter(meta)), "meta": meta, "payload": []}
            record |= {"date": m.group(1), "time": m.group(2)}
            record["cid"] = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
            out.append(record)
    return out


def _logs(case: str, sub: str = "torch_trace") -> list[Path]:
    return sorted((DATA / case / sub).glob("dedicated_log_torch_trace_*.log.gz"))


def _one_log(case: str, sub: str = "torch_trace") -> list[dict[str, Any]]:
    logs = _logs(case, sub)
    assert len(logs) == 1, logs
    return _records(logs[0])


def _metrics(records: list[dict[str, Any]], kind: str = "compilation_metrics") -> list[dict]:
    return [r["meta"][kind] for r in records if r["type"] == kind]


def _artifacts(records: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "artifact" and r["meta"]["artifact"]["name"] == name]


def _marked_line(mark: str) -> int:
    for n, text in enumerate(SCRIPT.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# LINE: {mark}"):
            return n
    raise AssertionError(mark)


def _traces(case: str) -> list[Path]:
    return sorted((DATA / case).glob("worker*.pt.trace.json.gz"))


def test_every_case_has_its_trace_and_log_and_stays_small() -> None:
    total = 0
    for case in CASES:
        assert _traces(case), case
        assert _logs(case), case
    for f in DATA.rglob("*"):
        if f.is_file():
            assert f.stat().st_size < 1_000_000, f
            total += f.stat().st_size
    assert total < 3_000_000


def test_graph_break_splits_forward_into_two_frames() -> None:
    records = _one_log("graph_break")
    line = _marked_line("graph_break")
    fwd = _metrics(records)
    assert [m["compile_id"] for m in fwd] == ["0/0", "1/0"]
    assert [m["co_name"] for m in fwd] == ["forward", f"torch_dynamo_resume_in_forward_at_{line}"]
    assert all(m["num_graph_breaks"] == 1 for m in fwd)
    assert "graph_break()" in fwd[0]["restart_reasons"][0]
    assert sorted(m["compile_id"] for m in _metrics(records, "bwd_compilation_metrics")) == [
        "0/0",
        "1/0",
    ]
    (reason,) = _artifacts(records, "dynamo_graph_break_reason")
    assert (
        reason["payload"][0]
        == f"Graph break in user code at /repo/{SCRIPT.parent.name}/{SCRIPT.name}:{line}"
    )
    assert (reason["meta"]["frame_id"], reason["meta"]["frame_compile_id"]) == (0, 0)


def test_shape_change_recompiles_with_its_reason() -> None:
    records = _one_log("recompile_shapes")
    fwd = _metrics(records)
    assert [m["compile_id"] for m in fwd] == ["0/0", "0/1", "0/2"]
    assert [m["recompile_reason"] for m in fwd] == [
        None,
        "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4",
        "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 6",
    ]
    # The artifact says encoding "json", but one reason is written as bare text (not a
    # JSON string); several are a JSON list, newest cache entry first.
    first, second = ("\n".join(a["payload"]) for a in _artifacts(records, "recompile_reasons"))
    assert first == "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4"
    assert json.loads(second) == [
        "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 6",
        "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 6",
    ]


def test_value_change_recompiles_on_the_attribute_guard() -> None:
    records = _one_log("recompile_value")
    fwd = _metrics(records)
    assert [m["compile_id"] for m in fwd] == ["0/0", "0/1"]
    assert fwd[0]["recompile_reason"] is None
    assert "residual" in fwd[1]["recompile_reason"]


def test_failed_compile_is_recorded_and_runs_eagerly() -> None:
    records = _one_log("compile_failure")
    fwd = _metrics(records)
    assert [m["compile_id"] for m in fwd] == ["0/0"]
    assert fwd[0]["fail_type"] == "BackendCompilerFailed"
    assert "this backend always fails" in fwd[0]["fail_reason"]
    # a backend's failure names no user frame (those fields are for tracing failures)
    assert fwd[0]["fail_user_frame_lineno"] is None
    assert fwd[0]["has_guarded_code"] is False
    assert not _metrics(records, "bwd_compilation_metrics")
    assert _artifacts(records, "dynamo_error")


def _cache_counts(records: list[dict[str, Any]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for kind in ("compilation_metrics", "bwd_compilation_metrics"):
        for m in _metrics(records, kind):
            for key in (
                "inductor_fx_local_cache_hit_count",
                "inductor_fx_local_cache_miss_count",
                "aotautograd_local_cache_hit_count",
                "aotautograd_local_cache_miss_count",
            ):
                counts[key] += m[key] or 0
    return counts


def test_second_process_hits_the_warm_cache() -> None:
    cold = _one_log("cache_hit", "cold/torch_trace")
    warm = _one_log("cache_hit")
    assert _cache_counts(cold)["inductor_fx_local_cache_miss_count"] == 2
    assert _cache_counts(cold)["aotautograd_local_cache_miss_count"] == 1
    assert _cache_counts(warm)["aotautograd_local_cache_hit_count"] == 1
    assert _cache_counts(warm)["inductor_fx_local_cache_miss_count"] == 0
    assert _cache_counts(warm)["inductor_fx_local_cache_hit_count"] == 2  # fwd and bwd graphs
    assert len(_metrics(cold, "bwd_compilation_metrics")) == 1
    assert not _metrics(warm, "bwd_compilation_metrics")  # the backward came from the cache
    assert _artifacts(warm, "aotautograd_cache_hit")
    assert not _artifacts(cold, "aotautograd_cache_hit")


def test_two_ranks_write_one_rank_suffixed_log_each() -> None:
    logs = _logs("two_ranks")
    assert [p.name.split("_")[4:6] for p in logs] == [["rank", "0"], ["rank", "1"]]
    for rank, path in enumerate(logs):
        records = _records(path)
        # all but the interned file names and the torch_version artifact carry the rank
        unranked = [r for r in records if "rank" not in r["meta"]]
        assert {r["type"] for r in unranked} == {"str", "artifact"}
        assert [r["meta"]["artifact"]["name"] for r in unranked if r["type"] == "artifact"] == [
            "torch_version"
        ]
        assert {r["meta"].get("rank") for r in records} - {None} == {rank}
        fwd = _metrics(records)
        assert [m["compile_id"] for m in fwd] == ["0/0", "1/0", "2/0", "3/0", "4/0"]
        assert (fwd[-1]["co_name"], fwd[-1]["num_graph_breaks"]) == ("forward", 3)
        breaks = _artifacts(records, "dynamo_graph_break_reason")
        assert [r["cid"] for r in breaks] == ["0/0", "1/0", "2/0"]
        assert [m["compile_id"] for m in _metrics(records, "bwd_compilation_metrics")] == ["4/0"]
        assert _metrics(records)
    assert [p.name.split(".")[0] for p in _traces("two_ranks")] == ["worker0", "worker1"]


@pytest.mark.parametrize("case", CASES)
def test_trace_loads_and_holds_the_compiled_regions(case: str) -> None:
    """Each trace holds a `Torch-Compiled Region: <compile id>` per compile that made a
    graph and did not fail: none for the failed backend (it ran eagerly), none for the
    DDP case's 3/0 (a resume function Dynamo traced without a graph: graph_op_count null)."""
    for log, trace in zip(_logs(case), _traces(case), strict=True):
        model = build_model(str(trace))
        regions = {n for n in model.names if n.startswith("Torch-Compiled Region: ")}
        made = {
            m["compile_id"]
            for m in _metrics(_records(log))
            if m["fail_type"] is None and m["graph_op_count"] is not None
        }
        assert regions == {f"Torch-Compiled Region: {c}" for c in made}, case
        assert (case == "compile_failure") == (not made)
        steps = {n for n in model.names if n.startswith("ProfilerStep#")}
        assert len(steps) == (4 if case == "before_window" else 6)


def _trace_annotations(trace: Path) -> dict[str, tuple[float, float]]:
    """Each user annotation's (start, end) in epoch µs: baseTimeNanoseconds/1000 + ts."""
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        data = json.load(f)
    base = data["baseTimeNanoseconds"] / 1000
    return {
        e["name"]: (base + e["ts"], base + e["ts"] + e["dur"])
        for e in data["traceEvents"]
        if e.get("cat") == "user_annotation"
    }


def _dynamo_events(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """compile id → the `dynamo` chromium event's begin and end ts (epoch µs)."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        if r["type"] == "chromium_event":
            event = json.loads("\n".join(r["payload"]))
            if event["name"] == "dynamo":
                cid = event["args"]["compile_id"] if event["ph"] == "B" else r["cid"]
                out.setdefault(cid, {})[event["ph"]] = event["ts"]
    return out


@pytest.mark.parametrize("case", [c for c in CASES if c != "before_window"])
def test_log_chromium_events_bracket_the_trace_annotations(case: str) -> None:
    """The log's `dynamo` B/E events and the trace's `dynamo_data: compile_id=…`
    annotation of the same compile share one clock (epoch µs): dynamo_timed logs B
    before it enters the record_function and E after it leaves, so B <= start and
    end <= E; both processes' wall clocks are the same, no offset to add."""
    for log, trace in zip(_logs(case), _traces(case), strict=True):
        records = _records(log)
        spans = _trace_annotations(trace)
        events = _dynamo_events(records)
        assert events
        for cid, ev in events.items():
            start, end = spans[f"dynamo_data: compile_id={cid}"]
            assert ev["B"] <= start <= end <= ev["E"], (case, cid)
            assert start - ev["B"] < 100_000  # the log write between them
        metrics = {m["compile_id"]: m for m in _metrics(records)}
        for cid, m in metrics.items():
            start, _ = spans[f"dynamo_data: compile_id={cid}"]
            assert start <= m["start_time_us"] <= m["end_time_us"] <= events[cid]["E"], cid
            assert m["start_time"] == m["start_time_us"] / 1e6


@pytest.mark.parametrize(
    ("case", "zone"), [("graph_break", "UTC"), ("recompile_value", "America/Los_Angeles")]
)
def test_line_prefix_is_local_wall_time_without_year(case: str, zone: str) -> None:
    """`V1123 18:40:01.123000`: month, day and the writer's LOCAL time (its TZ), to the
    millisecond (the last three digits are always 000), no year and no zone."""
    tz = ZoneInfo(zone)
    for r in _one_log(case):
        if r["type"] != "chromium_event":
            continue
        event = json.loads("\n".join(r["payload"]))
        if event["ph"] not in "BE":
            continue
        local = datetime.fromtimestamp(event["ts"] / 1e6, tz)
        assert r["time"].endswith("000")
        written = datetime.strptime(f"{local.year}{r['date']} {r['time']}", "%Y%m%d %H:%M:%S.%f")
        lag = (written.replace(tzinfo=tz) - local).total_seconds()
        assert -0.001 <= lag < 1.0, (r["time"], local)


def _step_of(trace: Path, name: str) -> str:
    """The ProfilerStep that holds the annotation `name`."""
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    (event,) = [e for e in events if e.get("name") == name]
    steps = [e for e in events if e.get("name", "").startswith("ProfilerStep#")]
    (step,) = [s for s in steps if s["ts"] <= event["ts"] < s["ts"] + s["dur"]]
    return str(step["name"])


STEPS_OF_COMPILES = [
    ("graph_break", "0/0", "ProfilerStep#0"),
    ("graph_break", "compile_fx.<locals>.bw_compiler_data: compile_id=1/0", "ProfilerStep#0"),
    ("graph_break", "1/0", "ProfilerStep#0"),
    ("recompile_shapes", "0/1", "ProfilerStep#2"),
    ("recompile_shapes", "0/2", "ProfilerStep#4"),
    ("recompile_value", "0/1", "ProfilerStep#3"),
    ("compile_failure", "0/0", "ProfilerStep#0"),
    ("cache_hit", "0/0", "ProfilerStep#0"),
]


@pytest.mark.parametrize(("case", "cid", "step"), STEPS_OF_COMPILES)
def test_each_compile_sits_in_the_step_that_triggered_it(case: str, cid: str, step: str) -> None:
    (trace,) = _traces(case)
    name = cid if ":" in cid else f"dynamo_data: compile_id={cid}"
    assert _step_of(trace, name) == step


def test_compiles_before_the_window_are_only_in_the_log() -> None:
    """`before_window`: the log's compiles all end before the trace's first event; the
    trace (with_stack) has the compiled regions and the resume function's Python frame
    under the log's co_name, but no compile annotation."""
    records = _one_log("before_window")
    (trace,) = _traces("before_window")
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        data = json.load(f)
    base = data["baseTimeNanoseconds"] / 1000
    first = base + min(e["ts"] for e in data["traceEvents"] if e.get("ph") == "X")
    last = max(
        json.loads("\n".join(r["payload"]))["ts"] for r in records if r["type"] == "chromium_event"
    )
    assert last < first
    assert [m["compile_id"] for m in _metrics(records)] == ["0/0", "1/0"]
    names = {e["name"] for e in data["traceEvents"]}
    resume = _metrics(records)[1]["co_name"]
    line = _marked_line("graph_break")
    assert f"record_compile_logs.py({line}): {resume}" in names
    assert {"Torch-Compiled Region: 0/0", "Torch-Compiled Region: 1/0"} <= names
    assert not [n for n in names if "_data: compile_id=" in n]


@pytest.mark.parametrize("case", CASES)
def test_fx_graph_calls_in_the_trace_name_the_logs_cache_keys(case: str) -> None:
    """`## Call CompiledFxGraph <key> ##` in the trace: <key> is the `key` of the log's
    fx_graph_cache_miss / fx_graph_cache_hit artifact (one per forward or backward graph)."""
    for log, trace in zip(_logs(case), _traces(case), strict=True):
        records = _records(log)
        keys = {
            json.loads("\n".join(a["payload"]))["key"]
            for name in ("fx_graph_cache_miss", "fx_graph_cache_hit")
            for a in _artifacts(records, name)
        }
        model = build_model(str(trace))
        called = {n.split()[3] for n in model.names if n.startswith("## Call CompiledFxGraph ")}
        assert called == keys, case
