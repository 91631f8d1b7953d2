"""How many threads scan one file's text: a rule of the loads of both formats (the JSON
scanner's threads, the compiled Perfetto reader's reading thread)."""

from __future__ import annotations

import os
from typing import BinaryIO

from .native_chunk import scanner_enabled

# Scanning threads are used for files of at least this much text. Slices in flight and
# each thread's arena add to the peak of a load (measured: a 65 MB trace peaked at 118 MB
# of RSS with two threads, 87 MB with none, for 0.03 s less); above this size that is a
# small share and the threads save more (259 MB: 1.9 s -> 1.5 s, 2 cores).
THREADS_MIN_TEXT = 128 << 20


def scan_threads(text: int) -> int:
    """Threads that scan the text slices of one file at once: the compiled scanner runs
    without the GIL, so slices scan in parallel while this thread inflates and merges.
    `KINETOSCOPE_SCAN_THREADS` (default: the cores, at most 4, beyond which inflating one
    stream is the limit, for files of `THREADS_MIN_TEXT` or more); 1 (or no scanner)
    reads slice after slice in this thread. `text`: see `text_size`."""
    if not scanner_enabled():
        return 1
    env = os.environ.get("KINETOSCOPE_SCAN_THREADS", "")
    if env.isdigit():
        return int(env)
    return min(4, os.cpu_count() or 1) if text >= THREADS_MIN_TEXT else 1


def text_size(f: BinaryIO, size: int) -> int:
    """About how much text the file `f` (at its start, left there) of `size` bytes holds:
    traces compress about 30x; a plain file's size is its text size. Read from the
    handle the load decodes, not a second open (a request of its own on an object store)."""
    gz = f.read(2) == b"\x1f\x8b"
    f.seek(0)
    return size * 30 if gz else size
