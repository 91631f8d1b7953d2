"""The run-level tiers of per-rank summaries: a run with several workers as one job.
Which file per rank, each rank's summary (kept in the run's pack, beside the models), then
the cross-rank analysis (`analysis.distributed`, which only ever sees summaries).

A `Tier` (`rank_job.py`) is one kind of summary: the Distributed view's (`DISTRIBUTED`:
`RankSummary`) and the critical path's (`critical_path/summaries.py`, one per change),
made the same way by `summarize_all`. `rank_summary(path, cache_dir)` /
`file_summary(..., tier)` is the unit of work: a top-level function of plain arguments
returning a small picklable summary, so it runs in a thread, in a `ProcessPoolExecutor`,
or on a cluster (any `concurrent.futures.Executor`; the pools and the executor hook are
`pools.WorkerPools`'s); the default process pool takes `summarize_batch`es instead. The
one analysis module that reads files, through the store's cache and pools: the store
itself knows no analysis.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from ...ingest import storage
from ...ingest.discovery import Run, SpanFile, Worker, chosen_spans
from ...ingest.naming import name_rank
from ...ingest.snapshot import collector_paused
from ...ingest.storage import file_identity
from ...model.trace_model import TraceModel
from ...store.cache import cache_key
from ...store.errors import LoadError, LoadFailed, describe_error
from ...store.pools import PROCESS_POOL_MIN_RANKS, WorkerPools, cyclic_gc_paused
from ...store.run_context import Progress, RunContext
from ..core.summary_cache import SummaryCache, model_of
from ..core.taxonomy import taxonomy_version
from .rank_job import TOGETHER_ROWS, Collected, Outcome, RankFailed, Tier, made_one, made_together
from .summary import ProcessGroup
from .summary_pack import PackFormat, SummaryPack
from .types import DistributedResponse, RankError
from .view import (
    VERSION,
    RankInput,
    RankSummary,
    analyze,
    summarize_rank,
    summarize_ranks,
)

if TYPE_CHECKING:
    from ...store.trace_store import TraceStore

log = logging.getLogger(__name__)

SUMMARY_VIEW = f"distributed-rank-v{VERSION}t{taxonomy_version()}"
SUMMARY_DIR = ".distributed"  # under the cache root; "." keeps the model cache's pruning off it
# Built at import, before threads share it: see model.decoders.decoders_for.
_SUMMARY_DECODER = msgspec.json.Decoder(RankSummary)
_PACKING = PackFormat(RankSummary, "process_groups", ProcessGroup)

S = TypeVar("S")


# --- one rank ------------------------------------------------------------------------------


def summary_cache(cache_dir: str) -> SummaryCache[RankSummary]:
    """Where rank summaries live under the cache root (a few KB each)."""
    return SummaryCache(cache_dir, SUMMARY_DIR, SUMMARY_VIEW, _SUMMARY_DECODER, VERSION)


def summary_pack(cache_dir: str, run: str) -> SummaryPack[RankSummary]:
    """Where run `run`'s rank summaries live (one file)."""
    return SummaryPack(os.path.join(cache_dir, SUMMARY_DIR), run, SUMMARY_VIEW, _PACKING)


DISTRIBUTED = Tier(summarize_rank, summary_cache, summary_pack, summarize_ranks)


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
    return file_summary(path, cache_dir, store, DISTRIBUTED)


def file_summary(path: str, cache_dir: str | None, store: TraceStore | None, tier: Tier[S]) -> S:
    """A tier's summary of one rank's trace file, as `rank_summary`."""
    key = _key_of(path)
    summaries = tier.cache(cache_dir) if cache_dir else None
    cached = summaries.get(key) if summaries is not None else None
    if cached is not None:
        return cached
    summary = _summarized(path, key, cache_dir, tier, store)
    if summaries is not None:
        summaries.put(key, summary, path)
    return summary


def _summarized(
    path: str, key: str, cache_dir: str | None, tier: Tier[S], store: TraceStore | None = None
) -> S:
    """The tier's summary of the file at `path` (in the state `key`), computed."""
    return tier.make(_loaded(path, key, cache_dir, store))


