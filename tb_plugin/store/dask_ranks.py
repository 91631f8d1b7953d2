"""Per-rank summaries on a Dask cluster: `KINETOSCOPE_DASK_SCHEDULER=tcp://host:8786` (the
plugin and the CLI) or `kinetoscope report --dask ADDRESS`.

`DaskRanks` is a `concurrent.futures.Executor` backed by `distributed.Client(address)
.get_executor()`, so it plugs into the existing executor hook (`pools.WorkerPools`). The
workers read the traces by the paths they are given (a shared file system or an object
store they can reach) and send back only `RankSummary`s. `local` starts a `LocalCluster`
of `rank_workers()` processes of one thread each, closed with this executor.

It connects on the first job, not when the plugin starts: a scheduler that is down, or
Dask not installed, fails that job with a message saying so, and TensorBoard stays up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from ..ingest.limits import env_number
from .pool_settings import DASK_ENV, rank_workers

LOCAL = "local"
CONNECT_TIMEOUT_S = 30


class DaskUnavailable(RuntimeError):
    """Dask was asked for but `distributed` cannot be imported."""


class DaskUnreachable(DaskUnavailable):
    """The scheduler did not answer within KINETOSCOPE_DASK_CONNECT_TIMEOUT_S."""


def require_distributed(asked_by: str) -> None:
    """Raise DaskUnavailable naming the extra to install when `distributed` is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise DaskUnavailable(
            f"{asked_by} needs Dask, which is not installed: pip install 'kinetoscope[dask]' "
            f"({exc})"
        ) from None


class DaskRanks(Executor):
    """An executor on the Dask cluster at `address` (or `local`), connected on first use."""

    def __init__(self, address: str, asked_by: str = DASK_ENV) -> None:
        self.address = address
        self.asked_by = asked_by
        self._lock = threading.Lock()
        self._executor: Executor | None = None
        self._closers: list[Callable[[], Any]] = []

    def _connect(self) -> Executor:
        with self._lock:
            if self._executor is not None:
                return self._executor
            require_distributed(f"{self.asked_by}={self.address}")
            from distributed import Client, LocalCluster

            if self.address == LOCAL:
                # Process workers of one thread each: a rank's decode holds the GIL.
                cluster = LocalCluster(
                    n_workers=rank_workers(),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                self._closers.append(cluster.close)
                client = Client(cluster)
            else:
                timeout = env_number("KINETOSCOPE_DASK_CONNECT_TIMEOUT_S", CONNECT_TIMEOUT_S)
                try:
                    client = Client(self.address, timeout=timeout)
                except OSError as exc:  # refused, timed out, a name that does not resolve
                    raise DaskUnreachable(
                        f"cannot reach the Dask scheduler at {self.address} ({self.asked_by}): "
                        f"{str(exc)[:200]}"
                    ) from None
            self._closers.insert(0, client.close)
            # pure=False: a path's summary is not shared between jobs by Dask's key
            # (the file may have changed; the disk cache handles reuse).
            self._executor = client.get_executor(pure=False)
            return self._executor

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = self._connect().submit(fn, *args, **kwargs)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
            closers, self._closers = self._closers, []
        if executor is not None:
            executor.shutdown(wait=wait and not cancel_futures)  # Dask's: no cancel_futures
        for close in closers:  # the client first, then a local cluster
            close()
