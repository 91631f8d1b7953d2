"""A big file's text inflated in a thread of its own (`inflate_ahead`) reads as inflating
it inline does: the same blocks, the same report at the same points, progress told in the
reader's thread, an error raised where it was, and the thread gone once the reader stops."""

from __future__ import annotations

import gzip
import io
import threading

import pytest
from kinetoscope.ingest.inflate_ahead import inflated_ahead
from kinetoscope.ingest.text_blocks import DecodeReport, TraceDecodeError, decompressed_blocks

BLOCK = 1 << 12


def _text(n: int = 3000) -> bytes:
    return b"".join(b'{"ph": "X", "name": "op%d", "ts": %d},\n' % (i % 13, i) for i in range(n))


def _damaged() -> bytes:
    """Two gzip members, the second with damaged data past its first few KB."""
    second = bytearray(gzip.compress(_text(), mtime=0))
    second[len(second) // 2] ^= 0xFF
    return gzip.compress(_text(), mtime=0) + bytes(second)


def _read(data: bytes, ahead: bool) -> tuple[list[bytes], DecodeReport, BaseException | None]:
    report = DecodeReport()
    blocks: list[bytes] = []
    read = inflated_ahead if ahead else _inline
    try:
        for block in read(io.BytesIO(data), len(data), None, report, BLOCK):
            blocks.append(block)
    except TraceDecodeError as error:
        return blocks, report, error
    return blocks, report, None


def _inline(f: io.BytesIO, total: int, progress: None, report: DecodeReport, size: int):  # type: ignore[no-untyped-def]
    return decompressed_blocks(f, total, progress, report, block_size=size)


@pytest.mark.parametrize(
    "data",
    [
        gzip.compress(_text()),
        _text(),
        _damaged(),
        gzip.compress(_text())[:-40],
        gzip.compress(b"abc")[:10] + b"\xff" * 100,  # damaged before any text: an error
    ],
    ids=["gzip", "plain", "damaged", "cut", "unreadable"],
)
def test_the_same_blocks_and_report_as_inflating_inline(data: bytes) -> None:
    ahead_blocks, ahead, ahead_error = _read(data, ahead=True)
    inline_blocks, inline, inline_error = _read(data, ahead=False)
    assert ahead_blocks == inline_blocks
    assert ahead == inline
    assert repr(ahead_error) == repr(inline_error)


def test_progress_is_told_in_the_readers_thread_and_can_stop_the_read() -> None:
    data = gzip.compress(_text(20_000))
    threads: set[int] = set()
    told: list[int] = []

    def progress(done: int, total: int) -> None:
        threads.add(threading.get_ident())
        told.append(done)
        if len(told) == 3:
            raise TimeoutError("the deadline passed")

    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(TimeoutError):
        for _ in inflated_ahead(io.BytesIO(data), len(data), progress, DecodeReport(), BLOCK):
            pass
    assert threads == {threading.get_ident()}
    assert told == sorted(told)
    assert {t.ident for t in threading.enumerate()} == before  # the inflating thread ended


def test_a_reader_that_stops_early_ends_the_thread() -> None:
    data = gzip.compress(_text(20_000))
    before = {t.ident for t in threading.enumerate()}
    blocks = inflated_ahead(io.BytesIO(data), len(data), None, DecodeReport(), BLOCK)
    assert next(blocks)
    assert any(t.name == "kinetoscope-inflate" for t in threading.enumerate())
    blocks.close()
    assert {t.ident for t in threading.enumerate()} == before
