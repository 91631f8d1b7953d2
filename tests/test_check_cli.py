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
