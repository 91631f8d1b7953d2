"""A drop-in for ``torch.profiler.tensorboard_trace_handler`` that writes atomically.

torch's handler writes the final file name directly, so a viewer polling the logdir can
read a half-written trace. Here the trace goes to a hidden temp name in the same
directory (same filesystem, so the rename is atomic), is gzipped by streaming into a
second temp name, fsynced, and only then renamed to its final name.

Nothing here imports torch: the handler only calls ``prof.export_chrome_trace``.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from kinetoscope.naming import default_worker_name, format_trace_name, temp_name_for

__all__ = ["TraceWriteError", "tensorboard_trace_handler"]

_COPY_CHUNK = 1024 * 1024


class TraceWriteError(OSError):
    """A trace could not be written; no partial or temp file was left behind."""


class _TraceHandler:
    """The callable given to ``torch.profiler.profile(on_trace_ready=...)``."""

    def __init__(self, dir_name: str, worker_name: str | None, use_gzip: bool) -> None:
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.use_gzip = use_gzip
        self._last_ts = -1
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"tensorboard_trace_handler({self.dir_name!r}, worker_name={self.worker_name!r}, "
            f"use_gzip={self.use_gzip!r})"
        )

    def __call__(self, prof: Any) -> str:
        """Write one trace of ``prof``; returns the final path."""
        # Resolved per call like torch does, so a forked process gets its own pid.
        worker = self.worker_name or default_worker_name()
        folder = self.dir_name
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise TraceWriteError(
                f"cannot create trace directory {folder!r}: {_describe(exc)}"
            ) from exc
        with self._lock:
            final_name = self._next_name(folder, worker)
            final_path = os.path.join(folder, final_name)
            token = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
            json_tmp = os.path.join(folder, temp_name_for(final_name, token + "-json"))
            gz_tmp = os.path.join(folder, temp_name_for(final_name, token + "-gz"))
            try:
                prof.export_chrome_trace(json_tmp)
                if self.use_gzip:
                    _gzip_file(json_tmp, gz_tmp, final_name)
                    ready = gz_tmp
                else:
                    _fsync_file(json_tmp)
                    ready = json_tmp
                os.replace(ready, final_path)
            except BaseException as exc:
                _remove_quietly(json_tmp, gz_tmp)
                if not isinstance(exc, Exception):
                    raise  # KeyboardInterrupt and friends stay what they are
                raise TraceWriteError(
                    f"cannot write profiler trace {final_name!r} in {folder!r}: {_describe(exc)}"
                ) from exc
            _remove_quietly(json_tmp, gz_tmp)
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
    dir_name: str, worker_name: str | None = None, use_gzip: bool = True
) -> Callable[[Any], str]:
    """Like ``torch.profiler.tensorboard_trace_handler``, but atomic.

    Files are named ``{worker}.{epoch_ms}.pt.trace.json[.gz]``; ``worker_name`` defaults
    to ``{hostname}_{pid}``. ``dir_name`` is created on the first trace. Raises
    ``TraceWriteError`` (an ``OSError``) when the trace cannot be written.
    """
    if worker_name:
        format_trace_name(worker_name, 0, use_gzip)  # reject a bad name now, not mid-run
    return _TraceHandler(os.fspath(dir_name), worker_name, use_gzip)


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
