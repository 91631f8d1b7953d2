"""An object store that stalls, or whose objects change in place (issue 27), against the
moto S3 server the cloud tests start: behind a TCP proxy that accepts connections and
never answers, TensorBoard's plugins_listing still answers at once and the logdir is
"listing..." then "unreachable"; an object overwritten in place loads on the next rescan."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.trace_store import TraceStore
from test_cloud_logdir import bucket, s3_endpoint, upload  # noqa: F401 - fixtures

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

s3fs = pytest.importorskip("s3fs")


@pytest.fixture
def stalling_endpoint() -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts every connection and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)  # read nothing, answer nothing

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture
def fresh_s3() -> Iterator[None]:
    """No S3 filesystem made for another endpoint is reused (fsspec caches instances)."""
    s3fs.S3FileSystem.clear_instance_cache()
    yield
    s3fs.S3FileSystem.clear_instance_cache()


def _trace(path: Path, ops: int) -> Path:
    t = TraceBuilder()
    t.step(1, 0, 1000)
    for i in range(ops):
        t.op("aten::mm", 10 + i, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    return t.write(path)


def test_a_hung_store_does_not_hold_tensorboard(
    tmp_path: Path,
    bucket: str,  # noqa: F811 - the fixture
    stalling_endpoint: str,
    fresh_s3: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    upload(_trace(tmp_path / "logs" / "run" / "w.1.pt.trace.json", 3).parent.parent, bucket)
    monkeypatch.setenv("AWS_ENDPOINT_URL", stalling_endpoint)
    monkeypatch.setenv("KINETOSCOPE_STORE_TIMEOUT_S", "1")
    s3fs.S3FileSystem.clear_instance_cache()
    client = PluginClient(bucket)  # type: ignore[arg-type]
    try:
        started = time.monotonic()
        listing = client.client.get("/data/plugins_listing")
        assert listing.status_code == 200
        assert time.monotonic() - started < 5, "plugins_listing waited on the store"
        runs = client.get("runs")
        assert runs.status_code == 202 and runs.get_json()["state"] == "listing"
        assert time.monotonic() - started < 8
        # The bounded requests give up: the logdir is said to be unreachable.
        deadline = time.monotonic() + 120
        while (runs := client.get("runs")).status_code == 202:
            assert time.monotonic() < deadline, "still listing after 120 s"
            time.sleep(0.5)
        assert runs.status_code == 502
        assert "unreachable" in runs.get_json()["error"]["message"]
    finally:
        client.close()


def test_an_object_overwritten_in_place_loads_on_the_next_rescan(
    tmp_path: Path,
    bucket: str,  # noqa: F811 - the fixture
    fresh_s3: None,
) -> None:
    local = tmp_path / "logs"
    _trace(local / "run" / "w.1.pt.trace.json", 3)
    upload(local, bucket)
    store = TraceStore(None)
    try:
        (span,) = scan_logdir(bucket)[0].workers[0].spans
        assert len(store.wait(span.path, timeout=60)) == 4
        _trace(local / "run" / "w.1.pt.trace.json", 7)  # same key, new content
        upload(local, bucket)
        (span,) = scan_logdir(bucket)[0].workers[0].spans  # the rescan
        assert store.status(span.path)["state"] in ("loading", "ready")
        assert len(store.wait(span.path, timeout=60)) == 8
    finally:
        store.close()


def test_an_unreachable_store_is_said_and_asked_again(
    tmp_path: Path,
    bucket: str,  # noqa: F811 - the fixture
    s3_endpoint: str,  # noqa: F811 - the fixture
    stalling_endpoint: str,
    fresh_s3: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dropped connection mid-load is `unreachable` (not `internal`), and the load is
    tried again once the store answers, without a restart."""
    upload(_trace(tmp_path / "logs" / "run" / "w.1.pt.trace.json", 3).parent.parent, bucket)
    (span,) = scan_logdir(bucket)[0].workers[0].spans  # listed while the store answers
    monkeypatch.setenv("AWS_ENDPOINT_URL", stalling_endpoint)
    monkeypatch.setenv("KINETOSCOPE_STORE_TIMEOUT_S", "1")
    monkeypatch.setenv("KINETOSCOPE_UNREACHABLE_RETRY_S", "0.5")
    s3fs.S3FileSystem.clear_instance_cache()
    store = TraceStore(None)
    try:
        store.state_for(span.path).done.wait(120)
        error = store.status(span.path)["error"]
        assert error["kind"] == "unreachable", error
        monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
        s3fs.S3FileSystem.clear_instance_cache()
        time.sleep(0.6)
        assert len(store.wait(span.path, timeout=60)) == 4
    finally:
        store.close()
