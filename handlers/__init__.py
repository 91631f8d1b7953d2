"""A drop-in for ``torch.profiler.tensorboard_trace_handler`` that writes atomically.

torch's handler writes the final file name directly, so a viewer polling the logdir can
read a half-written trace. Here the trace goes to a hidden temp name in the same
directory (same filesystem, so the rename is atomic), is gzipped by streaming into a
second temp name, fsynced, and only then renamed to its final name.

The trace gets one top-level key more than torch writes, ``python_path_prefixes``: the
folders torch's Python tracer strips from stack frames' files, so a viewer can find
``torch/nn/modules/linear.py`` again on the machine that recorded it.

Nothing here imports torch: the handler only calls ``prof.export_chrome_trace``.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import json
import logging
import os
import re
import shutil
import site
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from kinetoscope.ingest.naming import (
    TEMP_SUFFIX,
    default_worker_name,
    format_trace_name,
    temp_name_for,
    temp_writer,
)
from kinetoscope.ingest.schema import PYTHON_PATH_PREFIXES

__all__ = ["TraceWriteError", "remove_stale_temp_files", "tensorboard_trace_handler"]

log = logging.getLogger(__name__)

_COPY_CHUNK = 1024 * 1024
STALE_TEMP_AGE_S = 24 * 3600


class TraceWriteError(OSError):
    """A trace could not be written; no partial or temp file was left behind.

    ``errno`` is the cause's (ENOSPC, EROFS, ...) when one is known."""

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(message)
        self.errno = code  # type: ignore[assignment]
        self.message = message

    def __str__(self) -> str:
        return self.message


class _TraceHandler:
    """The callable given to ``torch.profiler.profile(on_trace_ready=...)``."""

    def __init__(
        self, dir_name: str, worker_name: str | None, use_gzip: bool, strict: bool
    ) -> None:
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.use_gzip = use_gzip
        self.strict = strict
        self._last_ts = -1
        self._lock = threading.Lock()
        self._swept = False

    def __repr__(self) -> str:
        return (
            f"tensorboard_trace_handler({self.dir_name!r}, worker_name={self.worker_name!r}, "
            f"use_gzip={self.use_gzip!r}, strict={self.strict!r})"
        )

    def __call__(self, prof: Any) -> str | None:
        """Write one trace of ``prof``; returns the final path, None if it failed.

        A failure is logged and swallowed unless ``strict``: torch calls this inside
        ``prof.step()``, and an exception escaping there makes torch crash the process
        later (it stops the profiler twice), so raising would cost the training run.
        """
        try:
            return self._write(prof)
        except TraceWriteError as exc:
            if self.strict:
                raise
            log.error("kinetoscope: trace not written, training goes on: %s", exc)
            return None

    def _write(self, prof: Any) -> str:
        # Resolved per call like torch does, so a forked process gets its own pid.
        worker = self.worker_name or default_worker_name()
        folder = self.dir_name
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise TraceWriteError(
                exc.errno, f"cannot create trace directory {folder!r}: {_describe(exc)}"
            ) from exc
        with self._lock:
            if not self._swept:
                self._swept = True
                remove_stale_temp_files(folder)
            final_name = self._next_name(folder, worker)
            final_path = os.path.join(folder, final_name)
            token = f"{_host_token()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            json_tmp = os.path.join(folder, temp_name_for(final_name, token + "-json"))
            gz_tmp = os.path.join(folder, temp_name_for(final_name, token + "-gz"))
            # The profiler writes json_tmp through a temp file of its own.
            temps = (json_tmp, json_tmp + TEMP_SUFFIX, gz_tmp)
            try:
                prof.export_chrome_trace(json_tmp)
                if not os.path.exists(json_tmp):
                    raise _missing_output_error(folder, json_tmp + TEMP_SUFFIX)
                add_python_path_prefixes(json_tmp)
                if self.use_gzip:
                    _gzip_file(json_tmp, gz_tmp, final_name)
                    ready = gz_tmp
                else:
                    _fsync_file(json_tmp)
                    ready = json_tmp
                os.replace(ready, final_path)
            except BaseException as exc:
                written = _largest_size(temps)
                _remove_quietly(*temps)
                if not isinstance(exc, Exception):
                    raise  # KeyboardInterrupt and friends stay what they are
                raise _write_error(exc, final_path, written) from exc
            _remove_quietly(*temps)
            _fsync_dir(folder)
            return final_path

    def _next_name(self, folder: str, worker: str) -> str:
        # Millisecond names collide when two spans end within 1 ms; os.replace would
        # then silently overwrite the earlier trace, so bump the timestamp instead.
        ts = max(int(time.time() * 1000), self._last_ts + 1)
        name = format_trace_name(worker, ts, self.use_gzip)
        while os.path.lexists(os.path.join(folder, name)):
            ts += 1
            name = format_trace_name(worker, ts, self.use_gzip)
        self._last_ts = ts
        return name


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = True, strict: bool = False
) -> Callable[[Any], str | None]:
    """Like ``torch.profiler.tensorboard_trace_handler``, but atomic, and a failed write
    never stops training.

    Files are named ``{worker}.{epoch_ms}.pt.trace.json[.gz]``; ``worker_name`` defaults
    to ``{hostname}_{pid}``. ``dir_name`` is created on the first trace, and temp files
    that killed writers left there are removed. When a trace cannot be written (disk
    full, read-only directory), the error (path, errno, bytes written) is logged on the
    ``kinetoscope.handlers`` logger, temp files are removed, and the call returns None.
    ``strict=True`` raises ``TraceWriteError`` (an ``OSError``) instead; torch 2.x may
    then crash the process when the profiler exits, so catch it only around a profile
    without a ``schedule``.
    """
    if worker_name:
        format_trace_name(worker_name, 0, use_gzip)  # reject a bad name now, not mid-run
    return _TraceHandler(os.fspath(dir_name), worker_name, use_gzip, strict)


