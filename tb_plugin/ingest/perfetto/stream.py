"""A Perfetto trace file as runs of whole packets.

The file is a `Trace` message: field 1 (`packet`) repeated, each a tag byte, a varint
length and the packet. Runs of whole packets are themselves valid `Trace` encodings, so
each run is decoded by one protobuf call (in C) instead of one call per packet; peak
memory is a run, never the file. A file cut inside a packet, or whose packet framing is
damaged, keeps the packets before the cut or the damage.

`compressed_packets` (a zlib stream of more packets) are inflated step by step, never
whole: each step's output counts against the file's text limit
(`limits.max_text_bytes`), and one packet larger than `limits.max_event_bytes` is damage.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import BinaryIO

from ..limits import max_event_bytes, max_text_bytes
from ..text_blocks import DecodeReport, ProgressFn, TraceDecodeError, decompressed_blocks
from .rules import native_module

# One inflated block (text_blocks.INFLATE_BLOCK) is about a run: no join of blocks, and
# the run read, the next one inflated and its blocks hold ~3 MB, not ~12 (4 MB runs: the
# H100 OWLv2 trace tiled 7 times peaked ~10 MB higher, for the same CPU).
RUN_BYTES = 1 << 20  # bytes of packets a run holds, about
INFLATE_STEP = 4 << 20  # output of one inflate call of compressed packets
_PACKET_TAG = 0x0A  # field 1, length-delimited


class PacketStreamError(ValueError):
    """The bytes are not a stream of trace packets; `at`: where the bad field starts (the
    bytes before it are whole fields)."""

    def __init__(self, message: str, at: int = 0) -> None:
        super().__init__(message)
        self.at = at


class StopReading(Exception):
    """A limit was reached: the packets read so far are kept, the rest is not read."""


@contextmanager
def kept_before_damage(report: DecodeReport, packets: Callable[[], int]) -> Iterator[None]:
    """Damaged framing or a limit met while the runs are read stop the read and keep
    every packet before it (`partial`, with a warning); damage before the first packet
    (`packets()` read) is a file that is not a Perfetto trace."""
    try:
        yield
    except PacketStreamError as err:
        if packets() == 0:
            raise TraceDecodeError("unreadable", f"not a Perfetto trace: {err}", 0) from None
        report.partial = True
        report.warnings.append(f"the packet stream is damaged ({err}): kept what came before")
    except StopReading as stop:
        report.partial = True
        report.warnings.append(str(stop))


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it; (-1, pos) when `buf` ends inside it."""
    value = shift = 0
    end = len(buf)
    start = pos
    while pos < end:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise PacketStreamError("a varint longer than 10 bytes", start)
    return -1, pos


_FIXED = {1: 8, 5: 4}  # wire type → bytes of a fixed-size field


def whole_packets(buf: bytes | memoryview, start: int = 0) -> tuple[int, int]:
    """How far (from `start`) `buf` holds whole top-level fields, and how many packets.
    Raises `PacketStreamError` (with where) at a field no trace holds. The compiled
    reader's walk where it is built (a field at a time in Python costs ~1 s a million
    packets); this one says what its damage is."""
    native = native_module()
    if native is None:
        return _whole_packets(buf, start)
    pos, count, damaged = native.whole_packets(buf, start, max_event_bytes())
    if not damaged:
        return pos, count
    more_pos, more = _whole_packets(buf, pos)  # raises at the damage
    return more_pos, count + more


def _whole_packets(buf: bytes | memoryview, start: int) -> tuple[int, int]:
    pos, count, end = start, 0, len(buf)
    limit = max_event_bytes()
    while pos < end:
        tag, after_tag = read_varint(buf, pos)
        if tag < 0:
            break
        wire = tag & 7
        if tag >> 3 == 0:
            raise PacketStreamError("field 0 in the packet stream", pos)
        if wire == 2:
            length, body = read_varint(buf, after_tag)
            if length < 0:
                break
            if length > limit:
                raise PacketStreamError(
                    f"a packet of {length} bytes (more than KINETOSCOPE_MAX_EVENT_MB)", pos
                )
            if body + length > end:
                break
            pos = body + length
            count += tag == _PACKET_TAG
        elif wire == 0:
            _, after = read_varint(buf, after_tag)
            if after == end and buf[end - 1] >= 0x80:
                break
            pos = after
        elif wire in _FIXED:
            if after_tag + _FIXED[wire] > end:
                break
            pos = after_tag + _FIXED[wire]
        else:
            raise PacketStreamError(
                f"field {tag >> 3} of wire type {wire} in the packet stream", pos
            )
    return pos, count


