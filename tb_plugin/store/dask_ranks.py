"""Per-rank summaries on a Dask cluster: `KINETOSCOPE_DASK_SCHEDULER=tcp://host:8786` (the
plugin and the CLI) or `kinetoscope report --dask ADDRESS`.

`DaskRanks` is a `concurrent.futures.Executor` backed by `distributed.Client(address)
.get_executor()`, so it plugs into the existing executor hook (`pools.WorkerPools`). The
workers read the traces by the paths they are given (a shared file system or an object
store they can reach) and send back only `RankSummary`s. `local` starts a `LocalCluster`
of `rank_workers()` processes of one thread each, closed with this executor.

It connects on the first job, not when the plugin starts: a scheduler that is down, or
Dask not installed, fails that job with a message saying so, and TensorBoard stays up.
Before Dask's client is made, a `tcp://` address is probed (`probe_scheduler`): a Dask
scheduler sends its handshake as soon as a connection opens, a message whose first 8 bytes
are its length. Something else at the address (an HTTP server waiting for a request, a
server answering garbage, whose first bytes Dask would take for a length of exabytes and
try to allocate) is refused within KINETOSCOPE_DASK_CONNECT_TIMEOUT_S, with a message.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from ..ingest.limits import env_number
from .pool_settings import DASK_ENV, rank_workers

LOCAL = "local"
CONNECT_TIMEOUT_S = 30
MAX_HANDSHAKE_BYTES = 1 << 20  # a scheduler's handshake is a few hundred bytes


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
                client = self._client(Client)
            self._closers.insert(0, client.close)
            # pure=False: a path's summary is not shared between jobs by Dask's key
            # (the file may have changed; the disk cache handles reuse).
            self._executor = client.get_executor(pure=False)
            return self._executor

    def _client(self, make: Callable[..., Any]) -> Any:
        timeout = env_number("KINETOSCOPE_DASK_CONNECT_TIMEOUT_S", CONNECT_TIMEOUT_S)
        said = f"the Dask scheduler at {self.address} ({self.asked_by})"
        try:
            probe_scheduler(self.address, timeout)
            return make(self.address, timeout=timeout)
        except NotAScheduler as exc:
            raise DaskUnreachable(f"{said} is not a Dask scheduler: {exc}") from None
        except (OSError, MemoryError, ValueError) as exc:  # refused, timed out, unresolved
            raise DaskUnreachable(f"cannot reach {said}: {str(exc)[:200]}") from None

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


class NotAScheduler(Exception):
    """Something answers at the address, but not as a Dask scheduler."""


def probe_scheduler(address: str, timeout: float) -> None:
    """For a `tcp://host:port` (or bare `host:port`) address: connect and read the first
    8 bytes the server sends, which a Dask scheduler sends at once as its handshake's
    length (a little-endian uint64). Raises OSError when nothing can be reached, and
    NotAScheduler for silence (an HTTP server waits for a request), a closed connection
    or a length no handshake has. Other schemes (tls, inproc, ucx) are left to Dask."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return
    host, _, port = rest.rpartition(":")
    if not port.isdigit():
        return  # Dask says what is wrong with it
    import socket  # a Dask address only: a report without one does not import it

    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
        sock.settimeout(timeout)
        head = b""
        try:
            while len(head) < 8:
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    raise NotAScheduler("it closed the connection without a handshake")
                head += chunk
        except TimeoutError:
            raise NotAScheduler(
                f"it sent no handshake within {timeout:g} s "
                "(KINETOSCOPE_DASK_CONNECT_TIMEOUT_S; an HTTP server?)"
            ) from None
    (length,) = struct.unpack("<Q", head)
    if not 0 < length <= MAX_HANDSHAKE_BYTES:
        raise NotAScheduler(f"its first bytes {head!r} are not a Dask handshake")
