"""The MCP door, driven by the SDK's own client over stdio against `kinetoscope mcp LOGDIR`
(a real server process): the tools are the registry's JSON routes, each answer is the
report JSON of the same view (plus paging and provenance), bad arguments are tool errors."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import kinetoscope
import pytest
from builders import TraceBuilder, rank_job
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.cli.main import main as cli_main
from kinetoscope.mcp.tools import page, summary

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


def test_a_later_page_keeps_the_short_lists_whole_and_names_them() -> None:
    # A kernels answer: 3 rows, one device, one roof. Page 2 of 2 rows a page: the third
    # row, and the device and roof lists whole (not [] past their end); totals name all.
    body = {
        "rows": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "devices": [0],
        "roofs": [{"device": "H100-SXM"}],
        "total_us": 9.0,
    }
    second, note = page(body, limit=2, cursor=2)
    assert second["rows"] == [{"name": "c"}]
    assert second["devices"] == [0] and second["roofs"] == body["roofs"]
    assert note == {
        "cursor": 2,
        "limit": 2,
        "next_cursor": None,
        "totals": {"rows": 3, "devices": 1, "roofs": 1},
    }
    assert page({"devices": [0]}, limit=2, cursor=0) == ({"devices": [0]}, None)


def test_the_summary_line_says_the_status_first() -> None:
    health = {"status": "errors", "checks": [{}] * 9, "left_out_rows": 5, "warnings": [1, 2]}
    assert summary("health", health) == (
        "health: status=errors, 9 checks, left_out_rows=5, 2 load warnings"
    )


def test_the_printed_client_config_starts_a_working_server(logdir: Path, tmp_path: Path) -> None:
    """As a client would: the command and args of `--client-config`, started from another
    folder with a PATH that has no kinetoscope on it."""
    out = subprocess.run(
        [sys.executable, "-m", "kinetoscope", "mcp", str(logdir), "--client-config"],
        capture_output=True,
        text=True,
        check=True,
    )
    config = json.loads(out.stdout)["mcpServers"]["kinetoscope"]
    assert os.path.isabs(config["command"]) and config["args"][-1] == str(logdir.resolve())
    env = {"PATH": "/nonexistent", "KINETOSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    server = StdioServerParameters(
        command=config["command"], args=config["args"], env=env, cwd=str(tmp_path)
    )

    async def run() -> Any:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            info = await session.initialize()
            runs = await session.call_tool("runs", {})
            return info, runs

    info, runs = asyncio.run(run())
    assert info.server_info.name == "kinetoscope"
    assert info.server_info.version == kinetoscope.__version__
    assert [r["name"] for r in runs.structured_content["runs"]] == ["after", "before", "ddp"]


def test_version_flags_say_the_package_s_version() -> None:
    for argv in (["--version"], ["mcp", "--version"]):
        out = subprocess.run(
            [sys.executable, "-m", "kinetoscope", *argv], capture_output=True, text=True
        )
        assert (out.returncode, out.stdout) == (0, f"kinetoscope {kinetoscope.__version__}\n")


BAD_CALLS = [
    ("overview", {"run": "nope"}, "no run named 'nope' (known: after, before, ddp)"),
    ("overview", {"run": "after", "worker": "w9"}, "no worker 'w9' in run 'after'"),
    ("kernels", {"run": "after", "group_by": "colour"}, "group_by must be one of"),
    ("overview", {}, "missing parameter: run"),
    ("event", {"run": "after", "row": -1}, "no event row -1"),
    ("trace", {"run": "after", "tracks": "../..", "t0": 0, "t1": 10}, "no track '../..'"),
]


def test_bad_arguments_are_tool_errors_of_the_routes_kind(
    logdir: Path, tmp_path: Path, plugin_client: Callable[[Path], Any]
) -> None:
    """Each bad call is a tool error with the route's message, kind and HTTP status."""
    paging = [
        ("overview", {"run": "after", "limit": 0}, "limit must be an integer 1..500"),
        ("overview", {"run": "after", "limit": 2.5}, "limit must be an integer 1..500"),
        ("overview", {"run": "after", "cursor": True}, "cursor an integer >= 0"),
        ("no_such_view", {}, "no tool named 'no_such_view'"),
    ]
    calls = BAD_CALLS + paging

    async def work(session: ClientSession) -> Any:
        results = [await session.call_tool(name, args) for name, args, _ in calls]
        results.append(await session.call_tool("runs", {}))  # still serving after them
        return results

    results = with_session(logdir, tmp_path / "cache", work)
    client = plugin_client(logdir)
    client.wait_ready("after", "worker0")
    for (name, args, expected), result in zip(calls, results):
        assert result.is_error and expected in result.content[0].text, result.content
        error = result.structured_content["error"]
        assert error["message"] == result.content[0].text
        if (name, args, expected) in paging:
            assert (error["kind"], error["http_status"]) in [
                ("bad_argument", 400),
                ("not_found", 404),
            ]
            continue
        http = client.built(name, **args)  # the same door's answer over HTTP
        assert http.status_code == error["http_status"], (name, args)
        # TensorBoard's errors lead with their kind ("Not found: ", "Invalid argument: ").
        assert http.get_json()["error"]["message"].endswith(error["message"])
    assert not results[-1].is_error


