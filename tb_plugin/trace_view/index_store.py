"""The trace view's structures kept on disk beside their model's cache entry.

A warm start maps the model's columns from the disk cache in milliseconds; the trace
view's index would then cost about 1.6 s of CPU per GB of trace JSON to build again, its
flow pairs, track ranges, health marks and counters seconds more at 4 GB. So each is kept: one
`.npy` an array (memory-mapped back, read-only, as the columns are), its other fields in
a small JSON document, and a manifest (the cache's own integrity check), in a folder that
appears whole (written under a temporary name, then renamed). The document names the
code that built it (a digest of the package's sources): a folder written by other code,
or that does not read back whole, is removed and the structure built again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import numpy as np

from ..model.trace_model import TraceModel
from ..store.cache import cache_entry, when_cache_entry
from ..store.cache_check import manifest_ok, write_manifest
from ..store.load_pool import LoadPool

log = logging.getLogger(__name__)

T = TypeVar("T")
Arrays = dict[str, np.ndarray]
_META = "kept.json"
_PACKAGE = Path(__file__).resolve().parent.parent


_DIGEST_LOCK = threading.Lock()


def code_digest() -> str:
    """`_code_digest`, computed once: the structures written at once (a model's entry
    just published) each asked for it, and five threads read and hashed the sources side
    by side (~12 ms of GIL each)."""
    with _DIGEST_LOCK:
        return _code_digest()


@cache
def _code_digest() -> str:
    """Digest of the package's Python sources and data files: what built a kept structure
    (any change of the code builds it again, never reads one it would not build)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*")):
        if path.suffix in (".py", ".json", ".toml") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(_PACKAGE)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def write_kept(entry: str, name: str, arrays: Arrays, meta: dict[str, Any]) -> None:
    """Keep `arrays` and `meta` as `name` in the cache entry folder `entry` (nothing when
    kept already or the entry is gone); an error only logs: the structure in memory is
    whole."""
    final = Path(entry) / name
    if final.exists() or not Path(entry).is_dir():
        return
    tmp = Path(entry) / f".{name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    try:
        tmp.mkdir()
        for key, array in arrays.items():
            np.save(tmp / f"{key}.npy", array)
        document = {"code": code_digest(), "arrays": list(arrays), "meta": meta}
        (tmp / _META).write_bytes(msgspec.json.encode(document))
        write_manifest(tmp)
        os.rename(tmp, final)
    except OSError as exc:
        log.warning("kinetoscope: trace view %s not kept on disk: %s", name, exc)
        shutil.rmtree(tmp, ignore_errors=True)


def read_kept(entry: str, name: str) -> tuple[Arrays, dict[str, Any]] | None:
    """The arrays (memory-mapped: `_mapped`) and meta kept as `name` in `entry`, or None (none, by
    other code, or damaged: then removed)."""
    folder = Path(entry) / name
    if not (folder / _META).exists():
        return None
    try:
        if not manifest_ok(folder):
            raise ValueError("manifest")
        document = msgspec.json.decode((folder / _META).read_bytes())
        if document.get("code") != code_digest():
            raise ValueError("written by other code")
        arrays = {k: _mapped(folder / f"{k}.npy") for k in document["arrays"]}
        return arrays, document["meta"]
    except (OSError, ValueError, KeyError, TypeError, msgspec.DecodeError) as exc:
        log.info("kinetoscope: trace view %s on disk not read (%s); built again", name, exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _mapped(path: Path) -> np.ndarray:
    """The array memory-mapped, read-only, as a plain ndarray: numpy calls a memmap's
    Python hooks on every slice and result (3x the cost of a window query's small ops)."""
    return np.asarray(np.load(path, mmap_mode="r"))


def kept_on_disk(
    model: TraceModel,
    name: str,
    build: Callable[[], T],
    pack: Callable[[T], tuple[Arrays, dict[str, Any]]],
    unpack: Callable[[Arrays, dict[str, Any]], T],
) -> T:
    """`build()`, or what was kept of it as `name` beside the model's cache entry; a
    structure built is written there by the keeper's thread, one write after another (the
    request that asked for it waits for the build only, not for the disk), once the model
    has its entry (a model just built gets it after its first page is drawn: a structure
    built before then was not kept, and the next process built it again, and wrote it
    while it answered)."""
    entry = cache_entry(model)
    if entry is not None:
        found = read_kept(entry, name)
        if found is not None:
            try:
                return unpack(*found)
            except (KeyError, TypeError, ValueError) as exc:
                log.info("kinetoscope: trace view %s on disk not read (%s); built again", name, exc)
                shutil.rmtree(Path(entry) / name, ignore_errors=True)
    if entry is None:  # kept once the entry is written: its digest made now, not then
        _digest_ahead()
    made = build()

    def keep(folder: str) -> None:
        _keep_in_turn(lambda: write_kept(folder, name, *pack(made)))

    when_cache_entry(model, keep)
    return made


# The kept structures' writes, one after another. A model's entry just published runs
# every structure's waiting write at once: a thread each (six at 50 MB) took the GIL from
# the requests by turns, a 50 MB trace's windowed answers waited 60-100 ms (p99 85 ms
# against 34 once written).
_KEEPER = LoadPool(1, name="kinetoscope-keep")


def _keep_in_turn(write: Callable[[], None]) -> None:
    """`write` on the keeper's thread after the writes before it, the sources' digest made
    first (once: see `_digest_ahead`); an error only logs, the structure in memory is whole."""

    def run() -> None:
        try:
            code_digest()
            write()
        except Exception as exc:  # noqa: BLE001 - background work
            log.warning("kinetoscope: a trace view structure not kept on disk: %s", exc)

    _KEEPER.submit(run)


def _digest_ahead() -> None:
    """`code_digest` made on the keeper's thread now (once), so that the writes do not make
    it while the requests that follow a published entry are answered."""
    _keep_in_turn(lambda: None)


def pack_fields(obj: Any) -> tuple[Arrays, dict[str, Any]]:
    """A dataclass whose fields are arrays or JSON values."""
    arrays: Arrays = {}
    meta: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            arrays[f.name] = value
        else:
            meta[f.name] = value
    return arrays, meta


def unpack_fields(cls: Callable[..., T]) -> Callable[[Arrays, dict[str, Any]], T]:
    return lambda arrays, meta: cls(**arrays, **meta)
