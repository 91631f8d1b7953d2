"""The compiled Perfetto reader's queue of held events (ingest/perfetto/_pf_rows.h): the
blocks of records and args that a delivery lets go of are kept as spares and used again by
the events held next, and what is read with them is the same both ways."""

from __future__ import annotations

import json
from pathlib import Path

import perfetto_bombs as pb
import pytest
from kinetoscope.ingest.perfetto import native
from test_perfetto_native import annotation, check, event

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled reader is not built")

# _pf_rows.h: RECORD_BLOCK records a block, ARENA_BLOCK bytes of args a block
RECORD_BLOCK, ARENA_BLOCK = 8192, 1 << 20
HELD = RECORD_BLOCK + 500  # each time: two record blocks, two arena blocks of args


def test_events_held_again_after_a_delivery_read_the_same(tmp_path: Path) -> None:
    """Twice, a slice holds the instants of another track behind it (in begin order)
    until it ends, then they go out at once; the next ones are held in the blocks let go."""
    data = pb.thread_track(1, 10, 11) + pb.thread_track(2, 10, 12)
    ts = 1
    for burst in range(2):
        data += event(1, ts, 1, b"long")
        for i in range(HELD):
            text = b"%d-%d-" % (burst, i) + b"x" * (80 + i % 50)
            args = annotation(b"text", s=text), annotation(b"i", i=i)
            data += event(3, ts + 1 + i, 2, b"held", *args)
        ts += HELD + 1
        data += event(2, ts, 1)
        ts += 1
    model = check(tmp_path, data)  # the same both ways, in one thread and in two
    assert len(model) == 2 * (HELD + 1)
    held = [row for row in range(len(model)) if model.names[model.events["name"][row]] == "held"]
    assert len(held) == 2 * HELD
    assert sum(len(model.raw_args(row)) for row in held[:HELD]) > ARENA_BLOCK
    read_in_order = [(b, i) for b in range(2) for i in range(HELD)]  # their timestamps' order
    for k in range(0, len(held), 997):
        burst, i = read_in_order[k]
        args = json.loads(model.raw_args(held[k]))
        assert args["text"].startswith(f"{burst}-{i}-") and args["i"] == i
