"""Run-level views (the distributed view, memory snapshots, compile logs) as background jobs of the
store. The view's function comes from the caller (the api's registry), so the store knows
no analysis.

The first request of a (run, span, file states) starts the job; every request answers
with the job's `RunJobState`: loading (ranks done of total), ready (the view's JSON), or
failed (why). Nothing here knows HTTP: the route maps the state to its answer.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec.structs import replace

from ..ingest.discovery import Run, chosen_spans
from .errors import exception_text
from .load_pool import LoadPool
from .run_context import Progress, RunContext, RunView
from .trace_store import TraceStore
from .view_budget import ViewQueue, ViewTooLarge, is_small

log = logging.getLogger(__name__)

LOADING, READY, FAILED = "loading", "ready", "failed"
RUN_JOB_THREADS = 4  # run and logdir jobs at once; more wait their turn (202)
# Small jobs (view_budget.is_small) run on a lane of their own: a small one is never held
# because every thread of the main lane holds a big job waiting for memory.
SMALL_JOB_THREADS = 2
# A job's memory in bytes from its trace files (path, size): the endpoint's `run_need`.
NeedOf = Callable[[list[tuple[str, int]]], int]


class RunJobState(msgspec.Struct):
    run: str
    span: str  # the span asked for ("1" when none was)
    ranks_total: int
    ranks_done: int = 0
    state: str = LOADING
    result: bytes | None = None  # the view's JSON once ready
    done: threading.Event = msgspec.field(default_factory=threading.Event)  # set: ready or failed
    failure: str | None = None  # why it failed (an analysis bug, not one rank's file)
    error: Exception | None = None  # what was raised (a bad parameter is the client's: 400)
    queued: ViewQueue | None = None  # where it stands while it waits for memory

    def progress(self) -> dict[str, Any]:
        """What a client is told while the job runs (or waits for memory)."""
        told = {
            "run": self.run,
            "span": self.span,
            "state": LOADING,
            "ranks_done": self.ranks_done,
            "ranks_total": self.ranks_total,
        }
        return told if self.queued is None else {**told, "queued": self.queued}


class RunJobs:
    """The distributed view of runs, computed once per (run, span, file states) and kept
    (the last `max_jobs`); ranks are summarized in the store's pools, their models taken
    from the store. At most RUN_JOB_THREADS jobs run at once, each once the store's views'
    memory budget admits what it declared (`need`, bytes)."""

    def __init__(self, store: TraceStore, max_jobs: int = 32) -> None:
        self.store = store
        self.max_jobs = max_jobs
        self._jobs: OrderedDict[tuple[Any, ...], RunJobState] = OrderedDict()
        self._lock = threading.Lock()
        self._threads = LoadPool(RUN_JOB_THREADS, max_slow=0, name="kinetoscope-run-job")
        self._small = LoadPool(SMALL_JOB_THREADS, max_slow=0, name="kinetoscope-small-job")

    def job(
        self,
        name: str,
        compute: RunView,
        run: Run,
        span: str | None,
        progress: Progress | None = None,
        params: dict[str, Any] | None = None,
        need_of: NeedOf | None = None,
    ) -> RunJobState:
        """The state of view `name`'s job on `run` (with the decoded query `params`);
        starts the job (`compute`) if none ran for these files and parameters (`progress`,
        when given, is told of its files too; `need_of`, its memory from its trace files)."""
        picks = chosen_spans(run, span)
        files = tuple((s.path, s.size, s.mtime_ns) for _, s in picks)
        files += tuple((s.path, s.size, s.mtime_ns) for s in run.snapshots)
        files += tuple((c.path, c.size, c.mtime_ns) for c in run.compile_logs)
        asked = dict(params or {})
        key = (name, run.name, span or "1", tuple(sorted(asked.items())), files)
        fresh = RunJobState(run=run.name, span=span or "1", ranks_total=len(picks))
        context = RunContext((run,), span, asked, progress=progress)
        need = need_of([(s.path, s.size) for _, s in picks]) if need_of else 0
        return self._start(key, fresh, name, compute, context, need)

    def logdir_job(
        self,
        name: str,
        compute: RunView,
        runs: tuple[Run, ...],
        params: dict[str, Any],
        progress: Progress | None = None,
        need_of: NeedOf | None = None,
    ) -> RunJobState:
        """The same for a logdir-level view (the trend): `compute(context)` of `runs` over
        every run's span `params["span"]`; `ranks_*` count trace files."""
        span = params.get("span") or None
        picks = [s for run in runs for _, s in chosen_spans(run, span)]
        files = tuple((s.path, s.size, s.mtime_ns) for s in picks)
        key = (name, ".", tuple(sorted(params.items())), files)
        fresh = RunJobState(run=".", span=span or "1", ranks_total=len(picks))
        asked = RunContext(runs, span, params, progress=progress)
        need = need_of([(s.path, s.size) for s in picks]) if need_of else 0
        return self._start(key, fresh, name, compute, asked, need)

    def _start(
        self,
        key: tuple[Any, ...],
        fresh: RunJobState,
        name: str,
        compute: RunView,
        asked: RunContext,
        need: int,
    ) -> RunJobState:
        with self._lock:
            job = self._jobs.get(key)
            start = job is None
            if job is None:
                job = fresh
                self._jobs[key] = job
                while len(self._jobs) > self.max_jobs:
                    self._jobs.popitem(last=False)
            else:
                self._jobs.move_to_end(key)
        if start:
            small = is_small(need, self.store.view_budget.total)
            lane = self._small if small else self._threads
            lane.submit(lambda: self._admitted(key, job, name, compute, asked, need))
        return job

    def _admitted(
        self,
        key: tuple[Any, ...],
        job: RunJobState,
        name: str,
        compute: RunView,
        asked: RunContext,
        need: int,
    ) -> None:
        """The job, once the views' budget admits `need` (its place told meanwhile)."""

        def waiting(queue: ViewQueue) -> None:
            job.queued = queue

        try:
            with self.store.view_budget.waited(
                key, need, f"the {name} view of {_of(job)}", waiting
            ):
                job.queued = None
                self._run(job, name, compute, asked)
        except ViewTooLarge as refused:
            self._failed(job, name, refused)

    def _failed(self, job: RunJobState, name: str, exc: Exception) -> None:
        of = _of(job)
        log.warning("kinetoscope: %s view of %s failed: %r", name, of, exc)
        job.failure = f"{name} view of {of} failed: {exception_text(exc)}"
        job.error = exc
        job.state = FAILED
        job.done.set()

    def _run(self, job: RunJobState, name: str, compute: RunView, asked: RunContext) -> None:
        told = asked.progress

        def progress(done: int, total: int) -> None:
            job.ranks_done = done
            if told is not None:
                told(done, total)

        store = self.store
        cache_dir = str(store.cache.root) if store.cache else None
        context = replace(asked, cache_dir=cache_dir, progress=progress, store=store)
        try:
            view = compute(context)
            job.result = msgspec.json.encode(view)
            job.state = READY
        except Exception as exc:  # noqa: BLE001 - reported to the client, server stays up
            self._failed(job, name, exc)
        finally:
            job.done.set()


def _of(job: RunJobState) -> str:
    """What the job is of, for messages: "." is a logdir job's run."""
    return "the logdir" if job.run == "." else f"run {job.run!r}"
