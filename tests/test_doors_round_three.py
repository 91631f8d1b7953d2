"""Doors round three, the small cases: a what-if factor past a million is a clear usage
error (it overflowed the times to a traceback), a run-level view asked for a span no
worker has answers 404 (it answered 200 for every worker's first span), and the run-level
views take their parameters from the CLI as from HTTP (`--param step=`, `factor=`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import PluginClient
from kinetoscope.cli.main import main

DATA = Path(__file__).parent / "data" / "whatif_gloo" / "baseline"


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "logs" / "job")
    return tmp_path / "logs"


def test_a_factor_past_a_million_is_a_usage_error(
    logdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["whatif", str(logdir), "--op", "whatif::compute", "--factor", "1e308", "--no-cache"]
    assert main([*args, "--format", "text"]) == 2
    assert "factor: at most 1e+06" in capsys.readouterr().err


def test_an_unknown_span_of_a_run_view_is_404(logdir: Path) -> None:
    client = PluginClient(logdir)
    response = client.get("run_critical_path", run="job", span="../../x")
    assert response.status_code == 404
    assert "no span '../../x'" in response.get_data(as_text=True)


def test_run_views_take_their_parameters_on_the_cli(
    logdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["report", str(logdir), "--format", "json", "--no-cache"]
    assert main([*common, "--view", "run_critical_path", "--param", "step=5"]) == 0
    view = json.loads(capsys.readouterr().out)["run_critical_path"]
    assert view["step"] == "ProfilerStep#5"
    assert main([*common, "--view", "run_top_gains", "--param", "factor=0.25"]) == 0
    assert json.loads(capsys.readouterr().out)["run_top_gains"]["factor"] == 0.25
    assert main([*common, "--view", "run_top_gains", "--param", "factor=-1"]) == 2


def test_several_runs_without_run_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README: usage errors exit 2 (`whatif` and `flamegraph` exited 3, a load failure's)."""
    for name in ("a", "b"):
        shutil.copytree(DATA, tmp_path / "logs" / name)
    logdir = str(tmp_path / "logs")
    assert main(["whatif", logdir, "--op", "whatif::compute", "--factor", "0.5"]) == 2
    assert main(["flamegraph", logdir]) == 2
    assert "choose one with --run" in capsys.readouterr().err


def test_the_mcp_tool_pages_the_critical_path(logdir: Path) -> None:
    """`limit` cuts the path's segments to a page, and says how many there are (the tool
    answered every segment: 5,000 on a ResNet step); `cursor` gives the next page."""
    import asyncio

    from kinetoscope.mcp.views import ViewAnswers

    views = ViewAnswers(str(logdir))

    def segments(**paging: int) -> tuple[list, dict]:
        answer, _ = asyncio.run(views.call("critical_path", {"run": "job", **paging}))
        return answer["segments"], answer.get("page", {})

    first, note = segments(limit=7)
    assert len(first) == 7 and note["next_cursor"] == 7
    assert note["totals"]["segments"] > 14
    whole, _ = segments(limit=14)
    following, _ = segments(limit=7, cursor=7)
    assert first + following == whole[:14]
