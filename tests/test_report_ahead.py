"""A one-shot report of a model just built (of `AHEAD_MIN_ROWS` rows or more), its views
computed one after another, builds the health findings and the memory index in a thread
of its own beside the first views (`api/report.py`, `AHEAD_TABLES`); the views answer as
they do alone. A model read from the disk cache (its views are cached too), or a smaller
one, starts no such thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest
from corpus import corpus_path
from expected_views import SPAN_CASES
from kinetoscope.analysis.core import optree
from kinetoscope.analysis.core.health import view as health_view
from kinetoscope.analysis.memory import index as memory_index_module
from kinetoscope.api import report as report_module
from kinetoscope.api.endpoints import VIEWS
from kinetoscope.api.report import report_run
from kinetoscope.api.session import Session
from kinetoscope.ingest.build import build_model
from kinetoscope.store.cache import DiskCache
from kinetoscope.store.trace_store import TraceStore

TRACE = SPAN_CASES["h100_bert"]


def _report(
    cache_dir: Path | None, monkeypatch: pytest.MonkeyPatch, min_rows: int = 0
) -> tuple[Any, list[str]]:
    """The report of TRACE (one view thread; the thread ahead from `min_rows` rows), and
    the threads that asked for its health findings and memory index (the real builders,
    their callers' threads noted)."""
    monkeypatch.setattr(report_module, "VIEW_THREADS", 1)
    monkeypatch.setattr(report_module, "AHEAD_MIN_ROWS", min_rows)
    if cache_dir is not None:
        monkeypatch.setenv("KINETOSCOPE_CACHE_DIR", str(cache_dir))
    builders: list[str] = []
    for module, name in ((health_view, "findings_of"), (memory_index_module, "memory_index")):
        build = getattr(module, name)

        def noted(model: Any, build: Any = build, name: str = name) -> Any:
            builders.append(f"{name} {threading.current_thread().name}")
            return build(model)

        monkeypatch.setattr(module, name, noted)
    session = Session.for_command(cache=cache_dir is not None)
    try:
        _, _, runs = session.list_target(str(corpus_path(TRACE)))
        return report_run(session, runs[0], None, None, None, []), builders
    finally:
        session.close()


def test_a_cold_report_builds_its_tables_ahead_and_answers_every_view_as_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report, builders = _report(None, monkeypatch)
    assert "findings_of kinetoscope-ahead" in builders
    assert "memory_index kinetoscope-ahead" in builders
    fresh = build_model(str(corpus_path(TRACE)))
    assert {"overview", "health", "memory"} <= set(report.views)
    for name in [name for name in report.views if name in VIEWS]:
        view = VIEWS[name]
        alone = msgspec.json.decode(msgspec.json.encode(view.of_span(fresh, view.decode({}))))
        assert report.views[name] == alone
    assert report.views["health"]["checks"]  # the findings are there to compare


def test_a_report_of_a_cached_model_starts_no_ahead_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold, _ = _report(tmp_path / "cache", monkeypatch)
    warm, builders = _report(tmp_path / "cache", monkeypatch)
    assert not [b for b in builders if b.endswith("kinetoscope-ahead")]
    assert warm.views["health"] == cold.views["health"]


def test_a_report_of_a_model_below_the_rows_starts_no_ahead_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = len(build_model(str(corpus_path(TRACE))))
    _, builders = _report(None, monkeypatch, min_rows=rows + 1)
    assert builders and not [b for b in builders if b.endswith("kinetoscope-ahead")]


def test_a_one_thread_report_builds_the_op_tree_before_its_views(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Overview of a trace without a communication op builds no op tree; the report
    builds it first, before a view holds its own structures (its peak memory)."""
    held_then: list[set[str]] = []
    build = optree.build_op_tree

    def noted(model: Any) -> Any:
        held_then.append(set(vars(model)))
        return build(model)

    monkeypatch.setattr(optree, "build_op_tree", noted)
    rows = len(build_model(str(corpus_path(TRACE))))
    report, _ = _report(None, monkeypatch, min_rows=rows + 1)
    assert len(held_then) == 1
    assert not {"_kernel_classes", "_memory_index", "_health_findings"} & held_then[0]
    assert {"overview", "memory", "operators"} <= set(report.views)


def test_a_report_of_a_cached_model_builds_no_op_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its views are kept in the cache: nothing reads the tree."""
    builds: list[str] = []
    build = optree.build_op_tree

    def noted(model: Any) -> Any:
        builds.append("op tree")
        return build(model)

    monkeypatch.setattr(optree, "build_op_tree", noted)
    cold, _ = _report(tmp_path / "cache", monkeypatch)
    assert builds == ["op tree"]
    warm, _ = _report(tmp_path / "cache", monkeypatch)
    assert builds == ["op tree"] and warm.views["operators"] == cold.views["operators"]


def test_a_load_state_says_whether_the_model_was_built_or_read_from_the_cache(
    tmp_path: Path,
) -> None:
    path = str(corpus_path(TRACE))
    first = TraceStore(DiskCache(tmp_path / "cache"))
    first.wait(path)  # built, and written to the cache
    again = TraceStore(DiskCache(tmp_path / "cache"))
    again.wait(path)
    try:
        assert first.state_for(path).built
        assert not again.state_for(path).built
    finally:
        first.close()
        again.close()
