"""A run with several workers as one distributed job: which file per rank, per-rank
summaries in a bounded pool (cached on disk), then the cross-rank analysis.

`rank_summary(path, cache_dir)` is the unit of work: a top-level function of plain
arguments returning a small picklable `RankSummary`, so it runs in a thread, in a
`ProcessPoolExecutor`, or on a cluster (any `concurrent.futures.Executor`: Dask's
`client.get_executor()`, a Ray adapter; docs/distributed.md). The cross-rank analysis
only ever sees summaries.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import (
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    as_completed,
)
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import msgspec

from ..analysis.distributed.view import (
    VERSION,
    RankInput,
    RankSummary,
    analyze,
    summarize_rank,
)
from ..analysis.taxonomy import taxonomy_version
from ..api.listing import rank_from_name
from ..ingest.build import build_model
from ..ingest.discovery import Run, SpanFile, Worker
from .cache import DiskCache, cache_key
from .model import file_identity
from .trace_store import LoadFailed, TraceStore, describe_error, exception_text

log = logging.getLogger(__name__)

SUMMARY_VIEW = f"distributed-rank-v{VERSION}t{taxonomy_version()}"
SUMMARY_DIR = ".distributed"  # under the cache root; "." keeps the model cache's pruning off it
PROCESS_POOL_MIN_RANKS = 8  # from this many ranks, summaries are computed in processes
POOL_WORKERS = 2
EXECUTOR_ENV = "KINETOSCOPE_DISTRIBUTED_EXECUTOR"  # "module:factory" returning an Executor
# Built at import, before threads share it: see model.decoders_for.
_SUMMARY_DECODER = msgspec.json.Decoder(RankSummary)

Progress = Callable[[int, int], None]


class RankFailed(Exception):
    """A rank's file could not be summarized; `error` is a loader error dict (picklable)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error)
        self.error = error


class DistributedJobError(Exception):
    """The cross-rank analysis itself failed (a bug), not one rank's file."""


# --- one rank ------------------------------------------------------------------------------


def summary_cache(cache_dir: str) -> DiskCache:
    """Where summaries live: a DiskCache of their own under the cache root (one entry
    folder per trace file state, holding only the summary view; a few KB each, never
    pruned by the model cache)."""
    return DiskCache(os.path.join(cache_dir, SUMMARY_DIR))


def rank_summary(
    path: str, cache_dir: str | None = None, store: TraceStore | None = None
) -> RankSummary:
    """Summary of one rank's trace file. With `cache_dir`, read from / written to the disk
    cache (key per file state), and a model already cached there (the rank was opened in
    the UI) is reused; otherwise the trace is decoded in memory and not added to the model
    cache (hundreds of ranks would fill it). With `store` (the plugin's), the model comes
    from it: a file it is loading is parsed once, not twice. Raises RankFailed for
    unreadable files."""
    try:
        key = cache_key(file_identity(path))
    except OSError as exc:
        raise RankFailed(describe_error(path, exc)) from None
    summaries = summary_cache(cache_dir) if cache_dir else None
    if summaries is not None:
        data = summaries.load_view(key, SUMMARY_VIEW)
        if data is not None:
            try:
                cached = _SUMMARY_DECODER.decode(data)
                if cached.version == VERSION:
                    return cached
            except (msgspec.DecodeError, msgspec.ValidationError):
                pass  # recompute below
    try:
        on_disk = DiskCache(cache_dir).load(key) if cache_dir and store is None else None
        model = store.wait(path) if store is not None else on_disk or build_model(path)
    except LoadFailed as exc:
        raise RankFailed(exc.error) from None
    except Exception as exc:  # noqa: BLE001 - described like the loader does
        raise RankFailed(describe_error(path, exc)) from None
    summary = summarize_rank(model)
    if summaries is not None:
        try:
            summaries.view_path(key, SUMMARY_VIEW).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("kinetoscope: cannot cache the summary of %s: %s", path, exc)
        else:
            summaries.store_view(key, SUMMARY_VIEW, msgspec.json.encode(summary))
    return summary


# --- a run ---------------------------------------------------------------------------------


