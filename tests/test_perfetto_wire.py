"""The compiled Perfetto reader's varints (ingest/perfetto/_pf_wire.h): those of up to
eight bytes are read eight bytes at once where eight are left, the others a byte at a
time; every length reads as the protobuf runtime reads it."""

from __future__ import annotations

import json
from pathlib import Path

import perfetto_bombs as pb
import pytest
from kinetoscope.ingest.perfetto import native
from test_perfetto_native import annotation, check, event

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled reader is not built")

# every varint length, 1 to 10 bytes, at both ends of each
VALUES = sorted({0, 1} | {(1 << k) - 1 for k in range(1, 65)} | {1 << k for k in range(64)})


def test_varints_of_every_length_read_as_protobuf_reads_them(tmp_path: Path) -> None:
    data = pb.thread_track(1, 10, 11)
    for n, value in enumerate(VALUES):
        # a uint first (eight bytes or more follow it), a negative int last (ten bytes)
        values = annotation(b"u", u=value), annotation(b"i", i=-(value & ((1 << 63) - 1)))
        data += event(3, 1_000 + (n << 20), 1, b"v", *values)
    data += event(3, (1 << 56) - 1, 1, b"v", annotation(b"u", u=7))  # an eight-byte timestamp
    model = check(tmp_path, data)  # the same both ways, in one thread and in two
    read = [json.loads(model.raw_args(row)) for row in range(len(model))]
    assert [args["u"] for args in read] == [*VALUES, 7]
    assert [args["i"] for args in read[:-1]] == [-(v & ((1 << 63) - 1)) for v in VALUES]
    assert model.events["ts"][-1] == ((1 << 56) - 1) / 1000
