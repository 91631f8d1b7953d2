"""The serving view bounded in every door: a page of iterations (`offset`, `limit`; the
notebook joins the pages), and past KINETOSCOPE_SERVING_MAX_ITERATIONS a `too_large`
answer naming the setting (HTTP 413, the CLI's exit 3 with the error in the view's place,
the MCP tool's error) instead of a view of any size."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.cli.main import main

ITERATIONS = 30


def _logdir(tmp_path: Path) -> Path:
    t = TraceBuilder()
    for i in range(ITERATIONS):
        at = 100.0 * i
        t.annotation(f"execute_context_0(0)_generation_{4 + i}({4 + i})", at, 50)
        op = t.op("aten::mm", at + 5, 10)
        t.launch(at + 6, 2, op, gpu_ts=at + 10, gpu_dur=20, name="gemm")
    (tmp_path / "logs" / "serve").mkdir(parents=True)
    t.write(tmp_path / "logs" / "serve" / "w.pt.trace.json")
    return tmp_path / "logs"


def test_every_door_pages_the_iterations(tmp_path: Path) -> None:
    import kinetoscope as ks

    logdir = _logdir(tmp_path)
    client = PluginClient(logdir)
    client.wait_ready("serve", "w")
    page = client.json("serving", run="serve", worker="w", offset=10, limit=5)
    assert [i["index"] for i in page["iterations"]] == list(range(10, 15))
    assert (page["iteration_count"], page["offset"], page["limit"]) == (ITERATIONS, 10, 5)
    assert client.get("serving", run="serve", worker="w", limit=0).status_code == 400
    frame = ks.open(str(logdir / "serve")).trace().iterations()
    assert len(frame) == ITERATIONS


def test_past_the_cap_every_door_says_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = _logdir(tmp_path)
    monkeypatch.setenv("KINETOSCOPE_SERVING_MAX_ITERATIONS", "20")
    client = PluginClient(logdir)
    client.wait_ready("serve", "w")
    response = client.get("serving", run="serve", worker="w")
    assert response.status_code == 413
    assert "KINETOSCOPE_SERVING_MAX_ITERATIONS (20)" in response.get_data(as_text=True)
    assert client.json("overview", run="serve", worker="w")["steps"] is not None  # the rest
    code = main(["report", str(logdir), "--format", "json", "--no-cache"])
    out = json.loads(capsys.readouterr().out)
    assert code == 3 and out["serving"]["error"]["kind"] == "too_large"
    assert "overview" in out  # the other views still answer
    from kinetoscope.mcp.views import ViewAnswers

    views = ViewAnswers(str(logdir))
    with pytest.raises(Exception, match="too_large"):
        asyncio.run(views.call("serving", {"run": "serve", "worker": "w"}))
