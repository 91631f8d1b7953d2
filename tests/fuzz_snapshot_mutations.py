"""Inputs for the snapshot pickle fuzzer: real snapshots as seeds, mutated by opcode.

Seeds: the H100 snapshot of tests/data, `known_snapshot()` at protocols 2 to 5, and a few
small built ones. A seed's opcodes are found once (`pickletools.genops`, on our own
trusted bytes); a mutation works at opcode boundaries: an argument set to an edge value
(memo indexes, lengths), an opcode deleted, repeated or moved, hostile opcode runs
inserted (a memo index far out, globals, sets, colliding keys, deep marks, huge lengths,
out-of-band buffers), two seeds spliced, or plain byte edits. Value-level mutations
decode a seed (our own bytes), reshape it the ways a hostile file would (lists shared into
cross products, sizes of 2**70, frame names nested a thousand deep, keys that collide,
many devices and streams) and pickle it again.
"""

from __future__ import annotations

import pickle
import pickletools
import random
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from snapshot_builders import SnapshotBuilder, frame, known_snapshot

TESTS = Path(__file__).resolve().parent
H100 = TESTS / "data" / "h100" / "memory_snapshot" / "snapshot.pickle"
P61 = (1 << 61) - 1
EDGE_INTS = [0, 1, 2, 127, 128, 255, 256, 0xFFFF, 1 << 27, (1 << 31) - 1, 1 << 31, (1 << 32) - 1]


def hostile_runs(canary: str) -> list[bytes]:
    """Opcode runs a hostile file holds; the code ones would create `canary`."""
    touch = f"touch {canary}".encode()
    collide = (
        b"}("
        + b"".join(b"\x8a\x08" + (k * P61).to_bytes(8, "little") + b"K\x00" for k in range(1, 3))
        + b"u"
    )
    tuple_keys = b"}(" + b"".join(b"K" + bytes([k]) + b"K\x01\x86K\x00" for k in range(4)) + b"u"
    return [
        b"r" + struct.pack("<I", 1 << 27),  # LONG_BINPUT far out
        b"p134217728\n",
        b"q\xff",
        b"h\xff",
        b"j\xff\xff\xff\x7f",
        b"cos\nsystem\n(V" + touch + b"\ntR",
        b"\x8c\x02os\x8c\x06system\x93\x8c" + bytes([len(touch)]) + touch + b"\x85R",
        b"(cos\nsystem\nV" + touch + b"\no",
        b"(V" + touch + b"\nios\nsystem\n",
        b"\x8f(K\x01K\x02\x90",
        b"(K\x01\x91",
        b"\x96\x00\x00\x00\x00\x00\x00\x00\x00",
        b"\x97",
        b"\x98",
        b"V" + touch + b"\nQ",
        b"\x82\x01",
        collide,
        tuple_keys,
        b"(" * 3000,
        b"]" * 50 + b"a" * 60,
        b"X\xff\xff\xff\x7f",
        b"\x8d" + b"\xff" * 8,
        b"\x95" + b"\xff" * 8,
        b"\x8b\xff\xff\xff\x7f",
        b"\x8b\x00\x00\x00\x80",
        b"I" + b"9" * 5000 + b"\n",
        b"L" + b"9" * 50 + b"L\n",
        b"2" * 100,
        b"0" * 10,
        b"1",
        b".",
    ]


def seeds() -> list[bytes]:
    out = [H100.read_bytes()] if H100.exists() else []
    known = known_snapshot().snapshot()
    out += [pickle.dumps(known, protocol=p) for p in (2, 3, 4, 5)]
    small = SnapshotBuilder()
    small.segment(0, 0x1000, 4096, [SnapshotBuilder.block(0x1000, 512)])
    small.entry(0, "alloc", 0x1000, 512, 1, frames=[frame("f", "a.py", 1)])
    small.entry(0, "oom", 0, 1 << 40, 2, device_free=5)
    out += [pickle.dumps(small.snapshot(), protocol=p) for p in (2, 4)]
    return out


