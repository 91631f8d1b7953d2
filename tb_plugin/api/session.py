"""What a door opens once and every call of it shares: the logdir's listing, one store of
models (over the disk cache), its run jobs and where ranks are summarised. The server
keeps its listing fresh in the background (`WatchedListing`), the MCP server rescans at
most every KINETOSCOPE_RESCAN_SECONDS (`RescannedListing`), the CLI and the notebook list
what they were named once (`FixedListing`, from `list_target`). Doors read the lower
floors through here and `dispatch`, never directly."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, Protocol

from ..ingest import storage
from ..ingest.discovery import Run, scan_logdir, target_runs
from ..ingest.limits import env_number
from ..ingest.not_a_trace import no_traces_message
from ..ingest.watcher import BackgroundWatcher, StillListing
from ..model.derived_tables import unrecorded
from ..store.cache import DiskCache, default_cache_dir
from ..store.dask_ranks import DaskRanks, DaskUnavailable, require_distributed
from ..store.pools import executor_from_env
from ..store.run_jobs import RunJobs
from ..store.trace_store import TraceStore
from ..store.view_budget import Queued
from .resolve import NotFound, resolve

__all__ = [
    "DaskUnavailable",
    "FixedListing",
    "ListingPending",
    "LogdirUnreadable",
    "RescannedListing",
    "Session",
    "WatchedListing",
    "build_beside",
    "list_logdir",
    "list_target",
    "no_traces_message",
    "rank_executor",
    "shut_down",
]

LISTING_BODY = {"state": "listing", "message": "listing the logdir..."}
FIRST_SPAN_WAIT_S = 60.0  # how long `load_first_span` waits for the first listing
BESIDE_FIRST_PAGE = "health"  # the route a page asks beside its first page (its marks)
# The disk-cache entry of the span the page opens first (~0.4 s of CPU a GB) is written
# once its first page has been asked for and drawn, not while the browser draws it: a
# 1 GB trace's Overview was drawn 0.2-0.5 s after its answer with the write beside it,
# 0.20-0.25 s without. The page asks within FIRST_PAGE_ASK_S (else the write goes on),
# and draws in FIRST_PAGE_DRAW_S.
FIRST_PAGE_ASK_S = 3.0
FIRST_PAGE_DRAW_S = 0.5


class ListingPending(Exception):
    """The first listing of the logdir is still under way: `body` is what a 202 says."""

    def __init__(self) -> None:
        super().__init__("still listing")
        self.body = dict(LISTING_BODY)


class LogdirUnreadable(Exception):
    """The logdir cannot be listed (an object store refused, its backend is missing)."""


class Listing(Protocol):
    def runs(self) -> tuple[Run, ...]: ...


class FixedListing:
    """The runs a command named, listed once."""

    def __init__(self, runs: tuple[Run, ...] | list[Run]) -> None:
        self._runs = tuple(runs)

    def runs(self) -> tuple[Run, ...]:
        return self._runs


class RescannedListing:
    """`target_runs` of a logdir, listed again when the last listing is older than
    `interval_s` (new runs appear; a call does not pay for a listing)."""

    def __init__(self, target: str, interval_s: float | None = None) -> None:
        self.target = target
        self.interval_s = (
            env_number("KINETOSCOPE_RESCAN_SECONDS", 10) if interval_s is None else interval_s
        )
        self._lock = threading.Lock()
        self._runs: tuple[Run, ...] | None = None
        self._at = 0.0

    def runs(self) -> tuple[Run, ...]:
        with self._lock:
            if self._runs is None or time.monotonic() - self._at >= self.interval_s:
                self._runs = tuple(target_runs(self.target))
                self._at = time.monotonic()
            return self._runs


class WatchedListing:
    """The server's: a background watcher started on first use; its first listing off
    the asking thread (`ListingPending` while it runs, at most KINETOSCOPE_FIRST_LISTING_
    WAIT_S), a listing error as `LogdirUnreadable`."""

    def __init__(self, logdir: str) -> None:
        interval = env_number("KINETOSCOPE_RESCAN_SECONDS", 10)
        first_wait = env_number("KINETOSCOPE_FIRST_LISTING_WAIT_S", 2)
        self.watcher = BackgroundWatcher(logdir, interval_s=interval, first_wait_s=first_wait)
        self._started = False
        self._start_lock = threading.Lock()

    def runs(self) -> tuple[Run, ...]:
        if not self._started:
            with self._start_lock:
                if not self._started:
                    self.watcher.start()
                    self._started = True
        try:
            return self.watcher.runs()
        except StillListing:
            raise ListingPending() from None
        except OSError as exc:  # only a URL logdir raises: a local one lists what it can
            raise LogdirUnreadable(f"cannot list the logdir: {exc}") from None

    def stop(self) -> None:
        self.watcher.stop()


class Session:
    """One door's listing, store and run jobs. `cache`: read and write the disk cache
    (`default_cache_dir()`, KINETOSCOPE_CACHE_DIR); `executor`: where a run's ranks are
    summarised (None: this machine's pools)."""

    def __init__(
        self, listing: Listing, cache: bool = True, executor: Executor | None = None
    ) -> None:
        self.listing = listing
        disk = DiskCache(default_cache_dir()) if cache else None
        self.store = TraceStore(disk, executor=executor)
        self.jobs = RunJobs(self.store)
        self._owned: Executor | None = None  # made here (a command's Dask client): ended here
        self._first_span: str | None = None  # the path `load_first_span` started loading

    @classmethod
    def for_command(cls, cache: bool = True, dask: str | None = None) -> Session:
        """A command's: nothing listed yet (`list_target`), ranks summarised by `--dask
        ADDRESS`, else the environment's executor, else this machine's pools;
        DaskUnavailable now, before any trace is read, when Dask is asked for and missing."""
        executor = rank_executor(dask)
        session = cls(FixedListing(()), cache, executor)
        session._owned = executor if isinstance(executor, DaskRanks) else None
        return session

    def list_target(self, text: str) -> tuple[str, str | None, tuple[Run, ...]]:
        """`list_target(text)`, its runs this session's listing from now on."""
        path, kind, runs = list_target(text)
        self.listing = FixedListing(runs)
        return path, kind, runs

    def start_load(self, run: Run, worker: str | None, span: str | None) -> threading.Event:
        """Start loading the trace these names resolve to (nothing when they name
        nothing: the call that needs it says so); set once that load is over."""
        if run.workers:
            with contextlib.suppress(NotFound):
                return self.store.state_for(resolve(run, worker, span).span.path).done
        return threading.Event()

    def load_first_span(self) -> None:
        """Start loading the span the UI opens first (the first run with workers, its
        first worker and span: `resolve`'s defaults, as the page's) once the first
        listing is there: what a TensorBoard user waits for first is its load, begun
        while TensorBoard and the page start. Its own thread: a listing that never
        answers holds nothing; a listing failed or still pending after
        FIRST_SPAN_WAIT_S starts nothing (the page's first request will)."""
        threading.Thread(
            target=self._load_first_span, name="kinetoscope-first-span", daemon=True
        ).start()

    def _load_first_span(self) -> None:
        deadline = time.monotonic() + FIRST_SPAN_WAIT_S
        while True:
            try:
                runs = self.runs()
                break
            except ListingPending:
                if time.monotonic() > deadline:
                    return
            except Exception:  # noqa: BLE001 - the page's requests say what is wrong
                return
        first = next((run for run in runs if run.workers), None)
        if first is not None:
            with contextlib.suppress(NotFound):
                self._first_span = resolve(first, None, None).span.path
            self.start_load(first, None, None)

    def _answer_first_page(self, path: str) -> None:
        """The first page of the span the UI opens first (`load_first_span`), computed as
        soon as that span is loaded: its request comes a status poll later and finds it
        answered or being computed (one compute: the store's), ahead of the other views
        the page asks for and of the cache's write."""
        if path != self._first_span:
            return
        self._first_span = None
        from .endpoints import ENDPOINTS, span_pages  # the registry: when a trace loads
        from .registry import Answer, Scope

        model = self.store.model(path)
        pages = span_pages(model)
        endpoint = ENDPOINTS.get(pages[0]) if pages else None
        if endpoint is not None and (endpoint.scope, endpoint.answer) == (
            Scope.SPAN,
            Answer.COMPUTE,
        ):
            build_beside(endpoint.name, model)
            params = endpoint.decode({})
            try:
                endpoint.answer_json(self.store, path, params)
            except Queued:  # other views hold the memory: the page's request asks again
                return
            if self.store.cache is not None and endpoint.caches(params):
                self._wait_for_first_draw(path, endpoint.cache_name(params))  # then the write

    def _wait_for_first_draw(self, path: str, name: str) -> None:
        """Until the page has asked for view `name` of `path` (the store answered it as
        kept) and had FIRST_PAGE_DRAW_S to draw it; at most FIRST_PAGE_ASK_S for the ask,
        and no longer once the store closes (its close waits for the write)."""
        state = self.store.state_for(path, start=False)
        asked_by = time.monotonic() + FIRST_PAGE_ASK_S
        drawn_by = None
        while not self.store.closed and time.monotonic() < (drawn_by or asked_by):
            if drawn_by is None and name in state.served:
                drawn_by = time.monotonic() + FIRST_PAGE_DRAW_S
            time.sleep(0.02)

    @classmethod
    def for_server(cls, logdir: str) -> Session:
        """The TensorBoard plugin's: watched listing, the cache unless KINETOSCOPE_NO_CACHE
        is 1, the environment's executor."""
        cache = os.environ.get("KINETOSCOPE_NO_CACHE") != "1"
        session = cls(WatchedListing(logdir), cache, executor_from_env())
        store = session.store
        store.before_publish = session._answer_first_page
        if os.environ.get("KINETOSCOPE_PREPARE_TRACE_VIEW", "1") != "0":
            store.after_load = lambda model: _prepare_trace_view(model, store.busy)
        return session

    def runs(self) -> tuple[Run, ...]:
        return self.listing.runs()

    @property
    def cache_dir(self) -> str | None:
        """Where run-level summaries are kept with the models (None: no disk cache)."""
        return str(self.store.cache.root) if self.store.cache else None

    @property
    def executor(self) -> Executor | None:
        return self.store.pools.executor

    def close(self) -> None:
        self.store.close()
        if self._owned is not None:
            shut_down(self._owned)  # ours: the client, and a local cluster


def list_target(text: str) -> tuple[str, str | None, tuple[Run, ...]]:
    """What a command line or a notebook names: (its absolute path or URL, "file", "dir"
    or None when nothing is there, its runs: `target_runs`). OSError when it cannot be
    listed."""
    path = storage.absolute(text)
    kind = storage.kind(path)
    return path, kind, (tuple(target_runs(path)) if kind is not None else ())


def list_logdir(text: str) -> tuple[str, bool, Callable[[], tuple[Run, ...]]]:
    """(absolute path, whether it is a folder, its scan): `kinetoscope diff`'s logdir.
    OSError when it cannot be looked at."""
    path = storage.absolute(text)
    return path, storage.kind(path) == "dir", lambda: scan_logdir(path)


def rank_executor(dask: str | None) -> Executor | None:
    """Where a distributed run's ranks are summarised: `--dask ADDRESS`, else the
    environment's executor, else None (this machine's pools). DaskUnavailable now, before
    any trace is read, when Dask is asked for and missing."""
    executor = DaskRanks(dask, "--dask") if dask else executor_from_env()
    if isinstance(executor, DaskRanks):
        require_distributed(executor.asked_by)
    return executor


def shut_down(executor: Any) -> None:
    """A Dask executor the command made: its client and a local cluster, ended."""
    if isinstance(executor, DaskRanks):
        executor.shutdown()


def build_beside(page: str, model: Any) -> threading.Thread | None:
    """The derived tables of the route the page asks beside its first page (`health`, for
    the side bar's marks), built in a thread of their own while the first page computes:
    the other core's share of the first answer. Only when the first page reads every one
    of them (`TABLE_USES`; the Overview reads the trace health): nothing is built that
    the first page would not build; it waits on a table still being built (one build).
    The thread started, or None."""
    from .endpoints import ENDPOINTS  # the registry: when a trace loads
    from .table_uses import TABLE_USES

    beside = ENDPOINTS.get(BESIDE_FIRST_PAGE)
    tables = TABLE_USES.get(BESIDE_FIRST_PAGE)
    if beside is None or not tables or not tables <= TABLE_USES.get(page, frozenset()):
        return None
    if not beside.supports(model):
        return None

    def build(model: Any) -> None:
        with contextlib.suppress(Exception):  # the first page builds it again, and says why
            beside.of_span(model, beside.decode({}))

    thread = threading.Thread(
        target=unrecorded(build), args=(model,), name="kinetoscope-beside-first", daemon=True
    )
    thread.start()
    return thread


def _prepare_trace_view(model: Any, busy: Callable[[], bool]) -> None:
    """The trace view's index and links of a loaded trace, built in the background (a
    TensorBoard user opens the trace view after a page or two: it is then ready)."""
    from ..trace_view.prepare import prepare_trace_view  # imported when a trace loads

    prepare_trace_view(model, busy)
