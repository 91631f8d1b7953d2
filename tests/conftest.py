"""Shared fixtures: an isolated cache folder, the report's default width, and in-process
TensorBoard clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus import CORPUS, corpus_missing
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `corpus` without the corpus: skipped locally, failed in CI (see
    tests/corpus.py). First, so it speaks before an empty parameter set's own skip."""
    if item.get_closest_marker("corpus") is not None and not CORPUS.is_dir():
        corpus_missing("the corpus folder")


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own cache folder, so no test reads another's results."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("KINETOSCOPE_CACHE_DIR", str(cache))
    return cache


@pytest.fixture(autouse=True)
def _report_width_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's text at its default width: pytest-xdist's workers inherit COLUMNS=80,
    which cuts the names the text tests look for. A test that wants a width sets it."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def held_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Trace loads of the store, and the trend's own (files it summarises without the
    store), wait until the returned event is set (at most 30 s), so a test sees the "still
    loading" answers; set when the test ends."""
    from kinetoscope.analysis.core import summary_cache
    from kinetoscope.store import trace_store

    release = threading.Event()
    real_build = trace_store.build_model

    def held_build(*args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(trace_store, "build_model", held_build)
    monkeypatch.setattr(summary_cache, "build_model", held_build)
    yield release
    release.set()


class PluginClient:
    """The plugin inside TensorBoard's own WSGI app, driven through werkzeug's client."""

    def __init__(self, logdir: Path) -> None:
        from kinetoscope.serve.plugin import KinetoscopePlugin

        context = base_plugin.TBContext(logdir=str(logdir))
        self.plugin = KinetoscopePlugin(context)
        self.app = application.TensorBoardWSGI([self.plugin])
        self.client = werkzeug_test.Client(self.app, wrappers.Response)

    def get(self, route: str, **params: Any) -> wrappers.Response:
        return self.client.get(f"/data/plugin/kinetoscope/{route}", query_string=params)

    def built(self, route: str, **params: Any) -> wrappers.Response:
        """The route's answer, asked again, as the frontend does, while a trace view route
        answers 202 for a structure it builds in the background (`building`)."""
        response = self.get(route, **params)
        deadline = time.monotonic() + 60
        while building(response) and time.monotonic() < deadline:
            time.sleep(0.02)
            response = self.get(route, **params)
        return response

    def json(self, route: str, **params: Any) -> Any:
        response = self.built(route, **params)
        assert response.status_code == 200, (route, params, response.get_data(as_text=True))
        return response.get_json()

    def wait_ready(
        self, run: str, worker: str, span: str = "1", timeout: float = 60.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            status = self.json("status", run=run, worker=worker, span=span)
            if status["state"] != "loading":
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"still loading after {timeout}s: {status}")
            time.sleep(0.02)

    def close(self) -> None:
        self.plugin.watcher.stop()
        self.plugin.store.close()


def building(response: wrappers.Response) -> bool:
    """A trace view route's 202 while it builds a structure (`TraceViewLoading`)."""
    return response.status_code == 202 and "building" in (response.get_json() or {})


@pytest.fixture
def plugin_client() -> Iterator[Callable[[Path], PluginClient]]:
    made: list[PluginClient] = []

    def make(logdir: Path) -> PluginClient:
        client = PluginClient(logdir)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close every trace store a test left open: a run job of one may still wait on a load
    in its thread pool, and the interpreter joins those pools at exit (a closed store ends
    every load asked of it, so the jobs return)."""
    import gc

    from kinetoscope.store.trace_store import TraceStore

    for obj in gc.get_objects():
        if isinstance(obj, TraceStore):
            obj.close()
