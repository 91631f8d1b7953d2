"""Valid requests on odd but valid traces answer without a server error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.cli.main import main


def trace_path(tmp_path: Path) -> Path:
    folder = tmp_path / "logs" / "run"
    folder.mkdir(parents=True)
    return folder / "w.1.pt.trace.json"


def test_memory_curve_without_memory_events_is_a_clear_400(
    tmp_path: Path, plugin_client: Callable[[Path], PluginClient]
) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.write(trace_path(tmp_path))
    client = plugin_client(tmp_path / "logs")
    assert client.wait_ready("run", "w")["state"] == "ready"
    response = client.get("memory_curve", run="run", worker="w", span="1")
    assert response.status_code == 400
    assert "no memory events" in response.get_data(as_text=True)


def test_args_with_bytes_that_are_not_utf8(
    tmp_path: Path, plugin_client: Callable[[Path], PluginClient]
) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50, **{"Call stack": "STACK", "Input Dims": [[2, 2]]})
    text = json.dumps({"traceEvents": t.events}).encode()
    trace_path(tmp_path).write_bytes(text.replace(b"STACK", b"a.py(1): f\xff\xfe;b.py(2): g"))
    client = plugin_client(tmp_path / "logs")
    status = client.wait_ready("run", "w")
    assert any("not UTF-8" in w for w in status["warnings"])
    event = client.json("event", run="run", worker="w", span="1", row="1")
    assert event["name"] == "aten::mm" and "\ufffd" in event["args"]["Call stack"]
    stacks = client.json("callstacks", run="run", worker="w", span="1", name="aten::mm")
    assert stacks["stacks"][0]["frames"][0]["function"] == "f\ufffd\ufffd"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_report_on_huge_durations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    t = TraceBuilder()
    t.step(1, 0, 1e300)
    op = t.op("aten::mm", 10, 1e300)
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=1e300)
    t.memory(12, 64, 1, 64)
    t.write(trace_path(tmp_path))
    assert main(["report", str(tmp_path / "logs"), "--format", fmt]) == 0
    assert "aten::mm" in capsys.readouterr().out
