"""Requests to an object store: each one bounded, tried again on a network failure with
backoff, and a store that does not answer said once, not waited on again and again.

- `call(location, fn, ...)`: one request through fsspec (info, find, open). A network
  failure (a timeout, a refused or dropped connection, a response cut short: aiohttp's
  ClientPayloadError, botocore's ReadTimeout, ...) is tried again up to
  KINETOSCOPE_STORE_TRIES times in all (default 3), after 0.5 s, then 1 s, ...; then the
  store is `StoreUnreachable`. Each try is bounded by the backend's timeouts
  (KINETOSCOPE_STORE_TIMEOUT_S to connect and per read, one attempt each in botocore and
  s3fs: the retries are these).
- A store found unreachable answers every later request at once with `StoreUnreachable`
  for KINETOSCOPE_UNREACHABLE_RETRY_S (default 10): a command that needs several requests
  of a store that stopped answering waits for one request's tries, not for each
  (at most TRIES × (2 × TIMEOUT) + the backoff: 3 × 20 + 1.5 s with the defaults; a store
  that accepts connections and never answers costs TRIES × TIMEOUT + 1.5 = 31.5 s).
- `RemoteFile`: an object read in blocks; a read that fails on the network reopens the
  object where it was and reads again (same tries, same backoff); an object whose ETag
  changed meanwhile is an error (it is read anew on the next load), never a mix.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import time
from typing import Any

from .limits import env_number

BACKOFF_S = 0.5
# Names of the network failures of backends (botocore, aiohttp, asyncio, urllib3):
# anywhere in the exception's class names or its cause chain.
_NETWORK = re.compile(
    r"Timeout|Connect|Connection|EndpointConnection|ServerDisconnected|Payload|"
    r"IncompleteRead|ProtocolError|ResponseStreaming|ContentLength|Disconnected"
)
_down: dict[str, float] = {}  # store -> time.monotonic() it was found unreachable
_down_lock = threading.Lock()


class StorageError(OSError):
    """A location that cannot be used: its backend is not installed, or the store refused
    (the message says which, and what to do)."""


class StoreUnreachable(StorageError):
    """The store did not answer in time, or the connection broke (after the bounded
    retries): a network problem, not the file's."""


def tries() -> int:
    return max(1, int(env_number("KINETOSCOPE_STORE_TRIES", 3)))


def is_network_error(exc: BaseException) -> bool:
    """A failure of the network, by its class names or its causes' (`raise ... from`); a
    missing object or a refusal never is."""
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return False
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, (TimeoutError, ConnectionError)):
            return True
        if any(_NETWORK.search(k.__name__) for k in type(seen).__mro__):
            return True
        seen = seen.__cause__
    return False


def _store(location: str) -> str:
    """What one outage covers: the protocol and bucket, at the endpoint configured now."""
    scheme, _, rest = location.partition("://")
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("FSSPEC_S3_ENDPOINT_URL")
    return f"{scheme}://{rest.split('/', 1)[0]}@{endpoint or ''}"


def _still_down(location: str, store: str) -> None:
    with _down_lock:
        since = _down.get(store)
    if since is None:
        return
    wait = env_number("KINETOSCOPE_UNREACHABLE_RETRY_S", 10)
    ago = time.monotonic() - since
    if ago < wait:
        raise StoreUnreachable(
            f"{location}: the store is unreachable (it did not answer {ago:.0f} s ago; "
            f"asked again after {wait:g} s, KINETOSCOPE_UNREACHABLE_RETRY_S)"
        )


def call(location: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, a request to the store, tried again on network failures."""
    store = _store(location)
    _still_down(location, store)
    attempts = tries()
    for attempt in range(attempts):
        try:
            result = _call_once(location, fn, *args, **kwargs)
        except StoreUnreachable:
            if attempt + 1 >= attempts:
                with _down_lock:
                    _down[store] = time.monotonic()
                raise
            time.sleep(BACKOFF_S * 2**attempt)
        else:
            if _down:
                with _down_lock:
                    _down.pop(store, None)
            return result
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _call_once(location: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A call to the store: OSErrors (missing, refused) pass as OSErrors, a refusal with
    what to check; network failures become StoreUnreachable; other failures of a backend
    (its own exception types) a StorageError naming the location."""
    try:
        return fn(*args, **kwargs)
    except PermissionError as exc:  # a HEAD request's refusal says only "Forbidden"
        raise PermissionError(
            f"access refused by the store ({exc}); check the credentials it is given "
            "(environment, config files)"
        ) from None
    except StoreUnreachable:
        raise
    except OSError as exc:
        if is_network_error(exc):
            raise StoreUnreachable(f"{location}: the store is unreachable ({exc})") from None
        raise
    except Exception as exc:  # noqa: BLE001 - backends raise their own types
        what = f"{type(exc).__name__}: {str(exc)[:300]}"
        if is_network_error(exc):
            raise StoreUnreachable(f"{location}: the store is unreachable ({what})") from None
        raise StorageError(f"{location}: {what}") from None


class RemoteFile(io.RawIOBase):
    """An object of a store opened for reading, reopened where it was after a network
    failure (`call`'s tries and backoff)."""

    def __init__(self, location: str, fs: Any, path: str, block: int) -> None:
        super().__init__()
        self._location, self._fs, self._path, self._block = location, fs, path, block
        self._pos = 0
        # The object may have been overwritten since it was listed: its cached info (the
        # old ETag) would fail every read ("no longer exists") until a restart.
        fs.invalidate_cache(path)
        self._f: Any = call(location, self._open)
        self._etag = _etag(self._f)
        self.size = int(getattr(self._f, "size", 0) or 0)

    def _open(self) -> Any:
        return self._fs.open(self._path, "rb", block_size=self._block)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        if self._f is not None:
            self._f.seek(self._pos)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        data = call(self._location, self._read, len(buffer))
        n = len(data)
        memoryview(buffer).cast("B")[:n] = data
        self._pos += n
        return n

    def _read(self, n: int) -> bytes:
        if self._f is None:  # dropped after a failed read: opened again where it was
            self._fs.invalidate_cache(self._path)
            f = self._open()
            if _etag(f) != self._etag:
                f.close()
                raise OSError(f"{self._location} changed while it was read; read anew next time")
            f.seek(self._pos)
            self._f = f
        try:
            return bytes(self._f.read(n))
        except BaseException:
            self._drop()
            raise

    def _drop(self) -> None:
        f, self._f = self._f, None
        if f is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close
                f.close()

    def close(self) -> None:
        self._drop()
        super().close()


def _etag(f: Any) -> Any:
    details = getattr(f, "details", None) or {}
    return details.get("ETag") or details.get("etag") or details.get("VersionId")
