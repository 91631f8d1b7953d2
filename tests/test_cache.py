"""Disk cache: a restart reads columns back instead of parsing; a changed file is reparsed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import TraceBuilder
from kinetoscope.analysis.overview.view import overview
from kinetoscope.model.categories import Kind
from kinetoscope.store import trace_store as loader
from kinetoscope.store.cache import MAX_PARAM_VIEWS, DiskCache
from kinetoscope.store.trace_store import TraceStore
from small_fs import run_on_small_tmpfs


def trace(tmp_path: Path) -> Path:
    t = TraceBuilder()
    t.step(1, 0, 100)
    op = t.op("aten::mm", 10, 50, **{"Input Dims": [[2, 2]]})
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=40)
    t.memory(12, 64, 1, 64)
    return t.write(tmp_path / "w.1.pt.trace.json.gz", gz=True)


def test_restart_reads_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(trace(tmp_path))
    cache = DiskCache(tmp_path / "cache")
    first = TraceStore(cache).wait(path)

    def no_parsing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed again although the cache holds this file")

    monkeypatch.setattr(loader, "build_model", no_parsing)
    again = TraceStore(cache).wait(path)
    assert isinstance(again.events["ts"], np.memmap)  # columns are mapped, not read
    for name, column in first.events.items():
        assert np.array_equal(column, again.events[name], equal_nan=column.dtype.kind == "f")
    assert list(again.sparse) == list(first.sparse) and "occupancy" in first.sparse
    for name in first.sparse:  # the sparse columns mapped back as written
        assert np.array_equal(first.full_column(name), again.full_column(name), equal_nan=True)
    assert again.raw_args(1) == first.raw_args(1)
    assert again.memory["bytes"].tolist() == [64]
    assert overview(again) == overview(first)


def test_a_cached_model_knows_its_kinds_and_names_without_reading_a_column(tmp_path: Path) -> None:
    path = str(trace(tmp_path))
    cache = DiskCache(tmp_path / "cache")
    first = TraceStore(cache).wait(path)
    again = TraceStore(cache).wait(path)
    # The summary comes from the entry: neither the kind nor the name column is read.
    del again.events["kind"]
    assert np.array_equal(again.kind_phase_counts(), first.kind_phase_counts())
    del again.events["name"]
    for kind in Kind:
        rows = first.complete_rows(kind)
        assert again.has_complete(kind) == bool(rows.size), kind
        names = np.unique(first.events["name"][rows])
        assert again.complete_names(kind).tolist() == names.tolist(), kind
    assert again.has_complete(Kind.KERNEL) and not again.has_complete(Kind.PYTHON)


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    path = trace(tmp_path)
    store = TraceStore(DiskCache(tmp_path / "cache"))
    assert len(store.wait(str(path))) == 5
    t = TraceBuilder()
    t.op("aten::add", 0, 1)
    t.write(path, gz=True)
    os.utime(path, ns=(1, 10**18))
    assert len(store.wait(str(path))) == 1


def test_views_are_cached_per_version(tmp_path: Path) -> None:
    path = str(trace(tmp_path))
    cache = DiskCache(tmp_path / "cache")
    store = TraceStore(cache)
    store.wait(path)
    calls = []

    def compute(model: Any) -> dict[str, int]:
        calls.append(1)
        return {"n": len(model)}

    assert store.view(path, "probe-v1", compute) == b'{"n":5}'
    restarted = TraceStore(cache)
    restarted.wait(path)
    assert restarted.view(path, "probe-v1", compute) == b'{"n":5}'
    assert len(calls) == 1


LOAD_WITH_CACHE = """
import logging, sys
from kinetoscope.store.cache import DiskCache
from kinetoscope.store.trace_store import TraceStore
logging.basicConfig(level=logging.WARNING)
store = TraceStore(DiskCache(sys.argv[1]))
print("events", len(store.wait(sys.argv[2], timeout=60)), flush=True)
"""


@pytest.mark.parametrize("mount_options", ["size=256k", "ro,size=256k"])
def test_a_full_or_read_only_cache_still_loads(tmp_path: Path, mount_options: str) -> None:
    t = TraceBuilder()
    for i in range(3000):  # args of more than the cache's free space
        t.op(f"aten::op{i % 13}", i * 10, 5, **{"Input Dims": [[i, 2, 3]], "Call stack": "x" * 80})
    path = t.write(tmp_path / "w.1.pt.trace.json")
    proc = run_on_small_tmpfs(tmp_path, mount_options, LOAD_WITH_CACHE, str(path), fill=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "events 3000" in proc.stdout
    assert "loading without it" in proc.stderr or "not cached" in proc.stderr
    assert ".tmp" not in proc.stdout  # no half-built entry left behind


def test_request_parameters_do_not_grow_the_cache_without_bound(tmp_path: Path) -> None:
    path = str(trace(tmp_path))
    cache = DiskCache(tmp_path / "cache")
    store = TraceStore(cache)
    store.wait(path)
    for i in range(3 * MAX_PARAM_VIEWS):
        store.view(path, f"callstacks-v1@{i:016x}", lambda m, i=i: {"i": i})  # type: ignore[misc]
    files = os.listdir(cache.view_path(store.state_for(path).key, "x").parent)
    assert len(files) == MAX_PARAM_VIEWS
    assert sum("@" in name for name in store.state_for(path).views) == MAX_PARAM_VIEWS
    # Past the bound, answers are still right, only not kept.
    assert store.view(path, "callstacks-v1@ffff", lambda m: {"i": -1}) == b'{"i":-1}'


def _swap(a: Path, b: Path) -> None:
    tmp = a.with_suffix(".swap")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


def _flip_middle(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


def _rewrite(p: Path, change: Callable[[bytes], bytes]) -> None:
    p.write_bytes(change(p.read_bytes()))


def _each_view(entry: Path, change: Callable[[bytes], bytes]) -> None:
    for view in (entry / "views").iterdir():
        _rewrite(view, change)


DAMAGE: dict[str, Callable[[Path], object]] = {
    "column_truncated": lambda e: _rewrite(e / "ev_ts.npy", lambda b: b[:-8]),
    "column_deleted": lambda e: (e / "ev_dur.npy").unlink(),
    "columns_swapped": lambda e: _swap(e / "ev_ts.npy", e / "ev_dur.npy"),
    "column_zeroed": lambda e: _rewrite(e / "ev_ts.npy", lambda b: bytes(len(b))),
    "column_extended": lambda e: _rewrite(e / "ev_ts.npy", lambda b: b + b"x" * 8),
    "meta_garbage": lambda e: (e / "meta.json").write_bytes(b"{not json"),
    "meta_byte_flipped": lambda e: _flip_middle(e / "meta.json"),
    "meta_deleted_names": lambda e: (e / "meta.json").write_bytes(b'{"names": []}'),
    "args_truncated": lambda e: _rewrite(e / "args.bin", lambda b: b[:5]),
    "args_byte_flipped": lambda e: _flip_middle(e / "args.bin"),
    "manifest_deleted": lambda e: (e / "manifest.json").unlink(),
    "view_truncated": lambda e: _each_view(e, lambda b: b[:-3]),
    "view_byte_flipped": lambda e: _each_view(e, lambda b: b[:-5] + b"9" + b[-4:]),
    "view_garbage": lambda e: _each_view(e, lambda b: b"\x00\xff"),
    "view_emptied": lambda e: _each_view(e, lambda b: b""),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_entry_is_rebuilt_not_served(tmp_path: Path, damage: str) -> None:
    path = str(trace(tmp_path))
    cache = DiskCache(tmp_path / "cache")
    store = TraceStore(cache)
    first = store.wait(path)
    view = store.view(path, "overview-test", overview)
    args = first.raw_args(1)  # read now: the first model maps the entry's args file
    entry = cache.entry(store.state_for(path).key)
    DAMAGE[damage](entry)
    again = TraceStore(cache)
    model = again.wait(path)
    for name, column in first.events.items():
        assert np.array_equal(column, model.events[name], equal_nan=column.dtype.kind == "f"), name
    for name in first.sparse:
        assert np.array_equal(first.full_column(name), model.full_column(name), equal_nan=True)
    assert model.names == first.names and model.raw_args(1) == args
    assert again.view(path, "overview-test", overview) == view
