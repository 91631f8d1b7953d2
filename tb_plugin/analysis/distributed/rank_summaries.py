"""The run-level tier of per-rank summaries: a run with several workers as one distributed
job. Which file per rank, each rank's summary (cached on disk beside the models), then the
cross-rank analysis (`analysis.distributed`, which only ever sees summaries).

`rank_summary(path, cache_dir)` is the unit of work: a top-level function of plain
arguments returning a small picklable `RankSummary`, so it runs in a thread, in a
`ProcessPoolExecutor`, or on a cluster (any `concurrent.futures.Executor`; the pools and
the executor hook are `pools.WorkerPools`'s). The one analysis module that reads files,
through the store's cache and pools: the store itself knows no analysis.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from ...ingest.discovery import chosen_spans
from ...ingest.naming import name_rank
from ...ingest.storage import file_identity
from ...model.trace_model import TraceModel
from ...store.cache import cache_key
from ...store.errors import LoadFailed, describe_error
from ...store.pools import PROCESS_POOL_MIN_RANKS, WorkerPools
from ...store.run_context import RunContext
from ..core.summary_cache import SummaryCache, model_of
from ..core.taxonomy import taxonomy_version
from .view import (
    VERSION,
    RankInput,
    RankSummary,
    analyze,
    summarize_rank,
)

if TYPE_CHECKING:
    from ...store.trace_store import TraceStore

log = logging.getLogger(__name__)

SUMMARY_VIEW = f"distributed-rank-v{VERSION}t{taxonomy_version()}"
SUMMARY_DIR = ".distributed"  # under the cache root; "." keeps the model cache's pruning off it
# Built at import, before threads share it: see model.decoders_for.
_SUMMARY_DECODER = msgspec.json.Decoder(RankSummary)

Progress = Callable[[int, int], None]
S = TypeVar("S")


class RankFailed(Exception):
    """A rank's file could not be summarized; `error` is a loader error dict (picklable)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error)
        self.error = error


# --- one rank ------------------------------------------------------------------------------


def summary_cache(cache_dir: str) -> SummaryCache[RankSummary]:
    """Where rank summaries live under the cache root (a few KB each)."""
    return SummaryCache(cache_dir, SUMMARY_DIR, SUMMARY_VIEW, _SUMMARY_DECODER, VERSION)


def _model_of(path: str, key: str, cache_dir: str | None, store: TraceStore | None) -> TraceModel:
    """With `store` (the plugin's), the model comes from it: a file it is loading is parsed
    once, not twice. Else as `summary_cache.model_of`."""
    if store is not None:
        return store.wait(path)
    return model_of(path, key, cache_dir)


@dataclass(frozen=True)
class Tier(Generic[S]):
    """One kind of per-rank summary: made from a rank's model by `make`, kept in the
    summary cache `cache(cache_dir)`. Both picklable (top-level functions or partials of
    them), so a process pool or a cluster can run them."""

    make: Callable[[TraceModel], S]
    cache: Callable[[str], SummaryCache[S]]


DISTRIBUTED = Tier(summarize_rank, summary_cache)


def rank_summary(
    path: str, cache_dir: str | None = None, store: TraceStore | None = None
) -> RankSummary:
    """Summary of one rank's trace file, read from / written to the disk cache under
    `cache_dir` (key per file state). Raises RankFailed for unreadable files."""
    return file_summary(path, cache_dir, store, DISTRIBUTED)


def file_summary(path: str, cache_dir: str | None, store: TraceStore | None, tier: Tier[S]) -> S:
    """A tier's summary of one rank's trace file, as `rank_summary`."""
    try:
        key = cache_key(file_identity(path))
    except OSError as exc:
        raise RankFailed(describe_error(path, exc)) from None
    summaries = tier.cache(cache_dir) if cache_dir else None
    cached = summaries.get(key) if summaries is not None else None
    if cached is not None:
        return cached
    try:
        model = _model_of(path, key, cache_dir, store)
    except LoadFailed as exc:
        raise RankFailed(exc.error) from None
    except Exception as exc:  # noqa: BLE001 - described like the loader does
        raise RankFailed(describe_error(path, exc)) from None
    summary = tier.make(model)
    if summaries is not None:
        summaries.put(key, summary, path)
    return summary


# --- a run ---------------------------------------------------------------------------------