def _loaded(path: str, key: str, cache_dir: str | None, store: TraceStore | None) -> TraceModel:
    """The model of the file at `path`; RankFailed, saying why, where it cannot be read."""
    try:
        return _model_of(path, key, cache_dir, store)
    except LoadFailed as exc:
        raise RankFailed(exc.error) from None
    except Exception as exc:  # noqa: BLE001 - described like the loader does
        raise RankFailed(describe_error(path, exc)) from None


def summarize_batch(
    files: list[tuple[str, str]], cache_dir: str | None, tier: Tier[Any] | None = None
) -> list[Outcome]:
    """The tier's summaries (default the Distributed view's) of (path, key) files, one
    task of a process pool: a task per rank cost as much as a small rank's summary (sent,
    scheduled, answered one by one). Not kept one by one: the run's pack keeps them
    (summary_pack.py). The cycle collector is off meanwhile (`pools.cyclic_gc_paused`)."""
    with cyclic_gc_paused():
        return _batch_summaries(files, cache_dir, tier or DISTRIBUTED)


def _batch_summaries(
    files: list[tuple[str, str]], cache_dir: str | None, tier: Tier[Any]
) -> list[Outcome]:
    out: list[Outcome] = []
    waiting: list[tuple[int, TraceModel]] = []  # small ranks, for `make_many`
    waiting_rows = 0
    for path, key in files:
        try:
            model = _loaded(path, key, cache_dir, None)
        except RankFailed as exc:
            out.append((None, exc.error, None))
            continue
        out.append((None, None, None))
        if tier.make_many is not None and len(model) <= TOGETHER_ROWS:
            waiting.append((len(out) - 1, model))
            waiting_rows += len(model)
            if waiting_rows >= TOGETHER_ROWS:
                made_together(tier, waiting, files, out)
                waiting, waiting_rows = [], 0
        else:
            out[-1] = made_one(tier, model, path)
    made_together(tier, waiting, files, out)
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

    @classmethod
    def of(cls, run: Run, span: str | None, picks: list[tuple[Worker, SpanFile]]) -> Listed:
        """The listing of span `span` of `run`, whose files are `picks` (`chosen_spans`)."""
        return cls(f"{run.path}\0{span or ''}", [(s.size, s.mtime_ns) for _, s in picks])


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


def summarize_all(
    paths: list[str],
    cache_dir: str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    store: TraceStore | None = None,
    listed: Listed | None = None,
    tier: Tier[Any] | None = None,
) -> tuple[list[Any], list[LoadError | None]]:
    """The tier's summaries (default the Distributed view's) of every path (None where it
    failed) and the per-path errors.
    The pool is `executor`, else the store's pools' choice, else that of pools made for
    this call. With `listed` (and a cache), the run's summaries are kept in its pack.

    With `store`, ranks summarized in threads take their models from it, and so do, with
    a process pool, the ranks it already holds (loading or loaded): no file is parsed
    twice. When a process pool breaks (a worker killed, or a script without the
    `if __name__ == "__main__":` guard that spawn needs), the ranks it lost are summarized
    again in threads."""
    tier = tier or DISTRIBUTED
    job = Collected(paths, file_keys(paths, listed), progress, tier)
    pack = tier.pack(cache_dir, listed.name) if cache_dir and listed is not None else None
    packed = pack.read() if pack is not None else {}
    todo = job.take_cached(cache_dir, packed)
    if todo:
        _compute(job, todo, cache_dir, executor, store)
    if pack is not None:
        kept = job.kept()
        if todo or kept.keys() != packed.keys():
            pack.write(kept)
    return job.results, job.errors


def kept_summaries(
    paths: list[str], cache_dir: str | None, listed: Listed | None, tier: Tier[S]
) -> list[S] | None:
    """The tier's summaries of every path when all are kept already (the run's pack, else
    one by one), else None; computes nothing."""
    kept = kept_in_part(paths, cache_dir, listed, tier)
    whole = [s for s in kept if s is not None]
    return whole if len(whole) == len(kept) else None


