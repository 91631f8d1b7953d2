"""One trace file's state in the store: loading, ready or failed, its model and the
views answered from it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Literal, TypedDict

import msgspec

from ..model.trace_model import TraceModel
from .errors import LoadError

StateName = Literal["loading", "ready", "error"]
LOADING: StateName = "loading"
READY: StateName = "ready"
ERROR: StateName = "error"


class LoadSnapshot(TypedDict):
    """A file's load state as the `status` route and the doors read it."""

    state: StateName
    bytes_done: int
    bytes_total: int
    partial: bool
    warnings: list[str]
    error: LoadError | None
    event_count: int


class LoadState(msgspec.Struct):
    key: str
    path: str
    state: StateName = LOADING
    bytes_done: int = 0
    bytes_total: int = 0
    error: LoadError | None = None
    failed_at: float = 0.0  # time.monotonic() of the error
    model: TraceModel | None = None
    views: dict[str, bytes] = msgspec.field(default_factory=dict)
    lock: threading.Lock = msgspec.field(default_factory=threading.Lock)  # guards view_locks
    view_locks: dict[str, threading.Lock] = msgspec.field(default_factory=dict)
    done: threading.Event = msgspec.field(default_factory=threading.Event)
    # Set once the disk cache holds the model (or never will): a cold model answers its
    # views first and is written after (`_publish`); views answered meanwhile are written
    # with it. Guarded by `lock` with `views`.
    published: threading.Event = msgspec.field(default_factory=threading.Event)
    build_dir: Path | None = None  # the built model's cache folder, until written
    served: set[str] = msgspec.field(default_factory=set)  # views answered as they were kept
    built: bool = False  # the model was built from its file here, not read from the cache

    def view_lock(self, name: str) -> threading.Lock:
        """The lock held while view `name` is computed (and cached)."""
        with self.lock:
            return self.view_locks.setdefault(name, threading.Lock())

    def snapshot(self) -> LoadSnapshot:
        model = self.model
        return {
            "state": self.state,
            "bytes_done": self.bytes_done,
            "bytes_total": self.bytes_total,
            "partial": bool(model.partial) if model else False,
            "warnings": list(model.warnings) if model else [],
            "error": self.error,
            "event_count": len(model) if model else 0,
        }
