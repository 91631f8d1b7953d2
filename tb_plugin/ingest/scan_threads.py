"""How many threads scan one file's text: a rule of the loads of both formats (the JSON
scanner's threads, the compiled Perfetto reader's reading thread)."""

from __future__ import annotations

import os
from typing import BinaryIO

from .native_chunk import scanner_enabled

# Scanning threads are used for files of at least this much text (`text_size`'s guess).
# They cost ~7 MB of peak RSS (slices in flight, each thread's arena) and CPU: cold
# reports on 2 idle cores, by guessed text, threads 1 -> 2: 10-13 MB 0.162 -> 0.171 s,
# 35-37 MB +0.001..+0.006 s, 29 MB (a V100 tile) 0.243 -> 0.249, 57 MB (V100) 0.331 ->
# 0.314, 69-73 MB -0.004..-0.009, 90 MB 0.345 -> 0.326, 121 MB 0.501 -> 0.469 (259 MB:
# 1.9 s -> 1.5 s). Raised from 48 MB once the one-thread load read its runs in place: on
# 2 shared busy cores (load 4-8), the 57 MB (V100 65 MB) and 73 MB (H100 36 MB) tiles'
# cold reports took 8-27 ms less CPU in one thread (fresh processes, least and median of
# 9-11 interleaved rounds, three times) and mostly less wall; where cores are idle,
# threads may still win a few ms of wall at these sizes (the rounds above).
THREADS_MIN_TEXT = 80 << 20


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
