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
import os
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
from typing import TYPE_CHECKING, Any, Optional

import msgspec

from ...ingest import storage
from ...ingest.discovery import chosen_spans
from ...ingest.naming import name_rank
from ...ingest.snapshot import collector_paused
from ...ingest.storage import file_identity
from ...model.trace_model import TraceModel
from ...store.cache import cache_key
from ...store.errors import LoadFailed, describe_error
from ...store.pools import PROCESS_POOL_MIN_RANKS, WorkerPools
from ...store.run_context import RunContext
from ..core.summary_cache import SummaryCache, model_of
from ..core.taxonomy import taxonomy_version
from .summary_pack import SummaryPack
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


def _key_of(path: str) -> str:
    try:
        return cache_key(file_identity(path))
    except OSError as exc:
        raise RankFailed(describe_error(path, exc)) from None


def rank_summary(
    path: str, cache_dir: str | None = None, store: TraceStore | None = None
) -> RankSummary:
    """Summary of one rank's trace file, read from / written to the disk cache under
    `cache_dir` (key per file state). Raises RankFailed for unreadable files."""
    key = _key_of(path)
    summaries = summary_cache(cache_dir) if cache_dir else None
    cached = summaries.get(key) if summaries is not None else None
    if cached is not None:
        return cached
    summary = _summarized(path, key, cache_dir, store)
    if summaries is not None:
        summaries.put(key, summary, path)
    return summary


def _summarized(
    path: str, key: str, cache_dir: str | None, store: TraceStore | None = None
) -> RankSummary:
    """The summary of the file at `path` (in the state `key`), computed."""
    try:
        model = _model_of(path, key, cache_dir, store)
    except LoadFailed as exc:
        raise RankFailed(exc.error) from None
    except Exception as exc:  # noqa: BLE001 - described like the loader does
        raise RankFailed(describe_error(path, exc)) from None
    return summarize_rank(model)


# What a batch answers per rank: its summary, else the error (a loader error dict) and,
# for an unexpected one (a bug), how it was raised, for the caller's log.
Outcome = tuple[Optional[RankSummary], Optional[dict[str, Any]], Optional[str]]


def summarize_batch(files: list[tuple[str, str]], cache_dir: str | None) -> list[Outcome]:
    """The summaries of (path, key) files, one task of a process pool: a task per rank
    cost as much as a small rank's summary (sent, scheduled, answered one by one). Not
    kept one by one: the run's pack keeps them (summary_pack.py)."""
    out: list[Outcome] = []
    for path, key in files:
        try:
            out.append((_summarized(path, key, cache_dir), None, None))
        except RankFailed as exc:
            out.append((None, exc.error, None))
        except Exception as exc:  # noqa: BLE001 - one rank never takes the job down
            out.append((None, describe_error(path, exc), repr(exc)))
    return out


# --- a run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """What the run's listing knows of the files: the run's name for its pack (its folder
    and span) and each file's (size, mtime_ns) when listed, so a warm run keys its files
    without asking their state again. A file that changes after the listing is summarised
    as it is then, kept under its listed state: the next listing sees the new state and
    summarises it again."""

    name: str
    states: list[tuple[int, int]]


def file_keys(paths: list[str], listed: Listed | None) -> list[str | None]:
    """Each file's cache key (None: it cannot be read; its worker says why)."""
    keys: list[str | None] = []
    for i, path in enumerate(paths):
        if listed is not None and not storage.is_url(path):
            size, mtime_ns = listed.states[i]
            keys.append(
                cache_key({"path": storage.absolute(path), "size": size, "mtime_ns": mtime_ns})
            )
            continue
        try:
            keys.append(cache_key(file_identity(path)))
        except OSError:
            keys.append(None)
    return keys


