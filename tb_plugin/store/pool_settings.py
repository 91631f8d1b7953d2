"""The pools' settings read from the environment, shared by the pools and the Dask
executor (which the pools create on demand)."""

from __future__ import annotations

from ..ingest.limits import env_number

POOL_WORKERS = 2
RANK_WORKERS_ENV = "KINETOSCOPE_RANK_WORKERS"  # ranks summarised (so in memory) at once
EXECUTOR_ENV = "KINETOSCOPE_DISTRIBUTED_EXECUTOR"  # "module:factory" returning an Executor
DASK_ENV = "KINETOSCOPE_DASK_SCHEDULER"  # a Dask scheduler's address, or "local"


def rank_workers() -> int:
    """How many ranks are summarised at once: $KINETOSCOPE_RANK_WORKERS, default 2."""
    return max(1, int(env_number(RANK_WORKERS_ENV, POOL_WORKERS)))
