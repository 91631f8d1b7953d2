"""The MCP door while a trace loads slowly (issue 44): the SDK's client over stdio against
a real `kinetoscope mcp` process whose loads of `slow/` files stall until the test opens a
gate (`tests/slow_load.py`). Calls are independent: six calls waiting on the slow trace
hold nothing; `runs`, `status` and another trace's views answer at once; a call on the
slow trace answers "still loading" with progress after the bounded wait; a cancelled
call, or a hang-up, ends its wait."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import TraceBuilder

pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

SLOW_LOAD = Path(__file__).with_name("slow_load.py")
WAIT_S = 1.0  # KINETOSCOPE_MCP_WAIT_S of the servers here
QUICK_S = 4.0  # what "at once" means on a loaded 2-core test machine


def _trace(path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 200)
    op = t.op("aten::mm", 10, 30, **{"Input Dims": [[64, 64], [64, 64]]})
    t.launch(11, 3, op, gpu_ts=15, gpu_dur=20)
    path.parent.mkdir(parents=True, exist_ok=True)
    t.write(path)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    _trace(root / "slow" / "worker0.1.pt.trace.json")
    _trace(root / "quick" / "worker0.1.pt.trace.json")
    return root


def _server(logdir: Path, gate: Path, cache: Path, wait_s: float = WAIT_S) -> list[str]:
    return [str(SLOW_LOAD), str(gate), "mcp", str(logdir)], {
        **os.environ,
        "KINETOSCOPE_CACHE_DIR": str(cache),
        "KINETOSCOPE_MCP_WAIT_S": str(wait_s),
    }  # type: ignore[return-value]


def with_session(
    logdir: Path, tmp_path: Path, work: Callable[[ClientSession], Awaitable[Any]], **kw: Any
) -> Any:
    args, env = _server(logdir, tmp_path / "gate", tmp_path / "cache", **kw)  # type: ignore[misc]
    server = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def run() -> Any:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return asyncio.run(run())


async def timed(session: ClientSession, name: str, args: dict[str, Any]) -> tuple[float, Any]:
    started = time.monotonic()
    result = await session.call_tool(name, args)
    return time.monotonic() - started, result


def test_calls_stay_independent_while_a_trace_loads(logdir: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"

    async def work(session: ClientSession) -> Any:
        slow = [asyncio.create_task(timed(session, "overview", {"run": "slow"})) for _ in range(6)]
        await asyncio.sleep(0.2)  # the six are in the server, waiting on the load
        small = [await timed(session, "runs", {}) for _ in range(3)]
        small.append(await timed(session, "overview", {"run": "quick"}))
        status = await timed(session, "status", {"run": "slow"})
        loading = await asyncio.gather(*slow)
        gate.touch()  # the load goes on
        for _ in range(200):
            ready = await session.call_tool("status", {"run": "slow"})
            if ready.structured_content["state"] != "loading":
                break
            await asyncio.sleep(0.05)
        return small, status, loading, await timed(session, "overview", {"run": "slow"})

    small, (status_s, status), loading, (_, done) = with_session(logdir, tmp_path, work)
    for seconds, result in small:
        assert not result.is_error and seconds < QUICK_S, (seconds, result.content)
    assert status_s < QUICK_S and not status.is_error
    said = status.structured_content
    assert said["state"] == "loading" and said["bytes_done"] * 2 == said["bytes_total"] > 0
    assert said["provenance"]["window_us"] is None  # not known before the load ends
    for seconds, result in loading:  # the bounded wait, then "still loading" with progress
        assert WAIT_S <= seconds < WAIT_S + QUICK_S
        assert result.is_error and "is still loading" in result.content[0].text
        error = result.structured_content["error"]
        assert error["kind"] == "still_loading" and error["http_status"] == 202
        assert result.structured_content["status"]["bytes_done"] == said["bytes_done"]
    assert not done.is_error and done.structured_content["step_count"] == 1
    assert done.structured_content["provenance"]["window_us"] == [0.0, 200.0]


def test_a_call_that_asks_for_progress_is_told_it_and_waits_for_its_answer(
    logdir: Path, tmp_path: Path
) -> None:
    """A client that passes a progress callback (a `progressToken`) gets one notification
    a second while the load stalls, past the bounded wait, and then the answer itself."""
    gate = tmp_path / "gate"

    async def work(session: ClientSession) -> Any:
        told: list[tuple[float, float | None, str | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            told.append((done, total, message))
            gate.touch()  # told once: the load goes on

        started = time.monotonic()
        result = await session.call_tool("overview", {"run": "slow"}, progress_callback=progress)
        return time.monotonic() - started, told, result

    seconds, told, result = with_session(logdir, tmp_path, work, wait_s=0.2)
    assert not result.is_error and result.structured_content["step_count"] == 1
    assert 1.0 <= seconds < 1.0 + QUICK_S  # the first notification comes after a second
    assert len(told) == 1  # the count did not move again before the answer
    done, total, message = told[0]
    assert total and done * 2 == total and message and "still loading" in message


def test_a_cancelled_call_stops_waiting(logdir: Path, tmp_path: Path) -> None:
    async def work(session: ClientSession) -> Any:
        started = time.monotonic()
        with anyio.move_on_after(0.5):  # the SDK's client sends notifications/cancelled
            await session.call_tool("overview", {"run": "slow"})
        cancelled = time.monotonic() - started
        return cancelled, [await timed(session, "overview", {"run": "quick"}) for _ in range(8)]

    cancelled, after = with_session(logdir, tmp_path, work, wait_s=120)
    assert cancelled < QUICK_S
    assert all(not r.is_error and s < QUICK_S for s, r in after)


def test_a_hang_up_ends_the_server_while_a_call_waits(logdir: Path, tmp_path: Path) -> None:
    args, env = _server(logdir, tmp_path / "gate", tmp_path / "cache", wait_s=120)  # type: ignore[misc]
    proc = subprocess.Popen(
        [sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "overview", "arguments": {"run": "slow"}},
        },
    ]
    import json

    for line in lines:
        proc.stdin.write(json.dumps(line).encode() + b"\n")
        proc.stdin.flush()
    assert b'"id":1' in proc.stdout.readline()
    time.sleep(0.5)  # the call waits on the stalled load
    started = time.monotonic()
    proc.stdin.close()  # the client hangs up
    try:
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - started < 10 and proc.returncode == 0
    assert not (tmp_path / "gate").exists()  # the load never finished: its wait was cut
