"""Giving a load's memory back: after every load (the heap's free pages), after a view that
freed much, and at once after a refused or failed one (its partial columns, batches and
decoder state)."""

from __future__ import annotations

import ctypes
import gc
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from .text_blocks import TraceDecodeError


def return_freed_memory() -> None:
    """Give the heap's free pages back to the system. A load frees as much as it keeps
    (each chunk's columns once joined, decoded batches, scan buffers), and glibc keeps
    freed pages mapped, in the arena of the thread that used them, where the views
    computed next by another thread cannot reuse them: after a 253 MB H100 trace, 200 MB
    of RSS held 112 MB of data. In a process of one heap (`one_heap_for_big_arrays`)
    every thread reuses them, so they stay: given back, they were faulted in and zeroed
    again by the next view (cold report, 253/259 MB: ~50k minor faults -> ~35k, the
    same peak RSS). Elsewhere than glibc this does nothing."""
    if not _one_heap:
        _trim()


def _trim() -> None:
    global _free_after_trim
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
        _free_after_trim = _free_bytes()


def trim_when_freed(min_bytes: int) -> None:
    """`return_freed_memory()` once the heap's free bytes (every arena, mallinfo2's
    count) have grown by `min_bytes` since the last trim; always where glibc has no
    mallinfo2 (before 2.33). A trim after every view gave back 4-30 MB each time, in
    pages the next view faulted in again (H100 253 MB report: ~0.007 s of trims and
    6,000 page faults, the same peak RSS); a view that frees much is still trimmed."""
    if _MALLINFO2 is not None and _free_bytes() - _free_after_trim < min_bytes:
        return
    return_freed_memory()


def _free_bytes() -> int:
    return int(_MALLINFO2().fordblks) if _MALLINFO2 is not None else 0


class _MallInfo2(ctypes.Structure):
    _fields_ = [  # glibc's struct mallinfo2: ten size_t
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _libc_function(name: str) -> Any:
    try:
        return getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):  # not glibc, or an older one
        return None


def _malloc_trim() -> Callable[[int], int] | None:
    return _libc_function("malloc_trim")  # type: ignore[no-any-return]


def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    function = _libc_function("mallinfo2")
    if function is not None:
        function.restype = _MallInfo2
        function.argtypes = []
    return function  # type: ignore[no-any-return]


_ON_LINUX = sys.platform.startswith("linux")
_MALLOC_TRIM = _malloc_trim() if _ON_LINUX else None
_MALLINFO2 = _mallinfo2() if _ON_LINUX and _MALLOC_TRIM is not None else None
_free_after_trim = 0  # the heap's free bytes after the last trim
_one_heap = False  # set by one_heap_for_big_arrays

# glibc's M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX and M_ARENA_MAX (mallopt's
# parameter numbers).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -3, -4, -8
_MALLOPT = _libc_function("mallopt") if _ON_LINUX else None
# Freeing a big column raises glibc's mmap threshold (to 32 MiB at most) and its trim
# threshold with it (to twice that), and `malloc_trim` never shrinks the top of a
# thread's arena: after a load scanned in threads, each scanning thread's arena kept up
# to 64 MiB of freed pages (a refused column bomb, in threads: 17-37 MB more RSS after
# the refusal; pinned: 5-13 MB). Pinned at the 32 MiB the first big load reaches anyway,
# with arena tops above 8 MiB given back at the next big free. Cold reports (best of 7,
# user+sys the same: 0.27, 0.30, 0.95, 0.85 s) cost peak RSS, median: H100 36 MB 63 ->
# 66 MB, V100 65 MB 70 -> 72, H100 253 MB 129 -> 135, V100 259 MB 123 -> 129. Pinning
# them lower (mmap 1 MiB, trim 4 MiB) costs H100 253 MB 0.12 s more of system time.
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 8 << 20


def _pin_malloc_thresholds() -> None:
    if _MALLOPT is not None:
        _MALLOPT(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        _MALLOPT(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


_pin_malloc_thresholds()


def one_heap_for_big_arrays() -> None:
    """glibc's malloc: one arena, and no block mapped on its own (M_ARENA_MAX 1, M_MMAP_MAX
    0), for a process that sets it before any thread starts (the CLI's entry). A view's
    temporaries of a big trace (40-300 MB each, above glibc's largest mmap threshold) were
    each mapped, faulted in and zeroed anew, and a view thread's arena cannot hold them:
    on a 16 GB trace zeroing fresh huge pages was 27 % of the report's CPU. From the one
    heap a freed one is used again until the next trim. Measured (`report --no-cache`):
    4 GB V100 system time 3.99 -> 3.61 s (3 runs each), minor faults -25 %, peak RSS the
    same; 16 GB 26.9-31.2 -> 20.6 s, peak 6.05-6.18 -> 6.32 GB. A value the user set
    (MALLOC_ARENA_MAX, MALLOC_MMAP_MAX_) is kept; elsewhere than glibc this does nothing."""
    global _one_heap
    if _MALLOPT is None:
        return
    if "MALLOC_ARENA_MAX" not in os.environ:
        _MALLOPT(_M_ARENA_MAX, 1)
        _one_heap = True
    if "MALLOC_MMAP_MAX_" not in os.environ:
        _MALLOPT(_M_MMAP_MAX, 0)


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
    _trim()  # in one heap too: a refused bomb's gigabytes are not the next load's size
