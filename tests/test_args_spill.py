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


class SlowDisk(io.BytesIO):
    """A sink whose writes wait until `go` is set (a disk that throttles its writers)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def write(self, data: object) -> int:
        self.go.wait(timeout=30)
        return super().write(data)  # type: ignore[arg-type]


def test_writes_queue_behind_a_slow_disk_up_to_their_bound() -> None:
    sink = SlowDisk()
    spill = ArgsSpill(sink)
    sink.go.set()
    spill.write(b"s" * (INLINE_WRITE_BYTES - 1))  # a small load's args: at once
    sink.go.clear()
    parts = [bytes([65 + i]) * (INLINE_WRITE_BYTES // 2) for i in range(8)]
    for part in parts:  # 4 MiB in all, under the bound: none waits for the disk
        spill.write(part)
    assert len(sink.getvalue()) == INLINE_WRITE_BYTES - 1
    sink.go.set()
    spill.close()
    assert sink.getvalue() == b"s" * (INLINE_WRITE_BYTES - 1) + b"".join(parts)
