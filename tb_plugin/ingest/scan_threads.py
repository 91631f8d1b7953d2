"""How many threads scan one file's text: a rule of the loads of both formats (the JSON
scanner's threads, the compiled Perfetto reader's reading thread)."""

from __future__ import annotations

import os
from typing import BinaryIO

from .native_chunk import scanner_enabled

# Scanning threads are used for files of at least this much text (`text_size`'s guess).
# They cost ~7 MB of peak RSS (slices in flight, each thread's arena) and some CPU, and
# save more wall than that from here up: cold reports on 2 idle cores, by guessed text,
# threads 1 -> 2: 10-13 MB 0.162 -> 0.171 s, 35-37 MB +0.001..+0.006 s, 29 MB (a V100
# tile) 0.243 -> 0.249, 90 MB 0.345 -> 0.326, 121 MB 0.501 -> 0.469 (259 MB: 1.9 s -> 1.5
# s). With the one-thread load reading its runs in place, fresh processes, 2 x 11
# interleaved rounds, wall least/median: 57 MB (V100 65 MB) 0.300/0.313 -> 0.286/0.302 s,
# 73 MB (H100 36 MB) 0.278/0.282 -> 0.260/0.265 s, for 6-17 ms more CPU. On busy shared
# cores one thread took 8-27 ms less CPU there (and mostly less wall): 80 MB was tried
# and taken back, since idle cores are what a user's report and the bench run on.
THREADS_MIN_TEXT = 48 << 20


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
