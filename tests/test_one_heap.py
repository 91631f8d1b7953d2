"""The CLI's malloc policy (`ingest.heap.one_heap_for_big_arrays`, set by its entry): a big
array made in a thread comes from the one heap, not a mapping of its own, so a freed one is
used again."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys, threading
if sys.argv[1] == "one-heap":
    from kinetoscope.ingest.heap import one_heap_for_big_arrays
    one_heap_for_big_arrays()
import numpy as np
from kinetoscope.ingest.heap import _MALLINFO2
before = _MALLINFO2().hblks  # blocks the interpreter's start mapped
kept = []
thread = threading.Thread(target=lambda: kept.append(np.ones(64 << 20, dtype=np.uint8)))
thread.start()
thread.join()
print(_MALLINFO2().hblks - before)
"""


def _mapped_blocks(mode: str) -> int:
    env = {"PATH": "/usr/bin:/bin"}  # no MALLOC_* of the caller's
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env, check=True
    )
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_a_big_array_of_a_thread_comes_from_the_one_heap() -> None:
    assert _mapped_blocks("default") >= 1  # glibc maps it on its own
    assert _mapped_blocks("one-heap") == 0


TRIM_PROBE = """
from kinetoscope.ingest import heap
heap.one_heap_for_big_arrays()

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

blocks = [bytearray(b"\\x01" * (64 << 10)) for _ in range(2048)]  # 128 MiB in the heap
kept = blocks[::2]  # every other one freed: 64 MiB free inside the heap, none at its top
del blocks
before = resident()
heap.return_freed_memory()  # a load's or a view's end
after_view = resident()
heap.release_failed_load(ValueError("refused"))
print(before - after_view, after_view - resident(), len(kept))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_one_heap_keeps_freed_pages_for_the_next_view_a_failed_load_gives_them_back() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", TRIM_PROBE], capture_output=True, text=True, env=env, check=True
    )
    kept_by_view, given_back_by_failure, _ = (int(v) for v in done.stdout.split())
    assert kept_by_view < 8 << 20  # nothing trimmed: the next view reuses the pages
    assert given_back_by_failure >= 48 << 20
