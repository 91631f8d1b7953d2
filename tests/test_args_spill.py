"""The args spill file's writer: small writes at once, large ones in its thread, always in
order; a failed write is raised once, and closing lets the thread go. A file is written in
aligned blocks, past its first ones with O_DIRECT where the file system takes it."""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from kinetoscope.ingest import build
from kinetoscope.ingest.args_spill import INLINE_WRITE_BYTES, ArgsSpill
from kinetoscope.ingest.spill_blocks import BLOCK_BYTES, BlockWriter


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


def _direct_writes_work(folder: Path) -> bool:
    """Whether files in `folder` take O_DIRECT (not tmpfs before Linux 6.6, not macOS)."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag or not sys.platform.startswith("linux"):
        return False
    try:  # an unnamed file (O_TMPFILE): nothing is left in the folder
        os.close(os.open(folder, os.O_TMPFILE | os.O_WRONLY | flag, 0o600))
    except OSError:
        return False
    return True


def test_block_writes_keep_every_byte_in_order(tmp_path: Path) -> None:
    """Pieces of any length, from an offset that is not aligned (its first block buffered),
    then direct: the file is their bytes, nothing more."""
    path = tmp_path / "spill"
    head = b"h" * 1234  # written before, as the spill's first small writes are
    path.write_bytes(head)
    fd = os.open(path, os.O_RDWR)
    try:
        writer = BlockWriter(fd, len(head))
        pieces = [bytes([97 + i % 26]) * (i * 377_777 % (3 * BLOCK_BYTES)) for i in range(20)]
        pieces.append(memoryview(b"end"))
        for piece in pieces:
            writer.write(piece)
        writer.close()
    finally:
        os.close(fd)
    assert path.read_bytes() == head + b"".join(bytes(p) for p in pieces)
    if _direct_writes_work(tmp_path):
        # every whole block after the first skipped the page cache (not the last, partial)
        assert writer.direct_bytes > writer.offset - 2 * BLOCK_BYTES > 0
    else:
        assert writer.direct_bytes == 0


@pytest.mark.parametrize("direct", [False, True])
def test_a_spill_to_a_file_holds_its_small_and_large_writes(tmp_path: Path, direct: bool) -> None:
    with open(tmp_path / "args", "w+b") as sink:
        spill = ArgsSpill(sink)
        spill.direct = direct
        parts = [b"{}" * 7, b"a" * INLINE_WRITE_BYTES, b"b" * (5 * BLOCK_BYTES + 3), b"c"]
        for part in parts:
            spill.write(part)
        spill.close()
        sink.flush()
        assert sink.seek(0, io.SEEK_END) == sum(map(len, parts))
    assert (tmp_path / "args").read_bytes() == b"".join(parts)


def _trace_with_args(path: Path, events: int) -> None:
    rows = [
        {
            "ph": "X", "name": f"op{i % 7}", "cat": "cpu_op", "pid": 1, "tid": 1,
            "ts": i, "dur": 1, "args": {"External id": i, "Input Dims": [[i % 13, 64]] * 9},
        }
        for i in range(events)
    ]  # fmt: skip
    path.write_text(json.dumps({"traceEvents": rows}))


def test_a_load_spilled_direct_reads_the_same_args(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load whose spill is written direct (the threshold lowered to every load) holds
    the same args, byte for byte, as one written through the page cache."""
    path = tmp_path / "trace.json"
    _trace_with_args(path, 100_000)  # ~12 MB of args: past the inline writes, 3 blocks
    buffered = build.build_model(str(path))
    direct_bytes: list[int] = []
    close = BlockWriter.close

    def counted_close(writer: BlockWriter) -> None:
        direct_bytes.append(writer.direct_bytes)
        close(writer)

    monkeypatch.setattr(BlockWriter, "close", counted_close)
    monkeypatch.setattr(build, "DIRECT_MIN_TEXT", 0)
    direct = build.build_model(str(path))
    assert len(direct.args_blob) > 2 * BLOCK_BYTES
    assert len(direct_bytes) == 1  # the spill was written by a block writer
    if _direct_writes_work(Path(tempfile.gettempdir())):
        assert direct_bytes[0] >= BLOCK_BYTES
    assert bytes(direct.args_blob) == bytes(buffered.args_blob)
    assert direct.raw_args(59_999) == buffered.raw_args(59_999)
    assert json.loads(direct.raw_args(12_345))["External id"] == 12_345