def chosen_spans(run: Run, span: str | None = None) -> list[tuple[Worker, SpanFile]]:
    """Each worker's span named `span` (default "1"), else its first span."""
    name = span or "1"
    out = []
    for worker in run.workers:
        if worker.spans:
            out.append((worker, next((s for s in worker.spans if s.name == name), worker.spans[0])))
    return out


def default_executor(rank_count: int) -> Executor:
    """Threads for a few ranks; from PROCESS_POOL_MIN_RANKS on, a small process pool
    (spawned, so it is safe from a multi-threaded server)."""
    if rank_count >= PROCESS_POOL_MIN_RANKS:
        return ProcessPoolExecutor(
            max_workers=POOL_WORKERS, mp_context=multiprocessing.get_context("spawn")
        )
    return ThreadPoolExecutor(max_workers=POOL_WORKERS, thread_name_prefix="kinetoscope-rank")


def summarize_all(
    paths: list[str],
    cache_dir: str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    store: TraceStore | None = None,
) -> tuple[list[RankSummary | None], list[dict[str, Any] | None]]:
    """Summaries of every path (None where it failed) and the per-path errors.

    With `store`, ranks summarized in threads take their models from it, and so do, with
    a process pool, the ranks it already holds (loading or loaded): no file is parsed
    twice. When a process pool breaks (a worker killed, or a script without the
    `if __name__ == "__main__":` guard that spawn needs), the ranks it lost are summarized
    again in threads."""
    own = executor is None
    pool = executor or default_executor(len(paths))
    helper = None
    results: list[RankSummary | None] = [None] * len(paths)
    errors: list[dict[str, Any] | None] = [None] * len(paths)
    lost: list[int] = []
    done = 0

    def collect(futures: dict[Future[RankSummary], int]) -> None:
        nonlocal done
        for future in as_completed(futures):
            i = futures[future]
            try:
                results[i] = future.result()
            except RankFailed as exc:
                errors[i] = exc.error
            except BrokenProcessPool:
                lost.append(i)
                continue
            except Exception as exc:  # noqa: BLE001 - one rank never takes the job down
                log.warning("kinetoscope: rank summary of %s failed: %r", paths[i], exc)
                errors[i] = describe_error(paths[i], exc)
            done += 1
            if progress is not None:
                progress(done, len(paths))

    try:
        futures, helper = _submit_ranks(pool, paths, cache_dir, store)
        collect(futures)
    finally:
        if own:
            pool.shutdown(wait=True)
        if helper is not None:
            helper.shutdown(wait=True)
    if lost:
        log.warning(
            "kinetoscope: the process pool broke; summarizing %d ranks in threads", len(lost)
        )
        with ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="kinetoscope-rank") as threads:
            collect({threads.submit(rank_summary, paths[i], cache_dir): i for i in lost})
    return results, errors


def _submit_ranks(
    pool: Executor, paths: list[str], cache_dir: str | None, store: TraceStore | None
) -> tuple[dict[Future[RankSummary], int], ThreadPoolExecutor | None]:
    """Submit every rank; those whose model the store gives go to threads (the pool's own,
    or a helper's beside a process pool, which the store cannot reach)."""
    in_threads = isinstance(pool, ThreadPoolExecutor)
    from_store = [store is not None and (in_threads or store.holds(p)) for p in paths]
    helper = None if in_threads or not any(from_store) else ThreadPoolExecutor(POOL_WORKERS)
    futures = {
        (helper or pool).submit(rank_summary, path, cache_dir, store)
        if from_store[i]
        else pool.submit(rank_summary, path, cache_dir): i
        for i, path in enumerate(paths)
    }
    return futures, helper


def analyze_run(
    run: Run,
    span: str | None = None,
    cache_dir: str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    store: TraceStore | None = None,
) -> dict[str, Any]:
    """The `distributed` view of a run (what the route and the CLI return)."""
    picks = chosen_spans(run, span)
    paths = [s.path for _, s in picks]
    results, errors = summarize_all(paths, cache_dir, executor, progress, store)
    inputs = []
    failed = []
    for (worker, chosen), summary, error in zip(picks, results, errors):
        if summary is None:
            failed.append({"worker": worker.name, "span": chosen.name, **(error or {})})
            continue
        name_rank = rank_from_name(worker.name)
        if name_rank is None:
            name_rank = rank_from_name(chosen.file)
        inputs.append(RankInput(worker.name, chosen.name, chosen.file, summary, name_rank))
    view = analyze(inputs)
    return {"run": run.name, "span": span or "1", "state": "ready", **view, "errors": failed}


