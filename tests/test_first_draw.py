"""The server's first page is drawn before its trace's disk-cache entry is written: the
entry's write (~0.4 s of CPU a GB) waits until the page has asked for that first page
and had a moment to draw it, or until it did not ask in time, or until the server closes.
In-process TensorBoard with the plugin, over a logdir of real gzip traces."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.api import session as session_module
from kinetoscope.store.trace_store import LoadState

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

Make = Callable[[Path], PluginClient]


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    folder = tmp_path / "logs" / "job"
    folder.mkdir(parents=True)
    t = TraceBuilder()
    for i in range(3):
        t.step(i, i * 100, 90)
        t.launch(i * 100 + 20, 5, "aten::mm", gpu_ts=i * 100 + 30, gpu_dur=40)
    t.write(folder / "worker0.100.pt.trace.json.gz", gz=True)
    return tmp_path / "logs"


def first_state(client: PluginClient, logdir: Path) -> LoadState:
    """The first span's load state once its first page (the Overview) is kept."""
    store = client.plugin.store
    path = str(logdir / "job" / "worker0.100.pt.trace.json.gz")
    deadline = time.monotonic() + 60
    while not (store.holds(path) and store.state_for(path).views):
        assert time.monotonic() < deadline, "the first span's first page never came"
        time.sleep(0.02)
    return store.state_for(path)


def started(
    make: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch, ask_s: float, draw_s: float = 0.5
) -> tuple[PluginClient, LoadState]:
    """A plugin over `logdir` with these waits, and its first span once its first page is kept."""
    monkeypatch.setattr(session_module, "FIRST_PAGE_ASK_S", ask_s)
    monkeypatch.setattr(session_module, "FIRST_PAGE_DRAW_S", draw_s)
    client = make(logdir)
    return client, first_state(client, logdir)


def assert_written(client: PluginClient, state: LoadState) -> None:
    """The first span's entry is in the plugin's disk cache."""
    cache = client.plugin.store.cache
    assert cache is not None and cache.entry(state.key).is_dir()


def waited_for(state: LoadState, timeout: float = 30.0) -> float:
    """Seconds until the entry is written (its `published` set)."""
    start = time.monotonic()
    assert state.published.wait(timeout), "the cache entry was never written"
    return time.monotonic() - start


def test_the_entry_waits_until_the_page_asked_and_drew(
    plugin_client: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, state = started(plugin_client, logdir, monkeypatch, ask_s=60.0, draw_s=0.3)
    time.sleep(0.5)
    assert not state.published.is_set(), "written before the page asked for its first page"
    assert client.get("overview", run="job", worker="worker0", span="1").status_code == 200
    assert [name.split("-v")[0] for name in state.served] == ["overview"]
    waited = waited_for(state)
    assert 0.2 <= waited < 30, waited  # the draw's allowance first, then the write
    assert_written(client, state)


def test_the_entry_is_written_when_no_page_asks(
    plugin_client: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, state = started(plugin_client, logdir, monkeypatch, ask_s=0.3)
    waited_for(state)
    assert not state.served
    assert_written(client, state)


def test_closing_the_server_ends_the_wait_and_writes_the_entry(
    plugin_client: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, state = started(plugin_client, logdir, monkeypatch, ask_s=600.0)
    assert not state.published.is_set()
    start = time.monotonic()
    client.close()  # the store's close waits for the entry's write
    assert time.monotonic() - start < 10
    assert state.published.is_set()
    assert_written(client, state)
