"""The MCP door, driven by the SDK's own client over stdio against `kinetoscope mcp LOGDIR`
(a real server process): the tools are the registry's JSON routes, each answer is the
report JSON of the same view (plus paging and provenance), bad arguments are tool errors."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder, rank_job
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.cli.main import main as cli_main
from kinetoscope.mcp.tools import page

pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

Session = Callable[[ClientSession], Awaitable[Any]]
ADDED = ("page", "provenance")  # what the MCP door adds to a route's JSON


def make_logdir(root: Path) -> Path:
    for run, scale in (("before", 1.0), ("after", 2.0)):
        t = TraceBuilder()
        for step in range(3):
            start = step * 200.0
            t.step(step + 1, start, 200)
            for i in range(4):
                at = start + 10 + 40 * i
                op = t.op("aten::mm", at, 30, **{"Input Dims": [[64, 64], [64, 64]]})
                t.launch(at + 1, 3, op, gpu_ts=at + 5, gpu_dur=20 * scale)
        (root / run).mkdir(parents=True)
        t.write(root / run / "worker0.100.pt.trace.json")
    rank_job(root / "ddp", 2, steps=2, kernels_per_step=3)
    return root


def with_session(logdir: Path, cache: Path, work: Session, *extra: str) -> Any:
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(cache)}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "kinetoscope", "mcp", str(logdir), *extra], env=env
    )

    async def run() -> Any:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return asyncio.run(run())


def report_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    assert cli_main(argv) == 0
    return json.loads(capsys.readouterr().out)


def route_json(result: Any) -> Any:
    assert not result.is_error, result.content
    return {k: v for k, v in result.structured_content.items() if k not in ADDED}


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    return make_logdir(tmp_path / "logs")


def test_tools_are_the_json_routes_with_their_schemas(logdir: Path, tmp_path: Path) -> None:
    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    listed = {t.name: t for t in with_session(logdir, tmp_path / "cache", work)}
    assert set(listed) == {name for name, e in ENDPOINTS.items() if e.response is not None}
    kernels = listed["kernels"]
    assert kernels.input_schema["required"] == ["run"]
    assert {"run", "worker", "span", "group_by", "limit", "cursor"} <= set(
        kernels.input_schema["properties"]
    )
    assert kernels.output_schema["type"] == "object"
    assert "rows" in kernels.output_schema["properties"]
    assert listed["diff"].input_schema["required"] == ["run", "target_run"]
    assert kernels.annotations.read_only_hint is True


def test_span_views_equal_the_report(
    logdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    views = ("overview", "operators", "kernels", "gpu_idle", "modules")

    async def work(session: ClientSession) -> Any:
        return {v: await session.call_tool(v, {"run": "after", "limit": 500}) for v in views}

    answers = with_session(logdir, tmp_path / "cache", work)
    argv = ["report", str(logdir), "--run", "after", "--format", "json", "--no-cache"]
    report = report_json(argv, capsys)
    for view in views:
        if view in report:
            assert route_json(answers[view]) == report[view], view
        provenance = answers[view].structured_content["provenance"]
        assert provenance["run"] == "after" and provenance["file"] == "worker0.100.pt.trace.json"
        assert provenance["window_us"] == [0.0, 600.0]  # the steps' extent
    assert "kernels" in report and "operators" in report


def test_run_and_pair_views_equal_the_cli(
    logdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def work(session: ClientSession) -> Any:
        distributed = await session.call_tool("distributed", {"run": "ddp", "limit": 500})
        pair = {"run": "before", "target_run": "after", "limit": 500}
        return distributed, await session.call_tool("diff", pair)

    distributed, diff = with_session(logdir, tmp_path / "cache", work)
    argv = ["report", str(logdir), "--run", "ddp", "--view", "distributed", "--format", "json"]
    assert route_json(distributed) == report_json([*argv, "--no-cache"], capsys)["distributed"]
    diff_argv = ["diff", str(logdir), "--base", "before", "--target", "after", "--format", "json"]
    assert route_json(diff) == report_json([*diff_argv, "--no-cache"], capsys)


def test_long_lists_are_paged_with_a_cursor(logdir: Path, tmp_path: Path) -> None:
    async def work(session: ClientSession) -> Any:
        first = await session.call_tool("runs", {"limit": 1})
        cursor = first.structured_content["page"]["next_cursor"]
        return first, await session.call_tool("runs", {"limit": 1, "cursor": cursor})

    first, second = with_session(logdir, tmp_path / "cache", work)
    assert first.structured_content["page"]["totals"] == {"runs": 3}
    names = [first.structured_content["runs"][0]["name"], second.structured_content["runs"][0]]
    assert names[0] == "after" and names[1]["name"] == "before"


def test_bad_arguments_are_tool_errors(logdir: Path, tmp_path: Path) -> None:
    calls = [
        ("overview", {"run": "nope"}, "no run named 'nope' (known: after, before, ddp)"),
        ("overview", {"run": "after", "worker": "w9"}, "no worker 'w9' in run 'after'"),
        ("kernels", {"run": "after", "group_by": "colour"}, "group_by must be one of"),
        ("overview", {}, "missing parameter: run"),
        ("overview", {"run": "after", "limit": 0}, "limit must be 1..500"),
        ("no_such_view", {}, "no tool named 'no_such_view'"),
    ]

    async def work(session: ClientSession) -> Any:
        results = [await session.call_tool(name, args) for name, args, _ in calls]
        results.append(await session.call_tool("runs", {}))  # still serving after them
        return results

    results = with_session(logdir, tmp_path / "cache", work)
    for (_, _, expected), result in zip(calls, results):
        assert result.is_error and expected in result.content[0].text
    assert not results[-1].is_error


def test_a_configured_tensorboard_url_gives_links_into_the_view(
    logdir: Path, tmp_path: Path
) -> None:
    async def work(session: ClientSession) -> Any:
        return await session.call_tool("kernels", {"run": "after", "span": "1"})

    result = with_session(logdir, tmp_path / "cache", work, "--base-url", "http://127.0.0.1:6006/")
    link = result.structured_content["provenance"]["link"]
    assert link == (
        "http://127.0.0.1:6006/#kinetoscope&p.kinetoscope.run=after"
        "&p.kinetoscope.span=1&p.kinetoscope.view=kernels"
    )


def test_a_page_keeps_whole_the_lists_others_index_into() -> None:
    # The flame graph's nodes point into `frames` by index: every page carries all frames,
    # and the node lists are cut together, so each page's `node_frame` resolves.
    body = {
        "frames": [{"name": f"f{i}"} for i in range(4)],
        "node_parent": [-1, 0, 1, 1, 0],
        "node_frame": [0, 1, 2, 3, 2],
        "total_us": 9.0,
    }
    second, note = page(body, limit=2, cursor=2)
    assert second["frames"] == body["frames"]
    assert second["node_frame"] == [2, 3] and second["node_parent"] == [1, 1]
    assert note is not None and note["totals"] == {"node_parent": 5, "node_frame": 5}
    assert note["next_cursor"] == 4
