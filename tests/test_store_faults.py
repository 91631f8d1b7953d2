"""Object stores that drop connections or stop answering, through a fault proxy in front of
the moto S3 server of the cloud tests (issue 44):

- a connection dropped mid-download is tried again with backoff; a drop that lasts makes
  the trace `unreachable` (never `internal`), and it loads once the store heals, without
  a restart, the same through the routes and the notebook;
- a trace already loaded answers its views without touching a store that hangs;
- a load that hangs ends within the documented bound (KINETOSCOPE_STORE_TRIES ×
  (2 × KINETOSCOPE_STORE_TIMEOUT_S + 1) + backoff), in the CLI too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kinetoscope
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from fault_proxy import FaultProxy, fault_proxy
from kinetoscope.cli.main import EXIT_LOAD, main
from kinetoscope.ingest import remote, storage
from test_cloud_logdir import bucket, s3_endpoint, upload  # noqa: F401 - fixtures

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

s3fs = pytest.importorskip("s3fs")
Q = {"run": "run", "worker": "w", "span": "1"}


def _trace(path: Path) -> Path:
    """~380 KB: its content comes in one ranged GET far longer than the proxy's cut."""
    t = TraceBuilder()
    t.step(1, 0, 100_000)
    for i in range(3000):
        t.op("aten::mm", 10 + i, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    return t.write(path)


@pytest.fixture
def proxied(
    tmp_path: Path,
    bucket: str,  # noqa: F811 - the fixture
    s3_endpoint: str,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[str, FaultProxy]]:
    """A bucket holding one run, reached through a fault proxy (passing for now)."""
    upload(_trace(tmp_path / "logs" / "run" / "w.1.pt.trace.json").parent.parent, bucket)
    with fault_proxy(s3_endpoint) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        monkeypatch.setenv("KINETOSCOPE_STORE_TIMEOUT_S", "1")
        monkeypatch.setenv("KINETOSCOPE_UNREACHABLE_RETRY_S", "1")
        monkeypatch.setenv("KINETOSCOPE_NO_CACHE", "1")
        s3fs.S3FileSystem.clear_instance_cache()
        yield bucket, proxy
        s3fs.S3FileSystem.clear_instance_cache()


def _settled(client: PluginClient, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get("status", **Q).get_json()
        if status["state"] != "loading":
            return status  # type: ignore[no-any-return]
        time.sleep(0.2)
    raise AssertionError("still loading")


def test_a_dropped_connection_is_unreachable_then_loads_when_the_store_heals(
    proxied: tuple[str, FaultProxy],
) -> None:
    logdir, proxy = proxied
    # Cutting from the start: the plugin begins loading the first span as soon as it is
    # listed, and a load that ended before a later cut would never see it. "cut" passes
    # the listings and HEAD answers whole and drops the object's content mid-download.
    proxy.mode = "cut"
    client = PluginClient(logdir)  # type: ignore[arg-type]
    notebook = kinetoscope.open(logdir, run="run", cache=False)
    try:
        assert client.get("runs").status_code == 200  # listed while the store answers
        status = _settled(client)
        assert status["error"]["kind"] == "unreachable", status
        assert proxy.cuts >= remote.tries()  # tried again before giving up
        overview = client.get("overview", **Q)
        assert (
            overview.status_code == 422 and "unreachable" in overview.get_json()["error"]["message"]
        )
        assert notebook.trace("w").status()["error"]["kind"] == "unreachable"  # the same
        proxy.mode = "pass"  # the store heals: loaded when next asked, no restart
        healed = time.monotonic()
        while (status := _settled(client))["state"] != "ready":
            assert time.monotonic() - healed < 30, status
            time.sleep(0.3)
        assert status["event_count"] > 3000
        assert client.get("overview", **Q).status_code == 200
        assert len(notebook.trace("w").model) == status["event_count"]
    finally:
        notebook.close()
        client.close()


def test_a_connection_dropped_once_is_read_again(proxied: tuple[str, FaultProxy]) -> None:
    logdir, proxy = proxied
    proxy.mode, proxy.cuts_left = "cut", 1
    with kinetoscope.open(logdir, run="run", cache=False) as run:
        assert len(run.trace("w").model) > 3000
    assert proxy.cuts == 1


def test_a_loaded_trace_answers_while_the_store_hangs(
    proxied: tuple[str, FaultProxy], monkeypatch: pytest.MonkeyPatch
) -> None:
    logdir, proxy = proxied
    monkeypatch.setattr(storage, "_STATE_TTL_S", 0.2)  # the listing's states go stale at once
    client = PluginClient(logdir)  # type: ignore[arg-type]
    try:
        assert _settled(client)["state"] == "ready"
        assert client.get("overview", **Q).status_code == 200
        proxy.mode = "hang"
        time.sleep(0.5)
        for route in ("overview", "operators", "kernels", "status", "overview"):
            started = time.monotonic()
            response = client.get(route, **Q)
            took = time.monotonic() - started
            assert response.status_code == 200, (route, response.get_data()[:300])
            assert took < 2, f"{route} took {took:.1f} s on a hung store"
    finally:
        client.close()


def test_a_load_that_hangs_ends_within_the_documented_bound(
    proxied: tuple[str, FaultProxy], capsys: pytest.CaptureFixture[str]
) -> None:
    logdir, proxy = proxied
    proxy.mode = "hang_reads"  # the listing answers, the object's content never comes
    started = time.monotonic()
    code = main(["report", logdir, "--format", "json", "--no-cache"])
    took = time.monotonic() - started
    assert code == EXIT_LOAD
    report = json.loads(capsys.readouterr().out)
    assert report["status"]["error"]["kind"] == "unreachable"
    bound = remote.tries() * (2 * 1 + 1) + 1.5  # TRIES × (2 × TIMEOUT + 1) + backoff
    assert took < bound + 3, f"the CLI waited {took:.1f} s (bound {bound:g} s)"


def test_the_mcp_door_says_unreachable_too(proxied: tuple[str, FaultProxy], tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from test_mcp import with_session

    logdir, proxy = proxied

    async def work(session: Any) -> Any:
        proxy.mode = "cut"  # after the server listed the bucket
        first = await session.call_tool("overview", {"run": "run", "worker": "w"})
        proxy.mode = "pass"
        return first

    result = with_session(logdir, tmp_path / "cache", work)  # type: ignore[arg-type]
    assert result.is_error and "unreachable" in result.content[0].text, result.content
