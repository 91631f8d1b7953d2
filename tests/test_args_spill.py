"""The args spill file's writer: small writes at once, large ones in its thread, always in
order; a failed write is raised once, and closing lets the thread go."""

from __future__ import annotations

import io
import threading

import pytest
from kinetoscope.ingest.args_spill import INLINE_WRITE_BYTES, ArgsSpill


def test_small_and_large_writes_keep_their_order() -> None:
    sink = io.BytesIO()
    spill = ArgsSpill(sink)
    large = b"L" * INLINE_WRITE_BYTES
    parts = [b"a" * 10, large, b"b" * 20, large, b"c"]
    for part in parts:
        spill.write(part)
    spill.close()
    assert sink.getvalue() == b"".join(parts)


def test_small_writes_start_no_thread() -> None:
    before = {t.name for t in threading.enumerate()}
    spill = ArgsSpill(io.BytesIO())
    spill.write(b"x" * 1000)
    started = {t.name for t in threading.enumerate()} - before
    spill.close()
    assert not any(name.startswith("kinetoscope-args") for name in started)


class FullDisk(io.BytesIO):
    def write(self, data: object) -> int:
        raise OSError(28, "No space left on device")


def test_a_failed_large_write_is_raised_once() -> None:
    spill = ArgsSpill(FullDisk())
    spill.write(b"L" * INLINE_WRITE_BYTES)  # in the thread: raised when waited for
    with pytest.raises(OSError):
        spill.wait()
    spill.close()  # nothing pending: the thread is let go, nothing raised again