class _Collected:
    """Per-path results of one job as they come in."""

    def __init__(self, paths: list[str], progress: Progress | None, tier: Tier[Any]) -> None:
        self.paths = paths
        self.progress = progress
        self.tier = tier
        self.results: list[Any] = [None] * len(paths)
        self.errors: list[dict[str, Any] | None] = [None] * len(paths)
        self.lost: list[int] = []
        self.done = 0

    def take_cached(self, cache_dir: str | None) -> list[int]:
        """Reads the summaries already on disk here, in the caller: a warm run of 2,048
        ranks then starts no pool (spawning it and sending 2,048 summaries back through it
        took most of a warm run). Returns the indices left to compute."""
        summaries = self.tier.cache(cache_dir) if cache_dir else None
        todo = []
        for i, path in enumerate(self.paths):
            try:
                key = cache_key(file_identity(path))
            except OSError:
                key = None  # the worker says why
            found = summaries.get(key) if summaries is not None and key is not None else None
            if found is None:
                todo.append(i)
                continue
            self.results[i] = found
            self.done += 1
        if self.done and self.progress is not None:
            self.progress(self.done, len(self.paths))
        return todo

    def collect(self, futures: dict[Future[Any], int]) -> None:
        for future in as_completed(futures):
            i = futures[future]
            try:
                self.results[i] = future.result()
            except RankFailed as exc:
                self.errors[i] = exc.error
            except BrokenProcessPool:
                self.lost.append(i)
                continue
            except Exception as exc:  # noqa: BLE001 - one rank never takes the job down
                log.warning("kinetoscope: rank summary of %s failed: %r", self.paths[i], exc)
                self.errors[i] = describe_error(self.paths[i], exc)
            self.done += 1
            if self.progress is not None:
                self.progress(self.done, len(self.paths))


def summarize_all(
    paths: list[str],
    cache_dir: str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    store: TraceStore | None = None,
    tier: Tier[Any] = DISTRIBUTED,
) -> tuple[list[Any], list[dict[str, Any] | None]]:
    """Summaries of every path (None where it failed) and the per-path errors. The pool
    is `executor`, else the store's pools' choice, else that of pools made for this call.

    With `store`, ranks summarized in threads take their models from it, and so do, with
    a process pool, the ranks it already holds (loading or loaded): no file is parsed
    twice. When a process pool breaks (a worker killed, or a script without the
    `if __name__ == "__main__":` guard that spawn needs), the ranks it lost are summarized
    again in threads."""
    job = _Collected(paths, progress, tier)
    todo = job.take_cached(cache_dir)
    if not todo:
        return job.results, job.errors
    pools = store.pools if store is not None else WorkerPools(load_workers=0)
    try:
        pool = executor or pools.for_ranks(len(todo))
        job.collect(_submit_ranks(pool, pools, paths, todo, cache_dir, store, tier))
        if job.lost:
            log.warning(
                "kinetoscope: the process pool broke; summarizing %d ranks in threads",
                len(job.lost),
            )
            threads = pools.threads()
            lost = {
                threads.submit(file_summary, paths[i], cache_dir, None, tier): i for i in job.lost
            }
            job.collect(lost)
    finally:
        if store is None:
            pools.close(wait=True)
    return job.results, job.errors


def _submit_ranks(
    pool: Executor,
    pools: WorkerPools,
    paths: list[str],
    todo: list[int],
    cache_dir: str | None,
    store: TraceStore | None,
    tier: Tier[Any],
) -> dict[Future[Any], int]:
    """Submit every rank; those whose model the store gives go to threads (the pool
    itself when it is threads, else the pools' rank threads: a process pool cannot reach
    the store). The store gives the ranks it holds, and every rank of a small run summarised
    in threads; a big run's other ranks are loaded, summarised and dropped, so the store's
    models never grow with the run (at most the pool's workers' models are in memory)."""
    in_threads = isinstance(pool, ThreadPoolExecutor)
    few = in_threads and len(todo) < PROCESS_POOL_MIN_RANKS
    from_store = {i: store is not None and (few or store.holds(paths[i])) for i in todo}
    helper = pool if in_threads or not any(from_store.values()) else pools.threads()
    return {
        helper.submit(file_summary, paths[i], cache_dir, store, tier)
        if from_store[i]
        else pool.submit(file_summary, paths[i], cache_dir, None, tier): i
        for i in todo
    }


def analyze_run(context: RunContext) -> dict[str, Any]:
    """The `distributed` view of a run (what the route and the CLI return)."""
    run, span = context.run, context.span
    picks = chosen_spans(run, span)
    paths = [s.path for _, s in picks]
    results, errors = summarize_all(
        paths, context.cache_dir, context.executor, context.progress, context.store
    )
    inputs = []
    failed = []
    for (worker, chosen), summary, error in zip(picks, results, errors):
        if summary is None:
            failed.append({"worker": worker.name, "span": chosen.name, **(error or {})})
            continue
        stated = name_rank(worker.name, chosen.file)
        inputs.append(RankInput(worker.name, chosen.name, chosen.file, summary, stated))
    view = analyze(inputs)
    return {"run": run.name, "span": span or "1", "state": "ready", **view, "errors": failed}
