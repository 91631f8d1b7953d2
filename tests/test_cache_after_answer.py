"""A cold trace's views answer before its disk-cache entry is written: the load is marked
done as soon as the model is built, the entry is written after (the user waits for the
first view, not for the write), and views answered meanwhile are written with it. The
blocking doors (`TraceStore.wait`: the CLI, the notebook) still return with the entry
written, so a later process reads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.overview.view import overview
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.store import trace_store as loader
from kinetoscope.store.cache import DiskCache
from kinetoscope.store.trace_store import TraceStore


class HeldCache(DiskCache):
    """A disk cache whose entry writing waits until the test lets it go."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.writing = threading.Event()
        self.go = threading.Event()

    def publish(self, key: str, build_dir: Path, model: TraceModel) -> None:
        self.writing.set()
        assert self.go.wait(60)
        super().publish(key, build_dir, model)


def _trace(tmp_path: Path) -> str:
    t = TraceBuilder()
    t.step(1, 0, 100)
    op = t.op("aten::mm", 10, 50)
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=40)
    return str(t.write(tmp_path / "w.1.pt.trace.json.gz", gz=True))


def test_a_view_answers_before_the_entry_is_written_and_is_written_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _trace(tmp_path)
    cache = HeldCache(tmp_path / "cache")
    store = TraceStore(cache)
    state = store.state_for(path)
    assert cache.writing.wait(60)
    try:
        assert store.status(path)["state"] == "ready"  # done before the write
        body = store.view(path, "overview", overview)  # answered while it is held
        assert not cache.entry(state.key).exists()
        waiter = threading.Thread(target=store.wait, args=(path,))
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive()  # a blocking door waits for the entry
    finally:
        cache.go.set()
    waiter.join(60)
    assert not waiter.is_alive()
    assert cache.load_view(state.key, "overview") == body

    def no_parsing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed again although the cache holds this file")

    monkeypatch.setattr(loader, "build_model", no_parsing)
    again = TraceStore(DiskCache(tmp_path / "cache"))
    again.wait(path)
    assert again.view(path, "overview", overview) == body


def test_a_view_answered_after_the_write_is_written_at_once(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    cache = DiskCache(tmp_path / "cache")
    store = TraceStore(cache)
    store.wait(path)
    body = store.view(path, "overview", overview)
    assert cache.load_view(store.state_for(path).key, "overview") == body


def test_a_report_writes_the_entry_and_its_views_before_it_exits(tmp_path: Path) -> None:
    """`kinetoscope report` answers its views while the entry is written and exits once
    it is: the entry holds every view printed, and a second report prints the same."""
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    Path(_trace(run)).rename(run / "worker0.1.pt.trace.json.gz")
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "kinetoscope", "report", str(tmp_path / "logs")]
    reports = []
    for _ in range(2):
        proc = subprocess.run(
            [*command, "--format", "json"], capture_output=True, env=env, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        reports.append(json.loads(proc.stdout))
        (entry,) = [p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]
        written = {name.split("-v")[0] for name in os.listdir(entry / "views")}
        assert set(reports[-1]) - {"status"} <= written
    assert reports[0] == reports[1]