def boundaries(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each opcode of a seed (our own bytes)."""
    spans = []
    ops = list(pickletools.genops(data))
    for (_, _, pos), (_, _, following) in zip(ops, [*ops[1:], (None, None, len(data))]):
        spans.append((pos, following if following is not None else len(data)))
    return spans


class Mutator:
    def __init__(self, rng: random.Random, canary: str) -> None:
        self.rng = rng
        self.seeds = seeds()
        self.spans = [boundaries(s) for s in self.seeds]
        self.hostile = hostile_runs(canary)
        self.values = [pickle.loads(s) for s in self.seeds]  # our own bytes

    def input(self) -> tuple[bytes, bool]:
        """An input, and whether it is honest (pickled by Python's own pickler from
        plain data: the reader may refuse it only for what it holds, never as damage)."""
        r = self.rng
        if r.random() < 0.25:
            return value_mutation(r, r.choice(self.values)), True
        i = r.randrange(len(self.seeds))
        data = self.seeds[i]
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            data = r.choice(self._byte_mutations)(self, data, self.spans[i])
        return data, False

    def _op(self, spans: list[tuple[int, int]], data: bytes) -> tuple[int, int]:
        start, end = self.rng.choice(spans)
        return min(start, len(data)), min(end, len(data))

    def insert_hostile(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        at, _ = self._op(spans, data)
        return data[:at] + self.rng.choice(self.hostile) + data[at:]

    def set_argument(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        start, end = self._op(spans, data)
        if end - start < 2:
            return data
        width = min(end - start - 1, self.rng.choice([1, 2, 4, 8]))
        value = self.rng.choice(EDGE_INTS) % (1 << (8 * width))
        return data[: start + 1] + value.to_bytes(width, "little") + data[start + 1 + width :]

    def delete_op(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        start, end = self._op(spans, data)
        return data[:start] + data[end:]

    def repeat_op(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        start, end = self._op(spans, data)
        return data[:end] + data[start:end] * self.rng.choice([1, 2, 50]) + data[end:]

    def move_op(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        start, end = self._op(spans, data)
        piece, rest = data[start:end], data[:start] + data[end:]
        at = self.rng.randrange(len(rest) + 1)
        return rest[:at] + piece + rest[at:]

    def splice(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        j = self.rng.randrange(len(self.seeds))
        cut, _ = self._op(spans, data)
        other, _ = self.rng.choice(self.spans[j])
        return data[:cut] + self.seeds[j][other:]

    def flip_bytes(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        out = bytearray(data)
        for _ in range(self.rng.choice([1, 2, 8])):
            if out:
                out[self.rng.randrange(len(out))] = self.rng.randrange(256)
        return bytes(out)

    def truncate(self, data: bytes, spans: list[tuple[int, int]]) -> bytes:
        return data[: self.rng.randrange(len(data) + 1)]

    _byte_mutations: list[Callable[[Mutator, bytes, list[tuple[int, int]]], bytes]] = [
        insert_hostile,
        insert_hostile,
        set_argument,
        set_argument,
        delete_op,
        repeat_op,
        move_op,
        splice,
        flip_bytes,
        truncate,
    ]


def value_mutation(r: random.Random, seed: dict[str, Any]) -> bytes:
    snapshot = pickle.loads(pickle.dumps(seed))  # a copy to reshape
    segments, traces = snapshot.get("segments", []), snapshot.get("device_traces", [])
    entries = [e for t in traces if isinstance(t, list) for e in t]
    kind = r.randrange(9)
    if kind == 0 and entries:  # a size far past int64
        r.choice(entries)["size"] = r.choice([1 << 70, -(1 << 70), 1 << 63, 10**400 % (1 << 200)])
    elif kind == 1 and entries:  # a frame name nested deep
        name: Any = "x"
        for _ in range(r.choice([100, 1000, 3000])):
            name = [name]
        r.choice(entries)["frames"] = [{"name": name, "filename": "a.py", "line": 1}]
    elif kind == 2:  # one list shared into a cross product
        inner = [r.choice(entries) if entries else {}] * r.choice([100, 1000])
        snapshot["device_traces"] = [inner] * r.choice([10, 100, 1000])
    elif kind == 3 and segments:  # blocks shared by many segments, many devices
        count = r.choice([100, 2000])
        snapshot["segments"] = [dict(r.choice(segments), device=d % 500) for d in range(count)]
    elif kind == 4 and entries:  # many streams
        for i, e in enumerate(entries):
            e["stream"] = i
    elif kind == 5 and entries:  # addresses and devices at the hash modulus
        for k, e in enumerate(entries):
            e["addr"] = (k + 1) * P61
        for k, s in enumerate(segments):
            s["device"] = (k + 1) * P61
    elif kind == 6 and entries:  # OOMs sharing a long stack
        stack = [{"name": "f", "filename": "a.py", "line": i} for i in range(r.choice([300, 3000]))]
        for e in entries:
            e["action"], e["frames"] = "oom", stack
    elif kind == 7 and entries:  # wrong types everywhere
        e = r.choice(entries)
        for key in list(e):
            e[key] = r.choice([None, "x", 1.5, [], {}, (1, 2), -1, True])
    elif segments:  # negative and huge devices
        r.choice(segments)["device"] = r.choice([-1, -5, 1 << 40, 10**30])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # pickling the deep names (reading them needs no stack)
    try:
        return pickle.dumps(snapshot, protocol=r.choice([2, 3, 4, 5]))
    finally:
        sys.setrecursionlimit(limit)
