"""Giving a load's memory back: after every load (the heap's free pages), and at once
after a refused or failed one (its partial columns, batches and decoder state)."""

from __future__ import annotations

import ctypes
import gc
import sys
import traceback
from collections.abc import Callable

from .text_blocks import TraceDecodeError


def return_freed_memory() -> None:
    """Give the heap's free pages back to the system. A load frees as much as it keeps
    (each chunk's columns once joined, decoded batches, scan buffers), and glibc keeps
    freed pages mapped, in the arena of the thread that used them, where the views
    computed next by another thread cannot reuse them: after a 253 MB H100 trace, 200 MB
    of RSS held 112 MB of data. Elsewhere than glibc this does nothing."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc
        return None


_MALLOC_TRIM = _malloc_trim() if sys.platform.startswith("linux") else None


def release_failed_load(exc: BaseException) -> None:
    """Let go of what a load that stops with `exc` built, before the error is reported.

    The traceback keeps every frame the error passed through, and their locals: the
    decoder's batches, open slices and generators (a refused bomb held 3 to 6 GB so until
    the error record let go, and longer where a cycle held it). Those frames have
    finished, so their locals are cleared (the traceback keeps its lines). A refusal for
    memory (`too_large`, MemoryError) is the one case a full collection pays for: what
    the load built may sit in reference cycles, gigabytes of them, that the collector
    would reach only after many more allocations."""
    traceback.clear_frames(exc.__traceback__)
    refused = isinstance(exc, MemoryError) or (
        isinstance(exc, TraceDecodeError) and exc.kind == "too_large"
    )
    if refused:
        gc.collect()
    return_freed_memory()
