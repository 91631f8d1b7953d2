"""Whether the first bytes of a file are Perfetto trace packets."""

from __future__ import annotations

from google.protobuf.message import DecodeError

from .schema import Trace
from .stream import PacketStreamError, whole_packets

# Fields only a Perfetto packet has among its first ones: an XSpace (`*.xplane.pb` of the
# JAX and TensorFlow profilers) also starts with field 1, but its planes hold none of them
# (their field 5, stat metadata, reads as `chrome_events`: not a sign).
_PACKET_FIELDS = (
    "timestamp",
    "trusted_packet_sequence_id",
    "track_event",
    "track_descriptor",
    "interned_data",
)


def looks_like_packets(head: bytes) -> bool:
    if not head or head[0] != 0x0A:
        return False
    try:
        used, count = whole_packets(head)
        if count == 0:
            return False
        packets = Trace.FromString(head[:used]).packet
    except (PacketStreamError, DecodeError):
        return False
    return any(p.HasField(name) for p in packets[:16] for name in _PACKET_FIELDS)
