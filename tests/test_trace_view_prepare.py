"""The trace view's index kept on disk beside the model's cache entry, and built in the
background once a trace loads in the TensorBoard plugin: the answers of every trace-view
route are the same whether the index was built, read back from disk, or prepared."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import PluginClient
from corpus import corpus_path
from kinetoscope.analysis.core.intervals import IntervalUnion
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.store.cache import DiskCache, cache_entry
from kinetoscope.store.cache_check import write_manifest
from kinetoscope.store.trace_store import TraceStore
from kinetoscope.trace_view import index_store
from kinetoscope.trace_view.counters import Counter
from kinetoscope.trace_view.index import TimelineIndex, build_index, index_of
from kinetoscope.trace_view.index_store import read_kept
from kinetoscope.trace_view.prepare import prepare_trace_view
from kinetoscope.trace_view.workers import WorkerTrace
from test_cache_after_answer import HeldCache
from test_timeline import answer, nested_trace

RESNET = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


def loaded(path: Path, cache: Path) -> TraceModel:
    """The model as the plugin's store loads it (from the disk cache when it is there)."""
    store = TraceStore(DiskCache(cache))
    try:
        return store.wait(str(path), timeout=120)
    finally:
        store.close()


def mapped(array: np.ndarray) -> bool:
    """Read back from disk (a plain array over a memory map), not built."""
    return type(array) is np.ndarray and isinstance(array.base, np.memmap)


def same_index(a: TimelineIndex, b: TimelineIndex) -> None:
    for f in dataclasses.fields(TimelineIndex):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        elif f.name == "levels":
            assert len(x) == len(y)
            for la, lb in zip(x, y):
                for g in dataclasses.fields(la):
                    va, vb = getattr(la, g.name), getattr(lb, g.name)
                    assert np.array_equal(va, vb) if isinstance(va, np.ndarray) else va == vb
        elif f.name != "build_seconds":
            assert x == y, f.name


