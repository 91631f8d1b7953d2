"""Every worker pool of the store, in one owner.

- trace loads: `LoadPool` threads (a slow load gives its slot up);
- decoding one big trace in worker processes: a small spawned process pool, only when
  `KINETOSCOPE_DECODE_PROCESSES` asks for it (`ingest.build.PARALLEL_MIN_TEXT`);
- per-rank summaries of a distributed run: threads for a few ranks, from
  `PROCESS_POOL_MIN_RANKS` on a small spawned process pool (safe from a multi-threaded
  server), `rank_workers()` of either (`KINETOSCOPE_RANK_WORKERS`, default 2): the bound
  on how many ranks' models are in memory at once, since each worker loads a rank,
  summarises it and drops the model before the next; or the user's
  `concurrent.futures.Executor` (`executor=`, or `$KINETOSCOPE_DISTRIBUTED_EXECUTOR` =
  "module:factory", or a Dask cluster's: `$KINETOSCOPE_DASK_SCHEDULER`, `dask_ranks`;
  docs/distributed.md). A user's executor is never shut down here.

Pools other than the load threads are made on first use and kept; a process pool that
broke (a worker killed for memory) is dropped and made again on the next job. A rank
process's task (a batch of ranks' summaries) runs with the cycle collector off
(`cyclic_gc_paused`).
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .load_pool import LoadPool
from .pool_settings import DASK_ENV, EXECUTOR_ENV, POOL_WORKERS, rank_workers

if TYPE_CHECKING:  # multiprocessing imports on first use: a report of one trace makes none
    from concurrent.futures import ProcessPoolExecutor

PROCESS_POOL_MIN_RANKS = 8  # from this many ranks, summaries are computed in processes

log = logging.getLogger(__name__)


def executor_from_env() -> Executor | None:
    """The user's executor: $KINETOSCOPE_DISTRIBUTED_EXECUTOR's factory, else a Dask
    cluster's at $KINETOSCOPE_DASK_SCHEDULER (connected on first use), else None."""
    spec = os.environ.get(EXECUTOR_ENV)
    scheduler = os.environ.get(DASK_ENV)
    if spec and scheduler:
        log.warning("kinetoscope: %s and %s are both set; using %s", EXECUTOR_ENV, DASK_ENV, spec)
    elif scheduler:
        from .dask_ranks import DaskRanks  # imports this module

        return DaskRanks(scheduler)
    if not spec:
        return None
    module, _, attr = spec.partition(":")
    factory = getattr(importlib.import_module(module), attr or "make_executor")
    executor: Executor = factory()
    return executor


def rank_threads(workers: int = POOL_WORKERS) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kinetoscope-rank")


def spawned_processes(workers: int = POOL_WORKERS) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn, not fork: TensorBoard is multi-threaded, and a forked copy of it could
    # deadlock on a lock some thread held.
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector off through one task of a worker process (a batch of
    ranks' summaries), then back as it was. A batch makes thousands of small containers
    (lists, dicts, args structs) a rank, so the collector runs every few hundred of them
    and walks the young ones, finding no cycle to free: ~3 % of a batch's CPU. Memory is
    freed by reference counts as before; a cycle made meanwhile waits for the next
    collection after the task."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def is_broken(pool: Executor) -> bool:
    """A worker process died (e.g. killed for memory): the pool accepts no more work."""
    processes = sys.modules.get("concurrent.futures.process")  # none made: not imported
    if processes is None or not isinstance(pool, processes.ProcessPoolExecutor):
        return False
    return bool(getattr(pool, "_broken", False))


class WorkerPools:
    def __init__(self, load_workers: int = 2, executor: Executor | None = None) -> None:
        self.loads = LoadPool(load_workers)
        self.executor = executor
        self.rank_workers = rank_workers()  # the rank pools' size, read once
        self._lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None
        self._processes: ProcessPoolExecutor | None = None
        self._decoders: ProcessPoolExecutor | None = None

    def for_ranks(self, rank_count: int) -> Executor:
        """The pool that summarizes a run of `rank_count` ranks."""
        if self.executor is not None:
            return self.executor
        if rank_count >= PROCESS_POOL_MIN_RANKS:
            with self._lock:
                if self._processes is None or is_broken(self._processes):
                    self._processes = spawned_processes(self.rank_workers)
                return self._processes
        return self.threads()

    def threads(self) -> ThreadPoolExecutor:
        """Rank threads: for ranks whose model this process holds (a process pool cannot
        reach it) and for ranks a broken process pool lost."""
        with self._lock:
            if self._threads is None:
                self._threads = rank_threads(self.rank_workers)
            return self._threads

    def decode_processes(self, workers: int) -> ProcessPoolExecutor:
        """The processes that decode a big trace's text slices (`ingest.build`'s
        `decode_pool`): `workers` of them, as the first load that asked for them wanted."""
        with self._lock:
            if self._decoders is None or is_broken(self._decoders):
                self._decoders = spawned_processes(workers)
            return self._decoders

    def close(self, wait: bool = False) -> None:
        self.loads.close()
        with self._lock:
            owned = (self._threads, self._processes, self._decoders)
            pools = [p for p in owned if p is not None]
            self._threads = self._processes = self._decoders = None
        for pool in pools:
            pool.shutdown(wait=wait, cancel_futures=True)