def kept_in_part(
    paths: list[str], cache_dir: str | None, listed: Listed | None, tier: Tier[S]
) -> list[S | None]:
    """The tier's summary of each path where it is kept already (None where not); computes
    nothing."""
    if not cache_dir or listed is None:
        return [None] * len(paths)
    job = Collected(paths, file_keys(paths, listed), None, tier)
    job.take_cached(cache_dir, tier.pack(cache_dir, listed.name).read())
    return job.results


def _compute(
    job: Collected,
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
                threads.submit(file_summary, job.paths[i], cache_dir, None, job.tier): ([i], False)
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
    job: Collected,
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
    tier = job.tier
    futures: dict[Future[Any], tuple[list[int], bool]] = {
        helper.submit(file_summary, paths[i], cache_dir, store, tier): ([i], False)
        for i in from_store
    }
    taken = set(from_store)
    rest = [i for i in todo if i not in taken]
    if batched and isinstance(pool, ProcessPoolExecutor):
        # a file whose state could not be read goes alone: its worker says why
        futures.update(_submit_batches(pool, pools, job, [i for i in rest if keys[i]], cache_dir))
        rest = [i for i in rest if not keys[i]]
    futures.update(
        {pool.submit(file_summary, paths[i], cache_dir, None, tier): ([i], False) for i in rest}
    )
    return futures


def _submit_batches(
    pool: Executor, pools: WorkerPools, job: Collected, at: list[int], cache_dir: str | None
) -> dict[Future[Any], tuple[list[int], bool]]:
    futures: dict[Future[Any], tuple[list[int], bool]] = {}
    start = 0
    for size in batch_sizes(len(at), pools.rank_workers):
        batch = at[start : start + size]
        start += size
        files = [(job.paths[i], str(job.keys[i])) for i in batch]
        futures[pool.submit(summarize_batch, files, cache_dir, job.tier)] = (batch, True)
    return futures


def batch_sizes(count: int, workers: int) -> list[int]:
    """The sizes of the batches of `count` ranks: a few a worker (BATCHES_PER_WORKER),
    then, for the last few of each worker, each a share of the ranks left (as a guided
    schedule), down to an eighth of the first: the workers end within a small batch of
    each other, where one waited for the other's whole last batch."""
    size = max(1, -(-count // (workers * BATCHES_PER_WORKER)))
    smallest = max(1, size // 8)
    sizes: list[int] = []
    left = count
    while left > 0:
        sizes.append(min(left, size, max(smallest, -(-left // (2 * workers)))))
        left -= sizes[-1]
    return sizes


def analyze_run(context: RunContext) -> DistributedResponse:
    """The `distributed` view of a run (what the route and the CLI return)."""
    run, span = context.run, context.span
    picks = chosen_spans(run, span)
    paths = [s.path for _, s in picks]
    listed = Listed.of(run, span, picks)
    results, errors = summarize_all(
        paths, context.cache_dir, context.executor, context.progress, context.store, listed
    )
    inputs = []
    failed: list[RankError] = []
    for (worker, chosen), summary, error in zip(picks, results, errors):
        if summary is None:
            failed.append(_rank_error(worker.name, chosen.name, error))
            continue
        stated = name_rank(worker.name, chosen.file)
        inputs.append(RankInput(worker.name, chosen.name, chosen.file, summary, stated))
    with collector_paused():  # thousands of plain dicts made, none in a cycle
        view = analyze(inputs)
    return {"run": run.name, "span": span or "1", "state": "ready", **view, "errors": failed}


def _rank_error(worker: str, span: str, error: LoadError | None) -> RankError:
    """A rank whose file could not be summarized, with the file's error (`describe_error`)."""
    out = RankError(worker=worker, span=span)
    if error:
        out["kind"] = str(error.get("kind", "internal"))
        out["message"] = str(error.get("message", ""))
        out["file"] = error.get("file")
        out["offset"] = error.get("offset")
    return out
