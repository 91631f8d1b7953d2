"""The `compile` view through every door: `kinetoscope report` (JSON: the route's JSON;
text: its renderer), the notebook (`Run.compile_view`, `Run.compiles`), the MCP tool (a
real server over stdio), and a run without compile logs, where nothing of it shows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from kinetoscope.cli.main import main as cli_main
from kinetoscope.ingest.discovery import scan_logdir
from test_compile_view import compile_json

try:  # imported with the module: the SDK's stdio client binds sys.stderr when imported
    from test_mcp import route_json, with_session
except pytest.skip.Exception:  # no `mcp` extra: its test skips
    route_json = with_session = None  # type: ignore[assignment]

DATA = Path(__file__).parent / "data" / "compile_logs"


def _report(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli_main(["report", *argv, "--no-cache"]) == 0
    return capsys.readouterr().out


def test_report_json_is_the_routes_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = json.loads(_report([str(DATA / "recompile_shapes"), "--format", "json"], capsys))
    runs = scan_logdir(str(DATA / "recompile_shapes"))
    assert out["compile"] == compile_json(runs, ".")
    assert "overview" in out  # the span's views beside it


def test_report_text(capsys: pytest.CaptureFixture[str]) -> None:
    text = _report(
        [str(DATA / "recompile_shapes"), "--view", "compile", "--format", "text"], capsys
    )
    assert "Compile (3 compiles, 47.9 s, TORCH_TRACE logs)" in text
    assert "step 2: 9.0 s compiling frame 0/1 (`forward`, record_compile_logs.py:71)" in text
    assert "recompile 0/2: 0/1: tensor 'x' size mismatch at index 0. expected 4, actual 6" in text
    assert "advice: mark this dimension dynamic" in text


def test_a_run_of_logs_alone(capsys: pytest.CaptureFixture[str]) -> None:
    text = _report([str(DATA / "cache_hit" / "cold"), "--format", "text"], capsys)
    assert text.startswith("== run .\n\nCompile (1 compiles, 28.5 s")
    out = json.loads(_report([str(DATA / "cache_hit" / "cold"), "--format", "json"], capsys))
    assert list(out) == ["compile"]


def test_a_run_without_logs_reports_no_compile_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(next((DATA / "graph_break").glob("worker0*")), tmp_path)
    out = json.loads(_report([str(tmp_path), "--format", "json"], capsys))
    assert "compile" not in out and "overview" in out


def test_notebook(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    import kinetoscope

    with kinetoscope.open(str(DATA / "two_ranks"), cache=False) as run:
        assert len(run.compile_logs) == 2
        frame = run.compiles()
        view = run.compile_view()
    assert list(frame["compile_id"]) == [c["compile_id"] for c in view["compiles"]]
    assert list(frame["rank"]) == [0] * 5 + [1] * 5
    assert "stages.code_gen_us" in frame.columns and "cache.state" in frame.columns
    assert frame.attrs["total_compile_us"] == view["total_compile_us"]


def test_mcp_tool_is_the_route(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if with_session is None:
        pytest.skip("the mcp extra is not installed")
    logdir = tmp_path / "logs"
    shutil.copytree(DATA / "recompile_value", logdir / "value")

    async def work(session: Any) -> Any:
        return await session.call_tool("compile", {"run": "value", "limit": 500})

    answer = with_session(logdir, tmp_path / "cache", work)
    report = json.loads(_report([str(logdir), "--view", "compile", "--format", "json"], capsys))
    assert route_json(answer) == report["compile"]
    assert answer.structured_content["provenance"]["run"] == "value"
