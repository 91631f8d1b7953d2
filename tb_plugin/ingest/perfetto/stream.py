"""A Perfetto trace file as runs of whole packets.

The file is a `Trace` message: field 1 (`packet`) repeated, each a tag byte, a varint
length and the packet. Runs of whole packets are themselves valid `Trace` encodings, so
each run is decoded by one protobuf call (in C) instead of one call per packet; peak
memory is a run, never the file. A file cut inside a packet keeps the packets before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from ..text_blocks import DecodeReport, ProgressFn, decompressed_blocks

RUN_BYTES = 4 << 20  # bytes of packets decoded per protobuf call
_PACKET_TAG = 0x0A  # field 1, length-delimited
_MAX_PACKET = 256 << 20  # a bigger length is damage, not a packet


class PacketStreamError(ValueError):
    """The bytes are not a stream of trace packets."""


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it; (-1, pos) when `buf` ends inside it."""
    value = shift = 0
    end = len(buf)
    while pos < end:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise PacketStreamError("a varint longer than 10 bytes")
    return -1, pos


def whole_packets(buf: bytes, start: int = 0) -> tuple[int, int]:
    """How far (from `start`) `buf` holds whole top-level fields, and how many packets."""
    pos, count, end = start, 0, len(buf)
    while pos < end:
        tag, after_tag = read_varint(buf, pos)
        if tag < 0:
            break
        wire = tag & 7
        if wire == 2:
            length, body = read_varint(buf, after_tag)
            if length < 0:
                break
            if length > _MAX_PACKET:
                raise PacketStreamError(f"a packet of {length} bytes")
            if body + length > end:
                break
            pos = body + length
            count += tag == _PACKET_TAG
        elif wire == 0:
            _, after = read_varint(buf, after_tag)
            if after == end and buf[end - 1] >= 0x80:
                break
            pos = after
        else:
            raise PacketStreamError(f"field {tag >> 3} of wire type {wire} in the packet stream")
    return pos, count


def packet_runs(
    f: BinaryIO, total: int, report: DecodeReport, progress: ProgressFn | None = None
) -> Iterator[bytes]:
    """Runs of whole packets of the file (gzip inflated on the way), each about
    `RUN_BYTES`. A file that ends inside a packet is `partial`, with a warning."""
    pending = b""
    for block in decompressed_blocks(f, total, progress, report, binary=True):
        pending += block
        if len(pending) < RUN_BYTES:
            continue
        used, _ = whole_packets(pending)
        if used:
            yield pending[:used]
            pending = pending[used:]
    used, _ = whole_packets(pending)
    if used:
        yield pending[:used]
    if used < len(pending):
        report.partial = True
        report.warnings.append(
            f"the file ends inside a trace packet ({len(pending) - used} bytes of it): "
            "kept the packets before it"
        )