# --- the plugin's background jobs ----------------------------------------------------------


@dataclass
class _Job:
    total: int
    done: int = 0
    result: bytes | None = None
    failure: str | None = None


def _executor_from_env() -> Executor | None:
    spec = os.environ.get(EXECUTOR_ENV)
    if not spec:
        return None
    module, _, attr = spec.partition(":")
    factory = getattr(importlib.import_module(module), attr or "make_executor")
    executor: Executor = factory()
    return executor


class DistributedJobs:
    """Runs `analyze_run` in the background on first request and remembers the answer per
    (run, span, file states); shared bounded pools across jobs."""

    def __init__(
        self,
        cache_dir: str | None,
        executor: Executor | None = None,
        max_jobs: int = 32,
        store: TraceStore | None = None,
    ) -> None:
        self.cache_dir = cache_dir
        self.store = store
        self.executor = executor if executor is not None else _executor_from_env()
        self.max_jobs = max_jobs
        self._jobs: OrderedDict[tuple[Any, ...], _Job] = OrderedDict()
        self._lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None
        self._processes: ProcessPoolExecutor | None = None

    def _pool(self, rank_count: int) -> Executor:
        if self.executor is not None:
            return self.executor
        with self._lock:
            if rank_count >= PROCESS_POOL_MIN_RANKS:
                if self._processes is None:
                    self._processes = ProcessPoolExecutor(
                        max_workers=POOL_WORKERS, mp_context=multiprocessing.get_context("spawn")
                    )
                return self._processes
            if self._threads is None:
                self._threads = ThreadPoolExecutor(
                    max_workers=POOL_WORKERS, thread_name_prefix="kinetoscope-rank"
                )
            return self._threads

    def request(self, run: Run, span: str | None) -> tuple[int, Any]:
        """(200, JSON bytes) when ready, else (202, progress); starts the job if needed.
        Raises DistributedJobError when the analysis failed."""
        picks = chosen_spans(run, span)
        key = (run.name, span or "1", tuple((s.path, s.size, s.mtime_ns) for _, s in picks))
        with self._lock:
            job = self._jobs.get(key)
            start = job is None
            if job is None:
                job = _Job(total=len(picks))
                self._jobs[key] = job
                while len(self._jobs) > self.max_jobs:
                    self._jobs.popitem(last=False)
            else:
                self._jobs.move_to_end(key)
        if start:
            threading.Thread(
                target=self._run, args=(job, run, span), name="kinetoscope-distributed", daemon=True
            ).start()
        if job.result is not None:
            return 200, job.result
        if job.failure is not None:
            raise DistributedJobError(job.failure)
        return 202, {
            "run": run.name,
            "span": span or "1",
            "state": "loading",
            "ranks_done": job.done,
            "ranks_total": job.total,
        }

    def _run(self, job: _Job, run: Run, span: str | None) -> None:
        def progress(done: int, total: int) -> None:
            job.done = done

        pool = self._pool(job.total)
        try:
            view = analyze_run(run, span, self.cache_dir, pool, progress, self.store)
            job.result = msgspec.json.encode(view)
        except Exception as exc:  # noqa: BLE001 - reported to the client, server stays up
            log.warning("kinetoscope: distributed view of %s failed: %r", run.name, exc)
            job.failure = f"distributed view of run {run.name!r} failed: {exception_text(exc)}"
        if isinstance(pool, ProcessPoolExecutor) and _is_broken(pool):
            with self._lock:
                if self._processes is pool:
                    self._processes = None

    def close(self) -> None:
        with self._lock:
            pools = [p for p in (self._threads, self._processes) if p is not None]
            self._threads = self._processes = None
        for pool in pools:
            pool.shutdown(wait=False, cancel_futures=True)


def _is_broken(pool: ProcessPoolExecutor) -> bool:
    """A worker process died (e.g. killed for memory): the pool accepts no more work."""
    return bool(getattr(pool, "_broken", False))