def test_a_damaged_trace_and_the_workers_answered(tmp_path: Path) -> None:
    """`status` of a trace that failed is an answer (state `error`), not an exception, as
    is a damaged memory snapshot; provenance names the worker actually answered, also
    when another is damaged."""
    root = tmp_path / "logs" / "job"
    root.mkdir(parents=True)
    (root / "worker0.1.pt.trace.json").write_text("{not json")
    t = TraceBuilder()
    t.step(1, 100, 50)
    t.op("aten::mm", 110, 30)
    t.write(root / "worker1.1.pt.trace.json")
    (root / "snapshot.pickle").write_bytes(b"\x80\x04\x95segments device_traces, cut")

    async def work(session: ClientSession) -> Any:
        snapshots = await session.call_tool("memory_snapshot", {"run": "job"})
        assert not snapshots.is_error, snapshots.content  # the file's error, in the answer
        (said,) = snapshots.structured_content["snapshots"]
        assert said["file"] == "snapshot.pickle" and "damaged or truncated" in said["error"]
        first = await session.call_tool("status", {"run": "job"})
        for _ in range(200):
            status = await session.call_tool("status", {"run": "job"})
            if status.structured_content["state"] != "loading":
                break
            await asyncio.sleep(0.05)
        trace = await session.call_tool("trace", {"run": "job", "workers": "worker1"})
        return first, status, trace, await session.call_tool("overview", {"run": "job"})

    first, status, trace, overview = with_session(root.parent, tmp_path / "cache", work)
    # The 9-byte file may have failed before the first `status`: either answer, no error.
    assert not first.is_error and first.structured_content["state"] in ("loading", "error")
    said = status.structured_content
    assert not status.is_error and said["state"] == "error"
    assert "worker0.1.pt.trace.json" in said["error"]["message"]
    assert said["provenance"]["file"] == "worker0.1.pt.trace.json"
    assert said["provenance"]["window_us"] is None
    assert not trace.is_error, trace.content
    provenance = trace.structured_content["provenance"]
    assert provenance["worker"] == "worker1" and provenance["file"] == "worker1.1.pt.trace.json"
    assert provenance["window_us"] == [100.0, 150.0]
    assert overview.is_error and overview.structured_content["error"]["http_status"] == 422


def test_every_malformed_request_gets_a_json_rpc_error(logdir: Path, tmp_path: Path) -> None:
    """Lines the SDK cannot read are answered (never left waiting), with the request's id."""
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "kinetoscope", "mcp", str(logdir)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    call = '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": %s}'
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        call % (2, '{"name": "runs", "arguments": {"run": "\\ud800"}}'),
        call % (3, '["runs"]'),
        call % (4, '{"name": "kernels", "arguments": {"run": "after", "limit": 1e400}}'),
        "{not json",
        '{"jsonrpc": "2.0", "id": 6, "method": 7}',
        call % (7, '{"name": "runs", "arguments": {}}'),
    ]
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("\n".join(lines).encode() + b"\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(7)]
    finally:
        proc.kill()
    by_id = {a["id"]: a for a in answers}
    assert by_id[2]["error"]["code"] == -32602 and "surrogate" in by_id[2]["error"]["message"]
    assert by_id[3]["error"]["code"] == -32602 and "params must be an object" in str(by_id[3])
    assert by_id[4]["result"]["isError"] is True
    assert by_id[4]["result"]["structuredContent"]["error"]["kind"] == "bad_argument"
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[6]["error"]["code"] == -32600
    assert by_id[7]["result"]["isError"] is False


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
    assert note is not None and note["totals"] == {"frames": 4, "node_parent": 5, "node_frame": 5}
    assert note["next_cursor"] == 4
