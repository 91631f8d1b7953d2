"""`kinetoscope check`: exit 0 on a healthy logdir, 1 on warnings with --strict, 2 on
errors; and the `health` key of `kinetoscope report --format json`."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from corpus import corpus_path
from kinetoscope.cli.main import main

H100 = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
MTIA = "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz"


def _logdir(tmp_path: Path, rel: str, name: str = "run") -> Path:
    run = tmp_path / "logs" / name
    run.mkdir(parents=True, exist_ok=True)
    shutil.copy(corpus_path(rel), run / "worker0.pt.trace.json.gz")
    return tmp_path / "logs"


def test_a_healthy_trace_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = _logdir(tmp_path, H100)
    assert main(["check", str(logdir), "--no-cache", "--strict"]) == 0
    assert "run · worker0 · span 1: ok" in capsys.readouterr().out


def test_warnings_fail_only_with_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = _logdir(tmp_path, MTIA)
    assert main(["check", str(logdir), "--no-cache"]) == 0
    assert main(["check", str(logdir), "--no-cache", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "warnings" in out and "overlapping_events" in out and "302" in out


def test_errors_exit_2_and_name_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(gzip.decompress(corpus_path(H100).read_bytes()))
    doc["traceEvents"] += [
        {"ph": "X", "cat": "cpu_op", "name": f"z{i}", "pid": 1, "tid": 1, "ts": 0, "dur": 0}
        for i in range(5)
    ]
    run = tmp_path / "logs" / "bad"
    run.mkdir(parents=True)
    (run / "worker0.pt.trace.json").write_text(json.dumps(doc))
    assert main(["check", str(tmp_path / "logs"), "--no-cache", "--format", "json"]) == 2
    found = json.loads(capsys.readouterr().out)["bad"]["worker0"]["1"]
    zero = next(c for c in found["checks"] if c["id"] == "zero_timestamps")
    assert (found["status"], zero["count"], len(zero["examples"])) == ("errors", 5, 5)
    assert zero["examples"][0]["ts_us"] == 0.0


def test_report_json_has_health(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = _logdir(tmp_path, MTIA)
    assert main(["report", str(logdir), "--no-cache", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    counts = {c["id"]: c["count"] for c in doc["health"]["checks"]}
    assert counts["overlapping_events"] == 14 and counts["outside_profiling_window"] == 302


CPU_ONLY = "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"


def test_check_text_in_columns_ms_since_start_with_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = _logdir(tmp_path, MTIA, "mtia")
    _logdir(tmp_path, CPU_ONLY, "cpu")
    assert main(["check", str(logdir), "--no-cache"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # The CPU-only trace: no GPU activity, so no kernel can start before its launch (0,
    # not "unknown"), and nothing else to say.
    cpu = lines.index("cpu · worker0 · span 1: ok")
    assert lines[cpu + 1].startswith("mtia · ")
    assert "kernel_before_launch" not in out
    # Columns: the heading's, each check line's and the "not checked" line's line up.
    heading = lines[0]
    count_end = heading.index("count") + len("count")
    checks = [line for line in lines if line.startswith("  warning ")]
    assert checks and all(line[count_end - 1] != " " for line in checks), checks
    # The first example at its time since the trace start, in ms, as the route says.
    assert main(["check", str(logdir), "--no-cache", "--format", "json", "--run", "mtia"]) == 0
    found = json.loads(capsys.readouterr().out)["mtia"]["worker0"]["1"]
    overlap = next(c for c in found["checks"] if c["id"] == "overlapping_events")
    first = overlap["examples"][0]
    ms = (first["ts_us"] - found["trace_start_us"]) / 1000
    example = f"e.g. {first['name']} at {ms:.3f} ms on process/thread {first['lane']}"
    assert any(line.strip().startswith(example) for line in lines), example
    assert f"(event row {first['row']})" in out
    assert 0 <= ms < 10_000
    assert "2 traces: 1 ok, 1 with warnings, 0 with errors" in lines
    assert any(line.startswith("Times are ms since each trace's start") for line in lines)


def test_cpu_only_health_says_0_kernels_before_launch(tmp_path: Path) -> None:
    from kinetoscope.analysis.core.health.view import health
    from kinetoscope.ingest.build import build_model

    found = health(build_model(str(corpus_path(CPU_ONLY))))
    check = next(c for c in found["checks"] if c["id"] == "kernel_before_launch")
    assert (check["count"], check["unknown"]) == (0, None)
