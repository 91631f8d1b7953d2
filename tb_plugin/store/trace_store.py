"""Loading off the request thread: a bounded pool, progress, errors, two cache levels.

`TraceStore.status(path)` starts a load if none is running and says how far it is;
`TraceStore.view(path, name, fn)` returns a view's JSON, computing it once per file state.
A file that fails to load records its error; it never takes a neighbour down with it.
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from ..ingest.build import TRIM_AFTER_BYTES, build_model
from ..ingest.discovery import capture_files
from ..ingest.heap import trim_when_freed
from ..ingest.limits import env_number, load_timeout_s, server_share_mb, slow_load_s
from ..ingest.storage import file_identity, is_url
from ..model.derived_tables import unrecorded
from ..model.trace_model import TraceModel, columns_nbytes, model_nbytes
from .cache import MAX_PARAM_VIEWS, PARAM_MARK, DiskCache, attach_cache_entry, cache_key
from .errors import (
    LoadFailed,
    LoadTimeout,
    NotReady,
    describe_error,
    exception_text,
    store_error,
)
from .load_state import ERROR, LOADING, READY, LoadSnapshot, LoadState
from .pools import WorkerPools
from .view_budget import shared_budget

__all__ = [
    "LoadFailed",
    "LoadTimeout",
    "NotReady",
    "TraceStore",
    "describe_error",
    "exception_text",
]

log = logging.getLogger(__name__)

BUSY_QUIET_S = 1.0  # `busy` this long after a view compute or a load ends


def _is_cache_write_error(exc: OSError) -> bool:
    # Reading the trace fails with other errors (ENOENT, EISDIR, ...); these are writes.
    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EFBIG)


def _retry_due(state: LoadState) -> bool:
    """A load that failed because the store did not answer is tried again after
    KINETOSCOPE_UNREACHABLE_RETRY_S (default 10, the rescan period)."""
    if state.state != ERROR or not state.error or state.error.get("kind") != "unreachable":
        return False
    return time.monotonic() - state.failed_at > env_number("KINETOSCOPE_UNREACHABLE_RETRY_S", 10)


def _count_param_views(views: dict[str, bytes]) -> int:
    return sum(1 for name in views if PARAM_MARK in name)


_CLOSED = "the trace store closed before this trace loaded"


class TraceStore:
    """Three tiers per trace file state: its model (loaded in the pools, kept within the
    memory budget), its views' JSON, and, per run, the distributed view from per-rank
    summaries (`distributed`). `executor`: where rank summaries run instead of the
    default pools (e.g. a Dask cluster's)."""

    closed = False  # set by close(): later asks end at once, as errors
    # Called in a thread of its own with each model once it is ready (the TensorBoard
    # plugin's: the trace view's index built before it is asked for); None: nothing.
    after_load: Callable[[TraceModel], None] | None = None
    # Called on a load's thread with the file's path once its model answers, before its
    # disk-cache entry is written (the server's: the first page of the span a user opens
    # first, computed at once; the write, ~0.4 s of CPU a GB, comes after, not beside it).
    before_publish: Callable[[str], None] | None = None

    def __init__(
        self,
        cache: DiskCache | None = None,
        workers: int = 2,
        memory_budget: int | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.cache = cache
        self.pools = WorkerPools(workers, executor)
        self.pool = self.pools.loads
        self.states: OrderedDict[str, LoadState] = OrderedDict()
        self._loaded_paths: set[str] = set()  # object-store paths with a model loaded
        self.lock = threading.Lock()
        self.memory_budget = memory_budget or int(
            env_number("KINETOSCOPE_MEMORY_MB", server_share_mb("models", 8192)) * (1 << 20)
        )
        self._computing = 0  # views being computed now (`busy`)
        self.view_budget = shared_budget()  # every view's memory, span and run jobs alike
        self._last_activity = 0.0  # time.monotonic() a view compute or a load last ended

    # --- loading -------------------------------------------------------------

    def state_for(self, path: str, start: bool = True) -> LoadState:
        # A model loaded from an object store answers without waiting on the store: its
        # object's last known state, refreshed in the background (`storage.stat`).
        loaded = path in self._loaded_paths
        try:
            source = file_identity(path, wait=not loaded)
        except OSError as exc:
            failed = LoadState(key="", path=path, state=ERROR, error=describe_error(path, exc))
            failed.done.set()
            failed.published.set()
            return failed
        key = cache_key(source)
        with self.lock:
            state = self.states.get(key)
            if state is not None and _retry_due(state):
                del self.states[key]  # the store did not answer: asked again, not forever
                state = None
            if state is not None:
                self.states.move_to_end(key)
                return state
            state = LoadState(key=key, path=path, bytes_total=source["size"])
            self.states[key] = state
        if self.closed:  # pools stopped: a load asked for now would never run
            state.state, state.error = ERROR, store_error(state.path, _CLOSED)
            state.done.set()
            state.published.set()
        elif start:
            self.pool.submit(lambda: self._load(state))
        return state

    def holds(self, path: str, key: str | None = None) -> bool:
        """Whether this file, in its current state (`key`, when the caller knows it), is
        loading or loaded here."""
        try:
            key = key or cache_key(file_identity(path))
        except OSError:
            return False
        with self.lock:
            return key in self.states

    def status(self, path: str) -> LoadSnapshot:
        return self.state_for(path).snapshot()

    def model(self, path: str) -> TraceModel:
        state = self.state_for(path)
        if state.state == LOADING:
            raise NotReady()
        if state.state == ERROR or state.model is None:
            raise LoadFailed(state.error or store_error(path, "not loaded"))
        return state.model

    def loaded(self, path: str, timeout: float | None = None) -> TraceModel:
        """Block until loaded; its disk-cache entry may still be being written (`close`
        waits for that): a door that answers views at once (`kinetoscope report`)."""
        self.state_for(path).done.wait(timeout)
        return self.model(path)

    def wait(self, path: str, timeout: float | None = None) -> TraceModel:
        """Block until loaded and, with a disk cache, written there (a later process or
        store reads the entry), within `timeout` seconds in all."""
        state = self.state_for(path)
        deadline = None if timeout is None else time.monotonic() + timeout
        if state.done.wait(timeout):
            state.published.wait(
                None if deadline is None else max(0.0, deadline - time.monotonic())
            )
        return self.model(path)

    def _load(self, state: LoadState) -> None:
        started = time.monotonic()
        slow_at, deadline = started + slow_load_s(), started + load_timeout_s()

        def progress(done: int, total: int) -> None:
            state.bytes_done = done
            state.bytes_total = max(total, done)
            now = time.monotonic()
            if now > slow_at:
                self.pool.release_slot()
            if now > deadline:
                raise LoadTimeout(deadline - started)

        try:
            model = self.cache.load(state.key) if self.cache else None
            if model is None:
                model = self._build(state, progress)
                state.built = True
            model.attach_captures(partial(self._captures_of, state.path))
            entry = self.cache.entry(state.key) if self.cache else None
            attach_cache_entry(model, str(entry) if entry and entry.is_dir() else None)
            state.model = model
            state.bytes_done = state.bytes_total
            state.state = READY
            if is_url(state.path):
                self._loaded_paths.add(state.path)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a per-file error
            log.warning("kinetoscope: cannot load %s: %s", state.path, exc)
            state.error = describe_error(state.path, exc)
            state.failed_at = time.monotonic()
            state.state = ERROR
        state.done.set()  # the views answer from here; the cache is written after
        if state.model is not None and self.before_publish is not None and not self.closed:
            try:
                self.before_publish(state.path)
            except Exception:  # noqa: BLE001 - the route asking for it says what failed
                log.warning("kinetoscope: first view of %s failed", state.path, exc_info=True)
        self._publish(state)
        self._last_activity = time.monotonic()
        self._evict()
        if state.model is not None and self.after_load is not None and not self.closed:
            threading.Thread(
                target=unrecorded(self.after_load), args=(state.model,),
                name="kinetoscope-after-load", daemon=True,
            ).start()  # fmt: skip

    def busy(self) -> bool:
        """Whether a view is being computed now or was within BUSY_QUIET_S, or a load just
        ended (the page's first views are then asked): work started after a load yields."""
        quiet = time.monotonic() - self._last_activity > BUSY_QUIET_S
        return self._computing > 0 or not quiet

    def _captures_of(self, path: str) -> list[TraceModel]:
        """The models of the graph-capture traces beside `path` (discovery's
        `capture_files`), loaded when a view first asks; one that fails to load is left
        out with a warning (the replays then stay with their launch call)."""
        models = []
        for capture in capture_files(path):
            try:
                models.append(self.wait(capture))
            except (LoadFailed, NotReady) as exc:
                log.warning("kinetoscope: capture trace %s not loaded: %s", capture, exc)
        return models

    def _build(self, state: LoadState, progress: Callable[[int, int], None]) -> TraceModel:
        # The decode processes a big file may ask for are the pools' (the one owner).
        build = partial(
            build_model, state.path, progress=progress, decode_pool=self.pools.decode_processes
        )
        if self.cache is None:
            return build()
        try:
            build_dir = self.cache.new_build_dir(state.key)
        except OSError as exc:
            log.warning("kinetoscope: cache not writable (%s); loading without it", exc)
            return build()
        try:
            model = build(args_path=self.cache.args_path(build_dir))
            state.build_dir = build_dir  # published once the model answers (`_publish`)
        except OSError as exc:
            self.cache.discard(build_dir)
            if not _is_cache_write_error(exc):
                raise
            # A full or broken cache must not make the trace unloadable: the args spill
            # to a temporary file instead (if that fails too, the error is the file's).
            log.warning("kinetoscope: cannot write the cache (%s); loading without it", exc)
            return build()
        except BaseException:
            self.cache.discard(build_dir)
            raise
        return model

    def _publish(self, state: LoadState) -> None:
        """The built model written into the disk cache, after its load is marked done
        (the first view does not wait for the write), then the views answered meanwhile;
        `published` set in any case, once all of it is written."""
        build_dir = state.build_dir
        try:
            if build_dir is not None and self.cache is not None:
                if state.model is None:  # failed after the build (its captures)
                    self.cache.discard(build_dir)
                else:
                    self._write_entry(state, build_dir, state.model)
                    entry = self.cache.entry(state.key)  # where the model's kin are kept
                    attach_cache_entry(state.model, str(entry) if entry.is_dir() else None)
        finally:
            with state.lock:  # from here a view answered is written by its own thread
                state.build_dir = None
                answered = list(state.views.items()) if build_dir is not None else []
            try:
                for name, data in answered:
                    if self.cache is not None:
                        self.cache.store_view(state.key, name, data)
            finally:
                state.published.set()

    def _write_entry(self, state: LoadState, build_dir: Path, model: TraceModel) -> None:
        assert self.cache is not None
        try:
            self.cache.publish(state.key, build_dir, model)
        except OSError as exc:
            # The model is whole in memory (its args stay mapped after the folder goes).
            log.warning("kinetoscope: cannot write the cache (%s); not cached", exc)
            self.cache.discard(build_dir)

    def _evict(self) -> None:
        """Forget the least recently used models beyond the memory budget."""
        with self.lock:
            total = 0
            for key in reversed(list(self.states)):
                st = self.states[key]
                if st.model is not None:
                    total += model_nbytes(st.model)
                    if total > self.memory_budget:
                        self._loaded_paths.discard(st.path)
                        del self.states[key]

    # --- views ---------------------------------------------------------------

    def view(
        self, path: str, name: str, compute: Callable[[TraceModel], Any], cost: float = 0.0
    ) -> bytes:
        """JSON of view `name` for the file at `path`, computed once per file state;
        `cost` its memory over the model's bytes (`view_budget`: Queued, ViewTooLarge)."""
        model = self.model(path)
        state = self.state_for(path)
        cached = state.views.get(name)
        if cached is not None:
            state.served.add(name)  # the server's first page waits for it (`api.session`)
            return cached
        with state.view_lock(name):  # one compute per view; other views meanwhile
            cached = state.views.get(name)
            if cached is not None:
                state.served.add(name)
                return cached
            data = self.cache.load_view(state.key, name) if self.cache else None
            stored = data is not None
            if data is None:
                with self.lock:
                    self._computing += 1
                try:
                    data = self.computed(model, path, name, compute, cost)
                finally:
                    with self.lock:
                        self._computing -= 1
                        self._last_activity = time.monotonic()
                # a view's temporaries can be as big as the model
                trim_when_freed(TRIM_AFTER_BYTES)
            with state.lock:  # a view answered before the entry is written goes with it
                if PARAM_MARK not in name or _count_param_views(state.views) < MAX_PARAM_VIEWS:
                    state.views[name] = data  # bounded: requests choose the parameters
                written_later = state.build_dir is not None and name in state.views
            if self.cache and not stored and not written_later:
                self.cache.store_view(state.key, name, data)
            return data

    def computed(
        self,
        model: TraceModel,
        path: str,
        name: str,
        compute: Callable[[TraceModel], Any],
        cost: float,
    ) -> bytes:
        """`compute(model)`'s JSON, once the views' memory budget admits its cost."""
        need = int(cost * columns_nbytes(model))
        with self.view_budget.admitted((path, name), need, f"the {name.split('-v')[0]} view"):
            return msgspec.json.encode(compute(model))

    def close(self) -> None:
        """Stops the pools, once the entries of the models loaded are written (a command
        answered its views before). Loads still queued never run, so they end here as
        errors: whatever waits on them (a rank summary of a run job) returns instead of
        blocking the interpreter's exit."""
        self.closed = True
        self.pools.close()
        with self.lock:
            pending = [state for state in self.states.values() if not state.done.is_set()]
            writing = [state for state in self.states.values() if state.done.is_set()]
        for state in writing:  # loaded: its entry is being written (a command's last)
            state.published.wait()
        for state in pending:  # a load finishing meanwhile may still set its model
            state.state, state.error = ERROR, store_error(state.path, _CLOSED)
            state.done.set()
            state.published.set()