class _Collected:
    """Per-path results of one job as they come in."""

    def __init__(self, paths: list[str], keys: list[str | None], progress: Progress | None) -> None:
        self.paths = paths
        self.keys = keys
        self.progress = progress
        self.results: list[RankSummary | None] = [None] * len(paths)
        self.errors: list[dict[str, Any] | None] = [None] * len(paths)
        self.lost: list[int] = []
        self.done = 0

    def take_cached(self, cache_dir: str | None, packed: dict[str, RankSummary]) -> list[int]:
        """Takes the summaries already kept (the run's pack, else one by one), here in
        the caller: a warm run of 2,048 ranks then starts no pool (spawning it and sending
        2,048 summaries back through it took most of a warm run). Returns the indices
        left to compute."""
        summaries = summary_cache(cache_dir) if cache_dir else None
        todo = []
        for i, key in enumerate(self.keys):
            found = packed.get(key) if key is not None else None
            if found is None and summaries is not None and key is not None:
                found = summaries.get(key)
            if found is None:
                todo.append(i)
                continue
            self.results[i] = found
            self.done += 1
        if self.done and self.progress is not None:
            self.progress(self.done, len(self.paths))
        return todo

    def kept(self) -> dict[str, RankSummary]:
        """The summaries by file key, for the run's pack."""
        return {
            key: summary
            for key, summary in zip(self.keys, self.results)
            if key is not None and summary is not None
        }

    def collect(self, futures: dict[Future[Any], tuple[list[int], bool]]) -> None:
        """Takes each future's answer: one rank's summary, or (batched) its ranks'
        outcomes."""
        for future in as_completed(futures):
            at, batched = futures[future]
            try:
                answer = future.result()
            except RankFailed as exc:
                self._take(at[0], (None, exc.error, None))
            except BrokenProcessPool:
                self.lost += at
                continue
            except Exception as exc:  # noqa: BLE001 - one rank never takes the job down
                for i in at:
                    self._take(i, (None, describe_error(self.paths[i], exc), repr(exc)))
            else:
                for i, outcome in zip(at, answer if batched else [(answer, None, None)]):
                    self._take(i, outcome)
            if self.progress is not None:
                self.progress(self.done, len(self.paths))

    def _take(self, i: int, outcome: Outcome) -> None:
        summary, error, unexpected = outcome
        if unexpected is not None:
            log.warning("kinetoscope: rank summary of %s failed: %s", self.paths[i], unexpected)
        self.results[i] = summary
        self.errors[i] = error
        self.done += 1


def summarize_all(
    paths: list[str],
    cache_dir: str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    store: TraceStore | None = None,
    listed: Listed | None = None,
) -> tuple[list[RankSummary | None], list[dict[str, Any] | None]]:
    """Summaries of every path (None where it failed) and the per-path errors. The pool
    is `executor`, else the store's pools' choice, else that of pools made for this call.
    With `listed` (and a cache), the run's summaries are kept in its pack.

    With `store`, ranks summarized in threads take their models from it, and so do, with
    a process pool, the ranks it already holds (loading or loaded): no file is parsed
    twice. When a process pool breaks (a worker killed, or a script without the
    `if __name__ == "__main__":` guard that spawn needs), the ranks it lost are summarized
    again in threads."""
    job = _Collected(paths, file_keys(paths, listed), progress)
    pack = None
    if cache_dir and listed is not None:
        pack = SummaryPack(os.path.join(cache_dir, SUMMARY_DIR), listed.name, SUMMARY_VIEW)
    packed = pack.read() if pack is not None else {}
    todo = job.take_cached(cache_dir, packed)
    if todo:
        _compute(job, todo, cache_dir, executor, store)
    if pack is not None:
        kept = job.kept()
        if todo or kept.keys() != packed.keys():
            pack.write(kept)
    return job.results, job.errors


