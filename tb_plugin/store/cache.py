"""Disk cache of built models and computed views, keyed by file state and parser version.

One folder per trace file state: a `.npy` per column (memory-mapped on load, so a warm
start reads almost nothing), the raw args blob, a small metadata document, and the JSON
of every view computed so far. Folders appear atomically (built under a temp name, then
renamed), so a crash never leaves a half-written entry that looks complete.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ..ingest.limits import env_number
from ..ingest.naming import display_name
from ..model.sparse_column import SPARSE_COLUMNS, SparseColumn
from ..model.trace_model import TraceModel
from .cache_check import manifest_ok, open_view, seal_view, write_manifest

try:  # the builtin module: `hashlib` loads OpenSSL first (~3 ms of every command's start)
    from _blake2 import blake2b
except ImportError:  # an interpreter without it
    from hashlib import blake2b

PARSER_VERSION = "19"  # bump when the decoder or model layout changes
_META_FILE = "meta.json"
PARAM_MARK = "@"  # in view names computed with request parameters (views.View.cache_name)
MAX_PARAM_VIEWS = 64  # such views kept on disk per trace
_ARGS_FILE = "args.bin"


_ENTRY_KEY = "_cache_entry"  # kept in the model's own dict, as its derived structures
_WAITING_KEY = "_cache_entry_waiting"  # `when_cache_entry`'s calls not made yet
_ENTRY_LOCK = threading.Lock()


def attach_cache_entry(model: TraceModel, folder: str | None) -> None:
    """The cache entry folder `model` was read from or written to (set by its loader):
    where structures derived from it may be kept beside it. A folder runs the calls that
    `when_cache_entry` left waiting, here."""
    with _ENTRY_LOCK:
        model.__dict__[_ENTRY_KEY] = folder
        waiting = model.__dict__.pop(_WAITING_KEY, []) if folder else []
    for call in waiting:
        call(folder)


def when_cache_entry(model: TraceModel, call: Callable[[str], None]) -> None:
    """`call(folder)` with the model's cache entry: now, or once its loader attaches one.
    A model just built gets it only when its entry is written (`TraceStore._publish`, after
    the first page's draw): a structure derived before then is kept there after all."""
    with _ENTRY_LOCK:
        folder = model.__dict__.get(_ENTRY_KEY)
        if not folder:
            model.__dict__.setdefault(_WAITING_KEY, []).append(call)
            return
    call(folder)


def cache_entry(model: TraceModel) -> str | None:
    """The folder given to `attach_cache_entry`, or None (no cache, or not written)."""
    found: str | None = model.__dict__.get(_ENTRY_KEY)
    return found


def default_cache_dir() -> Path:
    env = os.environ.get("KINETOSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kinetoscope"


def cache_key(source: dict[str, Any]) -> str:
    # An object store's version id or ETag names the content; the mtime then adds nothing
    # (a copy in place changes it, not the content). Local files: size and mtime.
    state = source.get("etag") or source["mtime_ns"]
    text = f"{source['path']}\0{source['size']}\0{state}\0{PARSER_VERSION}"
    return blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


class DiskCache:
    def __init__(self, root: Path | str, max_bytes: int | None = None) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes or int(env_number("KINETOSCOPE_CACHE_MAX_GB", 20) * (1 << 30))

    def entry(self, key: str) -> Path:
        return self.root / key

    def new_build_dir(self, key: str) -> Path:
        """A private folder to build into; `publish` moves it into place."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{key}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        tmp.mkdir()
        return tmp

    def args_path(self, build_dir: Path) -> str:
        return str(build_dir / _ARGS_FILE)

    def publish(self, key: str, build_dir: Path, model: TraceModel) -> None:
        for name, column in model.events.items():
            np.save(build_dir / f"ev_{name}.npy", column)
        for name, column in model.memory.items():
            np.save(build_dir / f"mem_{name}.npy", column)
        for name, sparse in model.sparse.items():
            np.save(build_dir / f"sp_{name}_rows.npy", sparse.rows)
            np.save(build_dir / f"sp_{name}_values.npy", sparse.values)
        meta = {
            "names": model.names,
            "categories": model.categories,
            "pids": model.pids,
            "tids": model.tids,
            "process_names": model.process_names,
            "thread_names": model.thread_names,
            "process_labels": model.process_labels,
            "process_sort": model.process_sort,
            "thread_sort": model.thread_sort,
            "header": model.header,
            "partial": model.partial,
            "warnings": model.warnings,
            # A path that is not UTF-8 cannot go into JSON; it is informative only here.
            "source": {**model.source, "path": display_name(model.source["path"])},
            "event_columns": list(model.events),
            "memory_columns": list(model.memory),
            "sparse_columns": list(model.sparse),
            "summary": model.summary(),
        }
        (build_dir / _META_FILE).write_bytes(msgspec.json.encode(meta))
        write_manifest(build_dir)
        (build_dir / "views").mkdir(exist_ok=True)
        final = self.entry(key)
        try:
            os.rename(build_dir, final)
        except OSError:  # another process published the same entry first
            shutil.rmtree(build_dir, ignore_errors=True)
        self._prune()

    def discard(self, build_dir: Path) -> None:
        shutil.rmtree(build_dir, ignore_errors=True)

    def load(self, key: str) -> TraceModel | None:
        folder = self.entry(key)
        meta_path = folder / _META_FILE
        if not meta_path.exists():
            return None
        if not manifest_ok(folder):
            shutil.rmtree(folder, ignore_errors=True)  # a damaged entry is rebuilt
            return None
        try:
            meta = msgspec.json.decode(meta_path.read_bytes())
            events = {
                n: np.load(folder / f"ev_{n}.npy", mmap_mode="r") for n in meta["event_columns"]
            }
            memory = {
                n: np.load(folder / f"mem_{n}.npy", mmap_mode="r") for n in meta["memory_columns"]
            }
            sparse = _load_sparse(folder, meta["sparse_columns"], _rows_of(events))
            args_file = folder / _ARGS_FILE
            blob: Any = (
                np.memmap(args_file, dtype=np.uint8, mode="r")
                if args_file.exists() and args_file.stat().st_size
                else b""
            )
        except (OSError, ValueError, KeyError, msgspec.DecodeError):
            shutil.rmtree(folder, ignore_errors=True)  # a damaged entry is rebuilt
            return None
        if not _columns_agree(events, memory, len(blob)):
            shutil.rmtree(folder, ignore_errors=True)
            return None
        os.utime(folder)  # recency for pruning
        model = TraceModel(
            events=events,
            memory=memory,
            names=meta["names"],
            categories=meta["categories"],
            pids=meta["pids"],
            tids=meta["tids"],
            args_blob=blob,
            process_names=meta["process_names"],
            thread_names=meta["thread_names"],
            process_labels=meta["process_labels"],
            process_sort=meta["process_sort"],
            thread_sort=meta["thread_sort"],
            header=meta["header"],
            partial=meta["partial"],
            warnings=meta["warnings"],
            source=meta["source"],
            sparse=sparse,
        )
        model.keep_summary(meta.get("summary", {}))  # absent in entries of older releases
        return model

    def view_path(self, key: str, view: str) -> Path:
        return self.entry(key) / "views" / f"{view}.json"

    def load_view(self, key: str, view: str) -> bytes | None:
        path = self.view_path(key, view)
        try:
            data = open_view(path.read_bytes())
        except OSError:
            return None
        if data is None:  # damaged: computed again (and stored again)
            path.unlink(missing_ok=True)
        return data

    def store_view(self, key: str, view: str, data: bytes) -> None:
        path = self.view_path(key, view)
        if not path.parent.exists():
            return
        if PARAM_MARK in view and _count_param_views(path.parent) >= MAX_PARAM_VIEWS:
            return  # one file per distinct request parameter would grow without end
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(seal_view(data))
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def _prune(self) -> None:
        """Drop least recently used entries while the cache is over its size cap."""
        try:
            entries = [p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")]
        except OSError:
            return
        sized = []
        total = 0
        for p in entries:
            size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            sized.append((p.stat().st_mtime, size, p))
            total += size
        for _, size, p in sorted(sized):
            if total <= self.max_bytes:
                break
            shutil.rmtree(p, ignore_errors=True)
            total -= size


def _count_param_views(folder: Path) -> int:
    try:
        return sum(1 for name in os.listdir(folder) if PARAM_MARK in name)
    except OSError:
        return MAX_PARAM_VIEWS


def _rows_of(events: dict[str, Any]) -> int:
    return len(next(iter(events.values()))) if events else 0


def _load_sparse(folder: Path, names: list[str], size: int) -> dict[str, SparseColumn]:
    """The sparse columns written by `publish` (memory-mapped, as the dense ones)."""
    out = {}
    for name in names:
        rows = np.load(folder / f"sp_{name}_rows.npy", mmap_mode="r")
        values = np.load(folder / f"sp_{name}_values.npy", mmap_mode="r")
        if rows.size != values.size or (rows.size and not 0 <= rows[-1] < size):
            raise ValueError(f"sparse column {name} does not fit the rows")
        out[name] = SparseColumn(rows, values, SPARSE_COLUMNS[name], size)
    return out


def _columns_agree(events: dict[str, Any], memory: dict[str, Any], args_size: int) -> bool:
    """Every column of a table has the same length, and the args offsets fit the blob."""
    lengths = {len(c) for c in events.values()}
    if len(lengths) > 1 or len({len(c) for c in memory.values()}) > 1:
        return False
    ends = events.get("args_end")
    return ends is None or not len(ends) or 0 <= int(ends[-1]) <= args_size