def route_answers(model: TraceModel, index: TimelineIndex) -> list[Any]:
    """Every windowed route over a spread of windows, the tracks, and a few events."""
    workers = [WorkerTrace(None, model)]
    span = index.t_max - index.t_min
    out = [answer("tracks", workers, {})]
    for frac, at in ((1.0, 0.0), (0.1, 0.3), (0.001, 0.5), (1e-5, 0.77)):
        t0 = index.t_min + at * span
        window = {"t0": repr(t0), "t1": repr(t0 + frac * span)}
        for route in ("trace", "flows", "range_summary"):
            out.append(answer(route, workers, window))
    out.append(answer("search", workers, {"q": "conv"}))
    for row in index.row[:: max(1, len(index) // 7)].tolist():
        out.append(answer("event", workers, {"row": str(row)}))
    return out


def saved(model: TraceModel, name: str = "timeline_index") -> Path:
    """The folder of a structure kept on disk once its background write is done."""
    entry = cache_entry(model)
    assert entry is not None
    folder = Path(entry) / name
    deadline = time.monotonic() + 60
    while not folder.is_dir():
        assert time.monotonic() < deadline, "index never written"
        time.sleep(0.02)
    return folder


@contextlib.contextmanager
def entry_held(trace: Path, cache_dir: Path) -> Iterator[tuple[TraceModel, Callable[[], None]]]:
    """The trace loaded by a store whose cache entry write is held back (a model just
    built, its first page not drawn yet), and the call that lets the write go and waits
    for its load to end."""
    cache = HeldCache(cache_dir)
    store = TraceStore(cache)
    path = str(trace)

    def release() -> None:
        cache.go.set()
        store.wait(path, timeout=60)

    try:
        store.state_for(path)
        assert cache.writing.wait(60)  # loaded; its entry held back
        yield store.model(path), release
    finally:
        cache.go.set()
        store.close()


@pytest.mark.parametrize("source", ["built", "corpus"])
def test_index_read_back_from_disk_answers_the_same(tmp_path: Path, source: str) -> None:
    if source == "built":
        trace = nested_trace().write(tmp_path / "w.pt.trace.json")
    else:
        trace = corpus_path(RESNET)
    cache = tmp_path / "cache"
    first = loaded(trace, cache)
    built = index_of(first)
    assert not mapped(built.start)
    saved(first)
    before = route_answers(first, built)

    again = loaded(trace, cache)  # a warm start: the model and its index from disk
    kept = index_of(again)
    assert mapped(kept.start)  # read back, not built
    same_index(built, kept)
    same_index(build_index(again), kept)
    assert route_answers(again, kept) == before


def test_an_index_built_before_the_entry_is_written_is_kept_once_it_is(tmp_path: Path) -> None:
    """A model just built has no cache entry until its write (after the first page's draw):
    its index, built meanwhile (a trace opened in the trace view), is kept once the entry
    is there, so the next start reads it rather than building it and writing it while it
    answers."""
    trace = nested_trace().write(tmp_path / "w.pt.trace.json")
    with entry_held(trace, tmp_path / "cache") as (model, release):
        built = index_of(model)
        assert cache_entry(model) is None
        release()
        saved(model)
    again = loaded(trace, tmp_path / "cache")
    kept = index_of(again)
    assert mapped(kept.start)  # read back, not built
    same_index(built, kept)


def test_a_damaged_index_is_built_again(tmp_path: Path) -> None:
    trace = nested_trace().write(tmp_path / "w.pt.trace.json")
    cache = tmp_path / "cache"
    model = loaded(trace, cache)
    built = index_of(model)
    folder = saved(model)
    column = folder / "start.npy"
    column.write_bytes(column.read_bytes()[:-8])  # truncated
    assert read_kept(str(folder.parent), folder.name) is None
    assert not folder.exists()  # removed: built and written again
    again = loaded(trace, cache)
    rebuilt = index_of(again)
    assert not mapped(rebuilt.start)
    same_index(built, rebuilt)
    saved(again)
    assert read_kept(str(folder.parent), folder.name) is not None


def test_prepare_builds_what_the_routes_need(tmp_path: Path) -> None:
    model = loaded(corpus_path(RESNET), tmp_path / "cache")
    calls: list[float] = []
    until = time.monotonic() + 0.2

    def busy() -> bool:  # a view computing for 0.2 s: preparing waits for it
        calls.append(time.monotonic())
        return time.monotonic() < until

    prepare_trace_view(model, busy)
    assert time.monotonic() >= until and len(calls) > 1
    for key in ("_timeline_index", "_timeline_counters", "_timeline_flow_pairs"):
        assert key in model.__dict__, key
    assert "_timeline_track_ranges" in model.__dict__
    for name in ("timeline_index", "timeline_flow_pairs", "timeline_track_ranges"):
        saved(model, name)
    saved(model, "timeline_counters")
    saved(model, "health_row_checks")
    again = loaded(corpus_path(RESNET), tmp_path / "cache")  # a warm start: all read back
    prepare_trace_view(again)
    for key in ("_timeline_index", "_timeline_flow_pairs", "_timeline_track_ranges"):
        arrays = [v for v in vars(again.__dict__[key]).values() if isinstance(v, np.ndarray)]
        assert arrays and all(mapped(a) for a in arrays), key  # read back
    same_counters(model.__dict__["_timeline_counters"], again.__dict__["_timeline_counters"])
    marks = again.__dict__["_health_row_checks"]
    assert mapped(marks)
    assert np.array_equal(marks, model.__dict__["_health_row_checks"])
    assert route_answers(again, index_of(again)) == route_answers(model, index_of(model))


def same_counters(built: list[Counter], kept: list[Counter]) -> None:
    """The counters read back (every array mapped) hold what the built ones hold."""
    assert built and len(kept) == len(built)
    assert any(c.union is not None for c in built) and any(c.times is not None for c in built)
    for a, b in zip(built, kept):
        for f in dataclasses.fields(Counter):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if isinstance(x, IntervalUnion):
                for part in ("starts", "ends", "prefix"):
                    assert mapped(getattr(y, part)), (a.id, part)
                    assert np.array_equal(getattr(x, part), getattr(y, part)), (a.id, part)
            elif isinstance(x, np.ndarray):
                assert mapped(y) and x.dtype == y.dtype and np.array_equal(x, y), (a.id, f.name)
            elif f.name not in ("block_max", "fine_max", "negative_zero"):  # made when used
                assert x == y and type(x) is type(y), (a.id, f.name)


def test_the_plugin_prepares_the_trace_view_after_a_load(tmp_path: Path) -> None:
    run = tmp_path / "logs" / "job"
    run.mkdir(parents=True)
    nested_trace().write(run / "worker0.100.pt.trace.json")
    client = PluginClient(tmp_path / "logs")
    try:
        assert client.wait_ready("job", "worker0")["state"] == "ready"
        (state,) = client.plugin.session.store.states.values()
        assert state.model is not None
        deadline = time.monotonic() + 30
        while "_timeline_track_ranges" not in state.model.__dict__:  # no trace-view request
            assert time.monotonic() < deadline, "trace view never prepared"
            time.sleep(0.02)
        assert "_timeline_index" in state.model.__dict__
    finally:
        client.close()


def test_a_structure_kept_by_other_code_is_built_again(tmp_path: Path) -> None:
    import msgspec

    trace = nested_trace().write(tmp_path / "w.pt.trace.json")
    model = loaded(trace, tmp_path / "cache")
    index_of(model)
    folder = saved(model)
    document = msgspec.json.decode((folder / "kept.json").read_bytes())
    (folder / "kept.json").write_bytes(msgspec.json.encode({**document, "code": "other"}))
    write_manifest(folder)  # whole, but not this code's
    assert read_kept(str(folder.parent), folder.name) is None
    assert not folder.exists()


def test_the_store_is_busy_while_views_compute_and_just_after(tmp_path: Path) -> None:
    """What preparing yields to: a load just ended, a view computing, one just computed."""
    from kinetoscope.store.trace_store import BUSY_QUIET_S

    trace = str(nested_trace().write(tmp_path / "w.pt.trace.json"))
    store = TraceStore(DiskCache(tmp_path / "cache"))
    try:
        store.wait(trace, timeout=60)
        assert store.busy()  # the page's first views are asked now
        time.sleep(BUSY_QUIET_S + 0.1)
        assert not store.busy()
        seen: list[bool] = []
        store.view(trace, "probe", lambda model: seen.append(store.busy()) or len(model))
        assert seen == [True] and store.busy()
        time.sleep(BUSY_QUIET_S + 0.1)
        assert not store.busy()
    finally:
        store.close()


def test_structures_waiting_for_the_entry_are_written_one_after_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model just built gets its entry after its first page: every structure built
    before then (the trace view prepared) is written then, by one thread in turn, with
    the sources' digest made once, before the entry; written side by side, a thread each,
    they held the GIL from the requests of that moment (a 50 MB trace: p99 85 ms)."""
    writes: list[tuple[str, str, float, float]] = []
    real_write = index_store.write_kept

    def timed_write(entry: str, name: str, arrays: Any, meta: Any) -> None:
        start = time.monotonic()
        real_write(entry, name, arrays, meta)
        writes.append((name, threading.current_thread().name, start, time.monotonic()))

    monkeypatch.setattr(index_store, "write_kept", timed_write)
    index_store._code_digest.cache_clear()
    with entry_held(corpus_path(RESNET), tmp_path / "cache") as (model, release):
        prepare_trace_view(model)
        assert cache_entry(model) is None and not writes
        release()
        names = ["timeline_index", "timeline_counters", "timeline_flow_pairs"]
        names += ["timeline_track_ranges", "timeline_range_sums", "health_row_checks"]
        for name in names:
            saved(model, name)
        deadline = time.monotonic() + 60
        while len(writes) < len(names) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert sorted(w[0] for w in writes) == sorted(names)
    assert {w[1] for w in writes} == {"kinetoscope-keep"}
    spans = sorted((w[2], w[3]) for w in writes)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    assert index_store._code_digest.cache_info().misses == 1