def packet_spans(run: bytes | memoryview) -> Iterator[tuple[int, int]]:
    """(start, end) of the body of each packet of a run of whole fields."""
    pos, end = 0, len(run)
    while pos < end:
        tag, pos = read_varint(run, pos)
        wire = tag & 7
        if wire == 2:
            length, pos = read_varint(run, pos)
            if tag == _PACKET_TAG:
                yield pos, pos + length
            pos += length
        elif wire == 0:
            _, pos = read_varint(run, pos)
        else:
            pos += _FIXED[wire]


def packet_runs(
    f: BinaryIO, total: int, report: DecodeReport, progress: ProgressFn | None = None
) -> Iterator[memoryview]:
    """Runs of whole packets of the file (gzip inflated on the way), each about
    `RUN_BYTES` (views: the inflated blocks are joined once per run). A file that ends
    inside a packet is `partial`, with a warning; at damaged framing the packets before it
    come out, then `PacketStreamError`."""
    blocks: list[bytes] = []
    size = 0
    for block in decompressed_blocks(f, total, progress, report, binary=True):
        blocks.append(block)
        size += len(block)
        if size < RUN_BYTES:
            continue
        pending = b"".join(blocks) if len(blocks) > 1 else blocks[0]
        used = yield from _whole(pending)
        blocks = [pending[used:]] if used < len(pending) else []
        size = len(pending) - used
    pending = b"".join(blocks)
    used = yield from _whole(pending)
    if used < len(pending):
        report.partial = True
        report.warnings.append(
            f"the file ends inside a trace packet ({len(pending) - used} bytes of it): "
            "kept the packets before it"
        )


def one_ahead(runs: Iterator[memoryview]) -> Iterator[memoryview]:
    """The runs, each given once the next one is inflated (or the file has ended), and an
    error met inflating the next only after the run before it. Both readers read so: the
    compiled one reads a run while the next inflates, and the file's text counts against
    its limit in the same order either way (a run's compressed packets after the next
    run's text)."""
    try:
        current = next(runs)
    except StopIteration:
        return
    while True:
        try:
            following = next(runs)
        except StopIteration:
            yield current
            return
        except BaseException:
            yield current
            raise
        yield current
        current = following


def _whole(pending: bytes) -> Generator[memoryview, None, int]:
    """Yields the whole packets at the start of `pending`; returns how many bytes."""
    try:
        used, _ = whole_packets(pending)
    except PacketStreamError as err:
        if err.at:
            yield memoryview(pending)[: err.at]
        raise
    if used:
        yield memoryview(pending)[:used]
    return used


def inflated_runs(
    data: bytes, report: DecodeReport, step: Callable[[], None] | None = None
) -> Iterator[memoryview]:
    """The packets of one `compressed_packets` field, inflated `INFLATE_STEP` at a time
    (never whole), in runs of whole packets. The inflated bytes count against the file's
    text limit (`StopReading` past it); a zlib error or damaged framing ends the field
    (`zlib.error` / `PacketStreamError`) after the packets before it."""
    budget = max_text_bytes()
    inflater = zlib.decompressobj()
    pending = b""
    rest = data
    while rest:
        out = inflater.decompress(rest, INFLATE_STEP)
        rest = inflater.unconsumed_tail
        if inflater.eof:
            rest = b""
        report.text_bytes += len(out)
        if step is not None:  # the load's progress: lets its deadline stop a bomb
            step()
        if report.text_bytes > budget:
            raise StopReading(
                f"the decompressed text is larger than {budget >> 20} MiB "
                "(KINETOSCOPE_MAX_TEXT_GB, compressed packets included): kept the events "
                "before that point"
            )
        pending += out
        used = yield from _whole(pending)
        pending = pending[used:]
    if pending:
        raise PacketStreamError(f"compressed packets end inside a packet ({len(pending)} bytes)")
    if not inflater.eof:
        raise PacketStreamError("the zlib stream of compressed packets is cut short")