def python_path_prefixes() -> list[str]:
    """The folder prefixes torch's Python tracer strips from a frame's file (its
    `python_tracer._prefix_regex`: site-packages, `sys.path`, the user base, torch's own
    folder), longest first as it tries them: a viewer joins them to the relative files of
    the trace's stack frames to find them again."""
    raw = [*site.getsitepackages(), *sys.path, site.getuserbase(), site.getusersitepackages()]
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if isinstance(torch_file, str):
        raw.append(os.path.dirname(os.path.dirname(torch_file)))
    prefixes = sorted({os.path.abspath(p) for p in raw if isinstance(p, str)}, reverse=True)
    return [p + os.sep for p in prefixes]


def add_python_path_prefixes(path: str) -> bool:
    """Adds `python_path_prefixes` as the last top-level key of the exported trace (the
    profiler cannot add it once stopped); False when its end is not a JSON object's."""
    entry = json.dumps(python_path_prefixes())
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(size - 4096, 0))
        tail = f.read()
        close = tail.rfind(b"}")
        before = tail[:close].rstrip()
        if close < 0 or tail[close + 1 :].strip() or not before or before.endswith(b"{"):
            return False
        f.seek(size - len(tail) + close)
        f.truncate()
        f.write(f',\n  "{PYTHON_PATH_PREFIXES}": {entry}\n}}\n'.encode())
    return True


def _host_token() -> str:
    # Part of temp names, so a sweep on a shared filesystem knows whose pids it may check.
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"


def remove_stale_temp_files(folder: str, max_age_s: float = STALE_TEMP_AGE_S) -> list[str]:
    """Remove handler temp files whose writer is gone; returns the names removed.

    A writer on this host is gone when its pid is; a writer elsewhere (a shared
    filesystem) cannot be checked, so its temp files go only once older than max_age_s.
    """
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    removed = []
    host = _host_token()
    for name in names:
        writer = temp_writer(name)
        if writer is None or writer.pid == os.getpid() and writer.host == host:
            continue
        path = os.path.join(folder, name)
        if writer.host == host:
            stale = not _pid_alive(writer.pid)
        else:
            try:
                stale = time.time() - os.stat(path).st_mtime > max_age_s
            except OSError:
                continue
        if stale:
            with contextlib.suppress(OSError):
                os.remove(path)
                removed.append(name)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by another user
    return True


def _missing_output_error(folder: str, profiler_temp: str) -> OSError:
    """The profiler logs its write errors instead of raising; name the likely cause."""
    partial = _largest_size((profiler_temp,))
    try:
        fs = os.statvfs(folder)
    except OSError:
        fs = None
    if fs is not None and fs.f_flag & os.ST_RDONLY:
        code = errno.EROFS
    elif fs is not None and (partial or fs.f_bavail * fs.f_frsize < 1 << 20):
        code = errno.ENOSPC
    elif not os.access(folder, os.W_OK):
        code = errno.EACCES
    else:
        code = errno.EIO
    return OSError(code, f"the profiler wrote no trace file ({os.strerror(code)})")


def _write_error(exc: Exception, final_path: str, written: int) -> TraceWriteError:
    code = exc.errno if isinstance(exc, OSError) else None
    code_text = errno.errorcode.get(code, str(code)) if code is not None else "none"
    return TraceWriteError(
        code,
        f"cannot write profiler trace {final_path!r} (errno {code_text}, {written} bytes "
        f"written before the failure): {_describe(exc)}",
    )


def _largest_size(paths: tuple[str, ...]) -> int:
    sizes = [0]
    for path in paths:
        with contextlib.suppress(OSError):
            sizes.append(os.stat(path).st_size)
    return max(sizes)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _gzip_file(src: str, dst: str, final_name: str) -> None:
    """Stream ``src`` into gzip file ``dst`` and fsync it; memory stays bounded."""
    with open(src, "rb") as fin, open(dst, "wb") as raw_out:
        # filename= sets the name stored in the gzip header to the final, not temp, name.
        with gzip.GzipFile(filename=final_name, mode="wb", compresslevel=6, fileobj=raw_out) as gz:
            shutil.copyfileobj(fin, gz, _COPY_CHUNK)
        raw_out.flush()
        os.fsync(raw_out.fileno())


def _fsync_file(path: str) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _fsync_dir(folder: str) -> None:
    # Makes the rename durable; not possible on every platform, and the file is already
    # complete either way, so failures are ignored.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _remove_quietly(*paths: str) -> None:
    # Best effort: the original error is the one worth reporting.
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)
