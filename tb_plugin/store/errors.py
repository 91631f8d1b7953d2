"""What goes wrong when a trace is loaded, as typed errors and as the per-file error dict a
person can act on (the loader, the rank summaries and the routes all describe it so)."""

from __future__ import annotations

import os
from typing import TypedDict

from ..ingest.decode import TraceDecodeError
from ..ingest.naming import display_name
from ..ingest.storage import OutsideLogdirError, StoreUnreachable


class LoadError(TypedDict):
    """A file that could not be loaded, as a person can act on it: what kind of failure,
    the message (naming the file), the file and the byte it failed at (None: not known)."""

    kind: str
    message: str
    file: str
    offset: int | None


class NotReady(Exception):
    """The file is still loading."""


class LoadTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"loading took longer than {seconds:g} s")
        self.seconds = seconds


class LoadFailed(Exception):
    def __init__(self, error: LoadError) -> None:
        super().__init__(error["message"])
        self.error = error


def store_error(path: str, message: str) -> LoadError:
    """An error of the store, not of the file (closed before it loaded): `message` as is."""
    file = display_name(os.path.basename(path))
    return {"kind": "internal", "message": message, "file": file, "offset": None}


def describe_error(path: str, exc: BaseException) -> LoadError:
    """A per-file error a person can act on: what, which file, where."""
    file = display_name(os.path.basename(path))

    def error(kind: str, message: str, offset: int | None = None) -> LoadError:
        return {"kind": kind, "message": f"{file}: {message}", "file": file, "offset": offset}

    if isinstance(exc, TraceDecodeError):
        where = f" (at byte {exc.offset})" if exc.offset else ""
        return error(exc.kind, f"{exc.message}{where}", exc.offset)
    if isinstance(exc, LoadTimeout):
        return error(
            "timeout",
            f"{exc} (KINETOSCOPE_LOAD_TIMEOUT_S), so it was stopped; "
            "it is retried when the file changes",
        )
    if isinstance(exc, FileNotFoundError):
        return error("missing", "the file was removed")
    if isinstance(exc, StoreUnreachable):
        return error("unreachable", f"the store did not answer ({exc}); tried again when asked for")
    if isinstance(exc, OutsideLogdirError):
        return error("outside_logdir", f"it is {exc.strerror}")
    if isinstance(exc, MemoryError):
        return error("too_large", "not enough memory to load it")
    if isinstance(exc, OSError):
        return error("io", f"cannot read it ({exc.strerror or exc})")
    return error("internal", f"could not be analysed ({exception_text(exc)})")


def exception_text(exc: BaseException) -> str:
    """An exception for an error message, without the data it may hold: the repr of a
    UnicodeDecodeError (and of others) quotes the bytes, i.e. the file's content."""
    if isinstance(exc, UnicodeError):
        return f"{type(exc).__name__}: {getattr(exc, 'reason', '')}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"
