"""File and folder names that are not UTF-8, or hold CR/LF: listed, loaded, downloaded
and reported like any other."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.cli.main import main

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="needs a filesystem that takes any bytes in names"
)


def write_trace(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.write(path)


def odd_logdir(root: Path) -> Path:
    write_trace(root / "good" / "w.1.pt.trace.json")
    bad_run = os.fsdecode(os.fsencode(str(root)) + b"/run\xff")
    os.makedirs(bad_run)
    for worker in (b"w\xfe", b"v\xfd"):  # two workers: the run-level view runs too
        write_trace(Path(bad_run) / os.fsdecode(worker + b".1.pt.trace.json"))
    write_trace(root / "crlf" / "a\r\nb.1.pt.trace.json")
    return root


def test_plugin_lists_loads_and_downloads_odd_names(
    tmp_path: Path, plugin_client: Callable[[Path], PluginClient]
) -> None:
    client = plugin_client(odd_logdir(tmp_path / "logs"))
    runs = {r["name"]: r for r in client.json("runs")["runs"]}
    assert sorted(runs) == ["crlf", "good", "run\\xff"]
    workers = [w["name"] for w in runs["run\\xff"]["workers"]]
    assert workers == ["v\\xfd", "w\\xfe"]
    status = client.wait_ready("run\\xff", "w\\xfe")
    assert status["state"] == "ready", status
    assert client.json("overview", run="run\\xff", worker="w\\xfe", span="1")["steps"]
    assert client.get("distributed", run="run\\xff").status_code in (200, 202)
    download = client.get("download", run="crlf", worker="a\r\nb", span="1")
    assert download.status_code == 200
    assert "\r" not in download.headers["Content-Disposition"]
    assert json.loads(download.get_data())["traceEvents"]


def test_report_of_odd_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = odd_logdir(tmp_path / "logs")
    assert main(["report", str(logdir), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc["runs"]) == ["crlf", "good", "run\\xff"]
    assert doc["runs"]["run\\xff"]["overview"]["steps"]
    assert main(["report", str(logdir), "--run", "run\\xff"]) == 0
    assert "run\\xff" in capsys.readouterr().out
