"""Hostile Perfetto traces, written byte by byte (millions of packets in a second): the
bombs of issue 44 that the reader must stop, or read, under its memory and time bounds."""

from __future__ import annotations

import zlib


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, body: bytes) -> bytes:
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(body)) + body


def number(number_: int, value: int) -> bytes:
    """A varint field."""
    return varint(number_ << 3) + varint(value)


def packet(body: bytes) -> bytes:
    return field(1, body)


def thread_track(uuid: int, pid: int, tid: int) -> bytes:
    thread = number(1, pid) + number(2, tid)
    return packet(field(60, number(1, uuid) + field(4, thread)))


def track_event(kind: int, ts: int, track: int, name: bytes = b"", extra: bytes = b"") -> bytes:
    """A TracePacket holding a TrackEvent (kind 1 BEGIN, 2 END, 3 INSTANT)."""
    event = number(9, kind) + number(11, track) + (field(23, name) if name else b"") + extra
    return packet(number(8, ts) + number(10, 1) + field(11, event))


def string_arg(name: bytes, value: bytes) -> bytes:
    """A DebugAnnotation (TrackEvent field 4) with a string value."""
    return field(4, field(10, name) + field(6, value))


def open_slices(count: int) -> bytes:
    """`count` slice begins that never end, on one thread."""
    begin = [track_event(1, 1_000 + i, 1, b"aten::op") for i in range(count)]
    return thread_track(1, 10, 11) + b"".join(begin)


def small_trace(events: int = 100) -> bytes:
    """A valid trace: `events` slices on one thread."""
    out = [thread_track(1, 10, 11)]
    for i in range(events):
        out.append(track_event(1, 1_000 * i, 1, b"aten::mm"))
        out.append(track_event(2, 1_000 * i + 500, 1))
    return b"".join(out)


def compressed(inner: bytes) -> bytes:
    """A packet of `compressed_packets` (field 50) holding `inner` packets, zlib'd."""
    return packet(field(50, zlib.compress(inner, 9)))


def compressed_bomb(inflated_mb: int) -> bytes:
    """A packet whose compressed packets inflate to about `inflated_mb` MiB: instants
    with a 1 MiB string arg, about a thousand to one."""
    big = track_event(3, 5, 1, b"x", string_arg(b"blob", b"a" * (1 << 20)))
    inflater_input = big * inflated_mb
    return compressed(inflater_input)
