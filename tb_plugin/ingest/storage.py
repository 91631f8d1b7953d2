"""Where trace files live: a local path, or a URL of an object store read through fsspec.

The one interface every reader of trace files goes through (discovery, the loader, the
rank summaries in worker processes or on a cluster):

- `is_url(location)`: whether it is a URL (`s3://`, `gs://`, `az://`, `abfs://`,
  `hdfs://`, any fsspec protocol) rather than a local path;
- `stat(location)` -> `FileState` (size, mtime in ns, the store's version tag, regular);
- `open_binary(location)`: a binary file object that reads in blocks (never the whole
  object at once);
- `list_files(folder)`: every file under a folder, recursively, with its state;
- `read_small(location, limit, roots)`: a small side file read whole, bounded;
- `list_small(folder, limit, roots)`: the names in a small local side folder, bounded;
- `kind(location)`: "file", "dir" or None; `parent`, `join`, `absolute`.

A local file under a logdir discovery listed is checked to be inside it each time it is
stat'ed or opened (`containment`: the opened file's own path, not the listing's verdict).
Local paths keep the plain `os` calls (fsspec is never imported for them). URLs go
through `fsspec.core.url_to_fs`, so credentials and endpoints come from each backend's
usual places (environment, config files; e.g. `AWS_ENDPOINT_URL` or
`FSSPEC_S3_ENDPOINT_URL` for an S3-compatible store). A missing backend is a
`StorageError` naming the extra to install (`pip install kinetoscope[s3]`).
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat as stat_mode
import threading
import time
from datetime import datetime
from typing import Any, BinaryIO

import msgspec

from .containment import OUTSIDE_LOGDIR as OUTSIDE_LOGDIR
from .containment import OutsideLogdirError as OutsideLogdirError
from .containment import add_root as add_root
from .containment import contained_stat, list_bounded, open_contained, read_bounded
from .containment import follow_symlinks as follow_symlinks
from .containment import logdir_roots as logdir_roots
from .limits import env_number
from .remote import RemoteFile, call
from .remote import StorageError as StorageError
from .remote import StoreUnreachable as StoreUnreachable

# A URL scheme as fsspec reads one ("s3://", "abfs://", "simplecache::s3://"); a Windows
# drive ("C:\\") has one letter and no "//".
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+(::[A-Za-z][A-Za-z0-9+.\-]+)*://")
_EXTRAS = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "az": "azure",
    "abfs": "azure",
    "abfss": "azure",
    "adl": "azure",
}
# Remote reads: one ranged request per block; the decoder reads 4 MiB at a time, so each
# request brings that block and the next (readahead), and one open file holds ~8 MiB.
REMOTE_BLOCK = 4 << 20
# A listing's states answer `stat` for this long: a status poll is then not a request to
# the store each time; a rescan (every 10 s by default) refreshes them.
_STATE_TTL_S = 10.0
_STATES_MAX = 200_000


class FileState(msgspec.Struct, frozen=True):
    """What identifies a file's content: size and mtime, and for an object store the
    version id or ETag (`etag`, None for local files)."""

    size: int
    mtime_ns: int
    etag: str | None = None
    regular: bool = True


def is_url(location: str) -> bool:
    return bool(_URL.match(location))


def absolute(location: str) -> str:
    """A local path made absolute; a URL without a trailing slash."""
    if is_url(location):
        return location.rstrip("/") if not location.endswith("://") else location
    return os.path.abspath(location)


def join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}" if is_url(folder) else os.path.join(folder, name)


def parent(location: str) -> str:
    if is_url(location):
        return location.rstrip("/").rsplit("/", 1)[0]
    return os.path.dirname(location)


def stat(location: str, wait: bool = True) -> FileState:
    """The file's state (raises OSError, e.g. FileNotFoundError, as `os.stat` does).
    `wait=False` (a loaded model's check on the request path): an object's last known
    state is answered at once, even past its freshness, and refreshed in the background;
    a store that hangs then never holds the request."""
    if not is_url(location):
        st = contained_stat(location)
        return FileState(st.st_size, st.st_mtime_ns, None, stat_mode.S_ISREG(st.st_mode))
    with _states_lock:
        known = _states.get(location)
    if known is not None:
        if time.monotonic() - known[0] < _STATE_TTL_S:
            return known[1]
        if not wait:
            _refresh_later(location)
            return known[1]
    return _fetch_state(location)


def _fetch_state(location: str) -> FileState:
    fs, path = _filesystem(location)
    info = call(location, fs.info, path)
    if info.get("type") == "directory":
        raise IsADirectoryError(f"{location} is a folder")
    state = _state_of(info)
    _remember(location, state)
    return state


_refreshing: set[str] = set()


def _refresh_later(location: str) -> None:
    """One background `stat` per object at a time; a failure keeps the last state."""
    with _states_lock:
        if location in _refreshing:
            return
        _refreshing.add(location)

    def refresh() -> None:
        try:
            _fetch_state(location)
        except Exception:  # noqa: BLE001 - unreachable or gone: said by the next load
            pass
        finally:
            with _states_lock:
                _refreshing.discard(location)

    threading.Thread(target=refresh, name="kinetoscope-state-refresh", daemon=True).start()


def open_binary(location: str) -> BinaryIO:
    """The file opened for reading bytes; remote objects are streamed in blocks."""
    if not is_url(location):
        return open_contained(location)
    fs, path = _filesystem(location)
    # Bounded, tried again where it was after a dropped connection (`remote`).
    return io.BufferedReader(RemoteFile(location, fs, path, REMOTE_BLOCK), 1 << 16)


def read_small(location: str, limit: int, roots: list[str] | None = None) -> bytes:
    """A small file read whole (an Inductor wrapper, a settings file): at most `limit`
    bytes (OSError EFBIG past it), a regular file only; a local one, with `roots`, only
    from inside those folders (OutsideLogdirError otherwise), checked as it is opened."""
    if not is_url(location):
        return read_bounded(location, limit, roots)
    with open_binary(location) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB", location)
    return bytes(data)


def list_small(folder: str, limit: int, roots: list[str] | None = None) -> list[str]:
    """The names in a small local side folder (Inductor's `inductor_code/`), sorted: at most
    `limit` entries read, and with `roots` only a folder inside them, checked as it is
    opened (OutsideLogdirError otherwise). A URL folder is not listed (empty)."""
    if is_url(folder):
        return []
    return list_bounded(folder, limit, roots)


def kind(location: str) -> str | None:
    """ "file", "dir", or None when nothing is there."""
    if not is_url(location):
        if os.path.isfile(location):
            return "file"
        return "dir" if os.path.isdir(location) else None
    fs, path = _filesystem(location)
    try:
        info = call(location, fs.info, path)
    except FileNotFoundError:
        return None
    return "dir" if info.get("type") == "directory" else "file"


def list_files(folder: str, maxdepth: int | None = None) -> list[tuple[str, FileState]]:
    """Every file under a URL folder, recursively (or `maxdepth` levels down: 1 is the
    folder's own files): (path relative to it, with "/", state). One listing request per
    page on object stores; raises StorageError when the folder cannot be listed (a
    missing bucket, refused credentials)."""
    fs, root = _filesystem(folder)
    root = root.rstrip("/")
    found = call(folder, fs.find, root, maxdepth=maxdepth, withdirs=False, detail=True)
    out = []
    now = time.monotonic()
    with _states_lock:
        if len(_states) > _STATES_MAX:
            _states.clear()
        for name, info in found.items():
            rel = name[len(root) + 1 :] if name.startswith(root + "/") else name.rsplit("/", 1)[-1]
            state = _state_of(info)
            _states[join(folder, rel)] = (now, state)
            out.append((rel, state))
    return out


# --- fsspec ---------------------------------------------------------------------------

_states: dict[str, tuple[float, FileState]] = {}
_states_lock = threading.Lock()


def _remember(location: str, state: FileState) -> None:
    with _states_lock:
        if len(_states) > _STATES_MAX:
            _states.clear()
        _states[location] = (time.monotonic(), state)


def _filesystem(location: str) -> tuple[Any, str]:
    protocol = location.split("://", 1)[0].split("::")[-1].lower()
    extra = _EXTRAS.get(protocol)
    hint = (
        f"pip install kinetoscope[{extra}]"
        if extra
        else f"install fsspec and its backend for {protocol}://"
    )
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise StorageError(f"{location}: reading {protocol}:// needs fsspec ({hint})") from None
    try:
        fs, path = url_to_fs(location, **_bounded_options(protocol))
    except ImportError as exc:
        raise StorageError(
            f"{location}: reading {protocol}:// needs a backend that is not installed "
            f"({hint}; {exc})"
        ) from None
    except ValueError as exc:  # an unknown protocol
        raise StorageError(f"{location}: {exc} ({hint})") from None
    if protocol in ("s3", "s3a"):
        fs.retries = 1  # one try in s3fs (default 5) and botocore: `remote.call` retries
    return fs, path


def _bounded_options(protocol: str) -> dict[str, Any]:
    """Each remote request bounded (KINETOSCOPE_STORE_TIMEOUT_S, default 10, for the
    connection and for each read; 2 tries in botocore, 2 in s3fs (set on the instance)), so a
    store that accepts connections and never answers costs a bounded time (botocore's
    defaults and s3fs's add up to minutes)."""
    if protocol not in ("s3", "s3a"):
        return {}
    timeout = env_number("KINETOSCOPE_STORE_TIMEOUT_S", 10)
    config = {
        "connect_timeout": timeout,
        "read_timeout": timeout,
        "retries": {"max_attempts": 1, "mode": "standard"},
    }
    return {"config_kwargs": config}


def _state_of(info: dict[str, Any]) -> FileState:
    """Size, mtime and version tag from an fsspec info dict, whose keys differ by backend
    (s3fs: LastModified, ETag, VersionId; gcsfs: updated, generation; adlfs:
    last_modified, etag; local and others: mtime)."""
    version = _first(info, "VersionId", "version_id", "generation")
    etag = _first(info, "ETag", "etag", "md5Hash")
    tag = f"{version}" if version else (f"{etag}" if etag else None)
    modified = _first(info, "LastModified", "last_modified", "updated", "mtime", "modified")
    return FileState(int(info.get("size") or 0), _ns(modified), tag, True)


def _first(info: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = info.get(key)
        if value not in (None, ""):
            return value
    return None


def _ns(value: Any) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1e9)
    if isinstance(value, (int, float)):
        return int(value * 1e9)
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            return 0
    return 0


def file_identity(path: str, wait: bool = True) -> dict[str, Any]:
    """What keys a file's cached model: its location and state; for an object store also
    its version id or ETag (`etag`), which changes whenever the content does (`wait`: as
    `stat`'s)."""
    state = stat(path, wait)
    identity = {"path": absolute(path), "size": state.size, "mtime_ns": state.mtime_ns}
    if state.etag is not None:
        identity["etag"] = state.etag
    return identity
