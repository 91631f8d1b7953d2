"""Inputs for the Perfetto reader's fuzzer: real traces in their protobuf form as seeds
(tests/perfetto_writer.py), cut into packets, and mutations that know the format: packet
boundaries (tags, lengths, cuts, top-level fields of other wire types), varints at their
edges, deep nesting of annotations, compressed packets (whole, damaged, nested, not zlib),
interned data and sequences (iids, cleared state, names that are not UTF-8), tracks
(names of digits no int reads, cycles), slices that never end, and plain byte edits."""

from __future__ import annotations

import gzip
import json
import random
import zlib
from collections.abc import Callable
from pathlib import Path

from perfetto_bombs import field, number, packet, string_arg, track_event, varint
from perfetto_writer import write_perfetto

TESTS = Path(__file__).resolve().parent
SEED_TRACES = [
    *sorted((TESTS / "data" / "h100" / "gemm_bf16").glob("*.pt.trace.json.gz")),
    TESTS / "data" / "tiny.pt.trace.json",
]

EDGE_VARINTS = [0, 1, 2, 127, 128, 255, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1]
NAMES = [b"\xff\xfe", b"\xc3", "²".encode(), b"7" * 5000, b"0" * 21, b"", b"-1", "٣".encode()]


def packets_of(data: bytes) -> list[bytes]:
    """The bodies of the top-level packets of a well-formed trace."""
    out, pos = [], 0
    while pos < len(data):
        pos += 1  # the 0x0A tag
        length, shift = 0, 0
        while True:
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        out.append(data[pos : pos + length])
        pos += length
    return out


def seed_packets() -> list[list[bytes]]:
    """The packets of each seed trace, and of the reader's own hand-built cases."""
    seeds = []
    for path in SEED_TRACES:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as f:
            data, _ = write_perfetto(json.load(f))
        seeds.append(packets_of(data))
    inner = [
        packets_of(track_event(1, 10 * i, 1, b"op") + track_event(2, 10 * i + 5, 1))
        for i in range(20)
    ]
    flat = [p for pair in inner for p in pair]
    hand = packets_of(
        packet(field(60, number(1, 1) + field(4, number(1, 10) + number(2, 11))))
        + packet(field(50, zlib.compress(b"".join(packet(p) for p in flat))))
    )
    seeds.append(hand)
    return seeds


def joined(packets: list[bytes]) -> bytes:
    return b"".join(packet(p) for p in packets)


# --- mutations of a list of packets -------------------------------------------------------

Mutation = Callable[[random.Random, list[bytes]], list[bytes]]


def _pick(rng: random.Random, packets: list[bytes]) -> int:
    return rng.randrange(len(packets)) if packets else 0


