"""Memory snapshots in a run folder: which ``*.pickle``/``*.pkl`` files discovery lists.

A short sniff, cached by (path, size, mtime) like the traces' (`discovery`), tells a
snapshot from another pickle (a checkpoint) without reading it: `snapshot.py` reads it
only when a view asks.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import msgspec

from . import storage
from .naming import display_name
from .storage import FileState

_CACHE_MAX = 100_000


class SnapshotFile(msgspec.Struct, frozen=True):
    """A memory snapshot (`torch.cuda.memory._dump_snapshot`) in a run folder."""

    path: str
    file: str
    size: int
    mtime_ns: int


SNAPSHOT_SUFFIXES = (".pickle", ".pkl")
SNAPSHOT_SNIFF_BYTES = 4096
# A snapshot pickle opens with its dict's first key (torch writes `segments` first).
_SNAPSHOT_KEYS = (b"segments", b"device_traces")


def looks_like_snapshot(path: str, size: int, mtime_ns: int) -> bool:
    """Whether discovery lists this ``*.pickle``/``*.pkl`` file as a memory snapshot: a
    pickle of protocol 2 or newer whose first 4 KiB name a snapshot key. A name alone
    would list checkpoints as broken snapshots; an empty or cut snapshot is still listed
    (and its error said) once its head is there."""
    if not path.lower().endswith(SNAPSHOT_SUFFIXES) or size < 2:
        return False
    try:
        return _sniffed(path, size, mtime_ns)
    except OSError:  # unreadable now: not cached, so a later scan retries
        return False


@functools.lru_cache(maxsize=_CACHE_MAX)
def _sniffed(path: str, size: int, mtime_ns: int) -> bool:
    """The sniff, cached by the file's state (`size`, `mtime_ns` are the cache key)."""
    with storage.open_binary(path) as f:
        head = f.read(SNAPSHOT_SNIFF_BYTES)
    return head[:1] == b"\x80" and any(k in head for k in _SNAPSHOT_KEYS)


def snapshot_files(path: str, found: Iterable[tuple[str, FileState]]) -> tuple[SnapshotFile, ...]:
    items = sorted(found, key=lambda item: item[0])
    return tuple(
        SnapshotFile(storage.join(path, file), display_name(file), st.size, st.mtime_ns)
        for file, st in items
    )
