"""The heap's free pages are given back after a view only where it freed much."""

from __future__ import annotations

import pytest
from kinetoscope.ingest import heap

pytestmark = pytest.mark.skipif(heap._MALLINFO2 is None, reason="glibc with mallinfo2 only")


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _free_every_other_block(total: int) -> list[bytearray]:
    """Allocates `total` bytes in blocks below the mmap threshold and frees every other
    one: the kept ones hold the freed pages inside the heap (no trim of its top gives
    them back). Returns the kept blocks."""
    blocks = [bytearray(b"\x01" * (64 << 10)) for _ in range(total // (64 << 10))]
    kept = blocks[::2]
    del blocks
    return kept


def test_little_freed_is_not_trimmed() -> None:
    heap.return_freed_memory()
    after_trim = heap._free_after_trim
    heap.trim_when_freed(1 << 40)
    assert heap._free_after_trim == after_trim


def test_much_freed_is_given_back() -> None:
    heap.return_freed_memory()
    # the blocks first fill what the heap held free already, then free 64 MB more than it
    kept = _free_every_other_block(2 * (heap._free_bytes() + (64 << 20)))
    assert heap._free_bytes() - heap._free_after_trim >= 32 << 20
    before = _resident_bytes()
    heap.trim_when_freed(32 << 20)
    assert before - _resident_bytes() >= 32 << 20
    assert heap._free_bytes() - heap._free_after_trim < 32 << 20
    assert kept
