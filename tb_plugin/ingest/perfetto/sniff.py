"""Whether the first bytes of a file are Perfetto trace packets.

Only the bytes the head holds are walked: a first packet longer than the head, a head cut
inside a packet, damage after the first packets or packets wrapped in
`compressed_packets` still show what the file is. A sign is a field of the packets'
first level that only a Perfetto packet has: an XSpace (`*.xplane.pb` of the JAX and
TensorFlow profilers) also starts with field 1, but its planes have fields 1 to 6 only
(their field 5, stat metadata, a map, would read as `chrome_events`, whose own entries
start otherwise: field 1 or 2, length-delimited).
"""

from __future__ import annotations

from .stream import PacketStreamError, read_varint

# TracePacket fields (number → wire type) that an XSpace's planes never hold: timestamp,
# sequence id, track event, interned data, sequence flags, incremental state cleared,
# previous packet dropped, compressed packets, clock id, packet defaults, track descriptor.
_SIGNS = {8: 0, 10: 0, 11: 2, 12: 2, 13: 0, 41: 0, 42: 0, 50: 2, 58: 0, 59: 2, 60: 2}
_CHROME_EVENTS = 5
_BUNDLE_STARTS = (0x0A, 0x12)  # ChromeEventBundle: trace_events (1), metadata (2)
_FIXED = {1: 8, 5: 4}


def looks_like_packets(head: bytes) -> bool:
    if not head or head[0] != 0x0A:
        return False
    try:
        return _has_sign(head)
    except PacketStreamError:  # damage after the signs looked at: none found before it
        return False


def _has_sign(head: bytes) -> bool:
    pos, end = 0, len(head)
    while pos < end:
        tag, pos = read_varint(head, pos)
        if tag != 0x0A:  # the stream holds packets only
            return False
        length, body = read_varint(head, pos)
        if length < 0:
            return False
        if _packet_has_sign(head, body, min(body + length, end)):
            return True
        pos = body + length
    return False


def _packet_has_sign(head: bytes, pos: int, end: int) -> bool:
    """Whether the fields of the packet in head[pos:end] (maybe cut) hold a sign."""
    while pos < end:
        tag, pos = read_varint(head, pos)
        if tag < 0:
            return False
        number, wire = tag >> 3, tag & 7
        if _SIGNS.get(number) == wire:
            return True
        if wire == 0:
            _, pos = read_varint(head, pos)
        elif wire == 2:
            length, pos = read_varint(head, pos)
            if length < 0:
                return False
            if number == _CHROME_EVENTS and pos < end and head[pos] in _BUNDLE_STARTS:
                return True
            pos += length
        elif wire in _FIXED:
            pos += _FIXED[wire]
        else:
            return False
    return False
