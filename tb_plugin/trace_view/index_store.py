"""The trace view's index kept on disk beside its model's cache entry.

A warm start maps the model's columns from the disk cache in milliseconds; rebuilding the
index then costs about 1.6 s of CPU per GB of trace JSON, so it is kept too: one `.npy` a
array (memory-mapped back, read-only, as the columns are), the tracks and scalars in a
small JSON document, and a manifest (the cache's own integrity check), in a folder that
appears whole (written under a temporary name, then renamed). A folder that does not
read back whole is removed and the index built again.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import numpy as np

from ..store.cache_check import manifest_ok, write_manifest
from .levels import Level
from .tracks import Track

log = logging.getLogger(__name__)

FOLDER = "timeline_index"
# Bump when the index's layout or the rules that build it change: an index kept by an
# older release is then built again instead of read.
INDEX_FORMAT = 1
_META = "index.json"
_LEVEL_ARRAYS = (
    "start",
    "end",
    "count",
    "busy",
    "name",
    "single",
    "group_lo",
    "group_hi",
    "stored",
)


Index = TypeVar("Index")  # index.TimelineIndex (which imports this module)


def _array_fields(cls: type) -> list[str]:
    return [
        f.name
        for f in dataclasses.fields(cls)
        if f.name not in ("tracks", "levels", "eps", "t_min", "t_max")
        and f.name not in ("build_seconds", "fallback_tracks")
    ]


def save_index(entry: str, index: Any) -> None:
    """Write `index` into the cache entry folder `entry` (nothing when it is kept already
    or the entry is gone); an error only logs: the index in memory is whole."""
    final = Path(entry) / FOLDER
    if final.exists() or not Path(entry).is_dir():
        return
    tmp = Path(entry) / f".{FOLDER}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    try:
        tmp.mkdir()
        for name in _array_fields(type(index)):
            np.save(tmp / f"{name}.npy", getattr(index, name))
        for k, level in enumerate(index.levels):
            for name in _LEVEL_ARRAYS:
                np.save(tmp / f"level{k}_{name}.npy", getattr(level, name))
        meta = {
            "format": INDEX_FORMAT,
            "eps": index.eps,
            "t_min": index.t_min,
            "t_max": index.t_max,
            "build_seconds": index.build_seconds,
            "fallback_tracks": index.fallback_tracks,
            "level_widths": [level.width for level in index.levels],
            "tracks": [dataclasses.asdict(t) for t in index.tracks],
        }
        (tmp / _META).write_bytes(msgspec.json.encode(meta))
        write_manifest(tmp)
        os.rename(tmp, final)
    except OSError as exc:
        log.warning("kinetoscope: trace view index not kept on disk: %s", exc)
        shutil.rmtree(tmp, ignore_errors=True)


def load_index(entry: str, cls: type[Index]) -> Index | None:
    """The index (a `cls`) kept in the cache entry folder `entry`, or None (none, another
    format, or damaged: then removed)."""
    folder = Path(entry) / FOLDER
    if not (folder / _META).exists():
        return None
    try:
        if not manifest_ok(folder):
            raise ValueError("manifest")
        meta = msgspec.json.decode((folder / _META).read_bytes())
        if meta.get("format") != INDEX_FORMAT:
            raise ValueError("format")
        arrays = {n: _mapped(folder / f"{n}.npy") for n in _array_fields(cls)}
        levels = [
            Level(width, **{n: _mapped(folder / f"level{k}_{n}.npy") for n in _LEVEL_ARRAYS})
            for k, width in enumerate(meta["level_widths"])
        ]
        make: Any = cls
        found: Index = make(
            tracks=[_track(t) for t in meta["tracks"]],
            eps=meta["eps"],
            t_min=meta["t_min"],
            t_max=meta["t_max"],
            levels=levels,
            build_seconds=meta["build_seconds"],
            fallback_tracks=list(meta["fallback_tracks"]),
            **arrays,
        )
        return found
    except (OSError, ValueError, KeyError, TypeError, msgspec.DecodeError) as exc:
        log.warning("kinetoscope: trace view index on disk not read (%s); built again", exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _mapped(path: Path) -> Any:
    return np.load(path, mmap_mode="r")


def _track(fields: dict[str, Any]) -> Track:
    return Track(**{**fields, "sort_key": tuple(fields["sort_key"])})