def byte_edit(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    i = _pick(rng, packets)
    body = bytearray(packets[i] or b"\x00")
    for _ in range(rng.randint(1, 8)):
        body[rng.randrange(len(body))] = rng.choice([0, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    packets[i] = bytes(body)
    return packets


def edge_varint(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """A varint inside a packet (a tag, a length or a value) replaced by an edge value,
    an overlong encoding or one of 11 bytes."""
    i = _pick(rng, packets)
    body = packets[i]
    at = rng.randrange(len(body)) if body else 0
    end = at
    while end < len(body) and body[end] >= 0x80:
        end += 1
    new = rng.choice(
        [varint(rng.choice(EDGE_VARINTS)), b"\x80" * 9 + b"\x01", b"\xff" * 10 + b"\x01", b"\x80"]
    )
    packets[i] = body[:at] + new + body[end + 1 :]
    return packets


def boundary(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """Damage between packets: a wrong length, a field of another wire type or number,
    a cut, a dropped, doubled or moved packet."""
    i = _pick(rng, packets)
    choice = rng.randrange(6)
    if choice == 0 and packets:  # a packet's length one more or less: framing shifts
        body = packets[i]
        packets[i] = body[:-1] if rng.random() < 0.5 else body + bytes([rng.randrange(256)])
    elif choice == 1:  # a raw top-level field (kept raw by a marker the joiner keeps)
        raw = rng.choice(
            [
                b"\x08\x05",
                b"\x09" + b"\x00" * 8,
                b"\x0d\x00\x00\x00\x00",
                b"\x0b",
                b"\x00",
                b"\x12\x02ab",
                b"\x0f",
            ]
        )
        packets.insert(i, RAW + raw)
    elif choice == 2 and packets:
        packets[i] = packets[i][: rng.randrange(len(packets[i]) + 1)]
    elif choice == 3 and packets:
        del packets[i]
    elif choice == 4 and packets:
        packets.insert(i, packets[i])
    elif packets:
        packets.insert(rng.randrange(len(packets)), packets.pop(i))
    return packets


RAW = b"\x00RAW\x00"  # a packet list item written as it is, not as a packet


def deep(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """An instant whose annotation nests `depth` levels (dicts, arrays, nested values)."""
    depth = rng.choice([50, 99, 100, 101, 200, 1500])
    kind = rng.choice([11, 12])  # dict_entries, array_values
    inner = field(10, b"k") + field(6, b"v")
    for _ in range(depth):
        inner = field(kind, field(10, b"k") + inner)
    if rng.random() < 0.3:  # a NestedValue (field 8) instead
        inner = field(8, number(1, 2) + field(4, number(1, 2)) * 3)
        for _ in range(depth):
            inner = field(4, number(1, 2) + inner)
        inner = field(8, inner)
    event = track_event(3, 7, 1, b"deep", field(4, field(10, b"n") + inner))
    packets.insert(_pick(rng, packets), packets_of(event)[0])
    return packets


def compressed(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """A run of packets wrapped in compressed packets: whole, damaged, cut, nested, or
    not zlib at all."""
    if not packets:
        return packets
    a = _pick(rng, packets)
    b = min(len(packets), a + rng.randint(1, 200))
    data = zlib.compress(joined([p for p in packets[a:b] if not p.startswith(RAW)]))
    choice = rng.randrange(5)
    if choice == 1:
        data = bytearray(data)
        data[rng.randrange(len(data))] ^= 0xFF
        data = bytes(data)
    elif choice == 2:
        data = data[: rng.randrange(len(data))]
    elif choice == 3:
        data = zlib.compress(packet(field(50, data)))
    elif choice == 4:
        data = gzip.compress(data) if rng.random() < 0.5 else b"not zlib"
    packets[a:b] = [field(50, data)]
    return packets


def interned(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """Interned entries with odd iids and names, state cleared at odd places, sequence ids
    changed."""
    i = _pick(rng, packets)
    choice = rng.randrange(3)
    if choice == 0:
        table = rng.choice([1, 2, 3, 29])
        entry = number(1, rng.choice(EDGE_VARINTS)) + field(2, rng.choice(NAMES))
        body = number(10, 1) + field(12, field(table, entry))
    elif choice == 1:
        body = number(10, rng.choice(EDGE_VARINTS)) + number(13, 1) + number(41, 1)
    else:
        body = number(10, 1) + field(59, field(11, number(11, rng.choice(EDGE_VARINTS))))
    packets.insert(i, body)
    return packets


def tracks(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """Track descriptors with names of digits, huge uuids, parents in a cycle."""
    uuid = rng.choice([1, 2, 101, 2**64 - 1])
    desc = number(1, uuid) + field(2, rng.choice(NAMES))
    if rng.random() < 0.5:
        desc += number(5, rng.choice([uuid, 1, 101, 102]))  # itself or another: cycles
    if rng.random() < 0.3:
        desc += field(3, number(1, rng.choice(EDGE_VARINTS)) + field(6, rng.choice(NAMES)))
    if rng.random() < 0.3:
        desc += field(4, number(1, 3) + number(2, rng.choice(EDGE_VARINTS)))
    packets.insert(_pick(rng, packets), desc if rng.random() < 0.1 else field(60, desc))
    return packets


def slices(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    """Slices that never end, ends without a begin, flows used many times, big args."""
    choice = rng.randrange(4)
    track = rng.choice([1, 101, 102, 2**64 - 1])
    if choice == 0:
        new = [
            track_event(1, rng.randrange(10**6), track, b"open") for _ in range(rng.randint(1, 500))
        ]
    elif choice == 1:
        new = [track_event(2, rng.randrange(10**6), track) for _ in range(rng.randint(1, 50))]
    elif choice == 2:
        flow = number(36, rng.choice(EDGE_VARINTS))  # an old-style flow id
        new = [track_event(rng.choice([1, 2, 3]), i, track, b"f", flow) for i in range(20)]
    else:
        new = [
            track_event(
                3, 1, track, b"big", string_arg(b"a", b"x" * rng.choice([10, 1 << 16, 1 << 20]))
            )
        ]
    at = _pick(rng, packets)
    packets[at:at] = [packets_of(p)[0] for p in new]
    return packets


MUTATIONS: list[Mutation] = [
    byte_edit,
    edge_varint,
    boundary,
    deep,
    compressed,
    interned,
    tracks,
    slices,
]


def mutated(rng: random.Random, packets: list[bytes]) -> list[bytes]:
    out = list(packets)
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        if not out:  # every packet dropped: mutate one empty packet
            out = [b""]
        out = rng.choice(MUTATIONS)(rng, out)
    return out


def written(rng: random.Random, packets: list[bytes]) -> tuple[bytes, str]:
    """The file's bytes and its name: packets joined (raw items as they are), maybe
    gzipped (maybe cut), maybe cut."""
    data = b"".join(p[len(RAW) :] if p.startswith(RAW) else packet(p) for p in packets)
    if rng.random() < 0.1 and data:
        data = data[: rng.randrange(len(data))]
    if rng.random() < 0.3:
        data = gzip.compress(data, 1)
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data) + 1)]
        return data, "fuzz.pftrace.gz"
    return data, "fuzz.pftrace"