def _compute(
    job: _Collected,
    todo: list[int],
    cache_dir: str | None,
    executor: Executor | None,
    store: TraceStore | None,
) -> None:
    pools = store.pools if store is not None else WorkerPools(load_workers=0)
    try:
        pool = executor or pools.for_ranks(len(todo))
        own = executor is None and pools.executor is None  # batched: our processes
        job.collect(_submit_ranks(pool, pools, job, todo, cache_dir, store, own))
        if job.lost:
            log.warning(
                "kinetoscope: the process pool broke; summarizing %d ranks in threads",
                len(job.lost),
            )
            threads = pools.threads()
            lost = {
                threads.submit(rank_summary, job.paths[i], cache_dir): ([i], False)
                for i in job.lost
            }
            job.collect(lost)
    finally:
        if store is None:
            pools.close(wait=True)


BATCHES_PER_WORKER = 8  # a few per worker, so that they finish together


def _submit_ranks(
    pool: Executor,
    pools: WorkerPools,
    job: _Collected,
    todo: list[int],
    cache_dir: str | None,
    store: TraceStore | None,
    batched: bool,
) -> dict[Future[Any], tuple[list[int], bool]]:
    """Submit every rank; those whose model the store gives go to threads (the pool
    itself when it is threads, else the pools' rank threads: a process pool cannot reach
    the store). The store gives the ranks it holds, and every rank of a small run summarised
    in threads; a big run's other ranks are loaded, summarised and dropped, so the store's
    models never grow with the run (at most the pool's workers' models are in memory).
    With `batched` (the pools' own processes), the others go in a few batches per worker."""
    paths, keys = job.paths, job.keys
    in_threads = isinstance(pool, ThreadPoolExecutor)
    few = in_threads and len(todo) < PROCESS_POOL_MIN_RANKS
    from_store = [i for i in todo if store is not None and (few or store.holds(paths[i], keys[i]))]
    helper = pool if in_threads or not from_store else pools.threads()
    futures: dict[Future[Any], tuple[list[int], bool]] = {
        helper.submit(rank_summary, paths[i], cache_dir, store): ([i], False) for i in from_store
    }
    taken = set(from_store)
    rest = [i for i in todo if i not in taken]
    if batched and isinstance(pool, ProcessPoolExecutor):
        # a file whose state could not be read goes alone: its worker says why
        futures.update(_submit_batches(pool, pools, job, [i for i in rest if keys[i]], cache_dir))
        rest = [i for i in rest if not keys[i]]
    futures.update({pool.submit(rank_summary, paths[i], cache_dir): ([i], False) for i in rest})
    return futures


def _submit_batches(
    pool: Executor, pools: WorkerPools, job: _Collected, at: list[int], cache_dir: str | None
) -> dict[Future[Any], tuple[list[int], bool]]:
    size = max(1, -(-len(at) // (pools.rank_workers * BATCHES_PER_WORKER)))
    futures: dict[Future[Any], tuple[list[int], bool]] = {}
    for start in range(0, len(at), size):
        batch = at[start : start + size]
        files = [(job.paths[i], str(job.keys[i])) for i in batch]
        futures[pool.submit(summarize_batch, files, cache_dir)] = (batch, True)
    return futures


def analyze_run(context: RunContext) -> dict[str, Any]:
    """The `distributed` view of a run (what the route and the CLI return)."""
    run, span = context.run, context.span
    picks = chosen_spans(run, span)
    paths = [s.path for _, s in picks]
    listed = Listed(f"{run.path}\0{span or ''}", [(s.size, s.mtime_ns) for _, s in picks])
    results, errors = summarize_all(
        paths, context.cache_dir, context.executor, context.progress, context.store, listed
    )
    inputs = []
    failed = []
    for (worker, chosen), summary, error in zip(picks, results, errors):
        if summary is None:
            failed.append({"worker": worker.name, "span": chosen.name, **(error or {})})
            continue
        stated = name_rank(worker.name, chosen.file)
        inputs.append(RankInput(worker.name, chosen.name, chosen.file, summary, stated))
    with collector_paused():  # thousands of plain dicts made, none in a cycle
        view = analyze(inputs)
    return {"run": run.name, "span": span or "1", "state": "ready", **view, "errors": failed}
