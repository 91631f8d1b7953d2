"""A trace's Perfetto protobuf form tiled N times along the time axis, as
`make_big_trace.py` (beside the corpus) tiles its JSON form, so the two forms of a big
trace hold the same events: copy k is shifted by k spans (the span of the trace's timed
events, times 1.01, plus 1 µs); its flow ids, `correlation`, `External id`, `Python id`
and `Python parent id` args and ProfilerStep numbers move by k * 10,000,000. Tracks,
metadata and the sequence's first packet are written once. Streams its output: one tile
is held, never the file.

    .venv/bin/python bench/perfetto_tiles.py SRC.json.gz N OUT.pb.gz
"""

from __future__ import annotations

import contextlib
import gzip
import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from _results import REPO

sys.path.insert(0, str(REPO / "tests"))
from kinetoscope.ingest.perfetto.schema import Trace, TracePacket  # noqa: E402
from perfetto_writer import write_perfetto  # noqa: E402

ID_SHIFT = 10_000_000
RENUMBERED_ARGS = ("correlation", "External id", "Python id", "Python parent id")


def span_us(events: list[dict[str, Any]]) -> float:
    """make_big_trace's span: the timed events' extent, times 1.01, plus 1 µs."""
    timed = [e for e in events if e.get("ph") != "M" and isinstance(e.get("ts"), (int, float))]
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + (e.get("dur") or 0) for e in timed)
    return (end - start) * 1.01 + 1


def _tables(trace: Any) -> tuple[dict[int, str], dict[int, str]]:
    """The event names and annotation names the writer interned (one sequence)."""
    names: dict[int, str] = {}
    arg_names: dict[int, str] = {}
    for packet in trace.packet:
        if packet.HasField("interned_data"):
            names.update((e.iid, e.name) for e in packet.interned_data.event_names)
            arg_names.update((e.iid, e.name) for e in packet.interned_data.debug_annotation_names)
    return names, arg_names


def _shifted(
    packet: Any, k: int, shift_ns: int, names: dict[int, str], arg_names: dict[int, str]
) -> Any:
    copy = TracePacket()
    copy.CopyFrom(packet)
    copy.timestamp += k * shift_ns
    event = copy.track_event
    for ids in (event.flow_ids, event.terminating_flow_ids):
        ids[:] = [i + k * ID_SHIFT for i in ids]
    for annotation in event.debug_annotations:
        name = annotation.name or arg_names.get(annotation.name_iid, "")
        if name in RENUMBERED_ARGS and annotation.HasField("int_value"):
            annotation.int_value += k * ID_SHIFT
    name = event.name if event.HasField("name") else names.get(event.name_iid, "")
    if name.startswith("ProfilerStep#"):
        with contextlib.suppress(ValueError):  # make_big_trace leaves such a name as it is
            event.name = f"ProfilerStep#{int(name.split('#', 1)[1]) + k * ID_SHIFT}"
    return copy


def _write(out: BinaryIO, packet: Any) -> None:
    body = packet.SerializeToString()
    length, header = len(body), bytearray(b"\x0a")
    while True:  # the length as a varint
        byte = length & 0x7F
        length >>= 7
        header.append(byte | (0x80 if length else 0))
        if not length:
            break
    out.write(bytes(header) + body)


def tile(source: str, n: int, out_path: str) -> None:
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rb") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    shift_ns = round(span_us([e for e in events if isinstance(e, dict)]) * 1000)
    trace = Trace.FromString(write_perfetto(doc)[0])
    del doc, events
    names, arg_names = _tables(trace)
    with gzip.open(out_path, "wb", compresslevel=1) as out:
        for k in range(n):
            for packet in trace.packet:
                if k == 0:
                    _write(out, packet)
                elif packet.HasField("track_event"):
                    _write(out, _shifted(packet, k, shift_ns, names, arg_names))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tile(sys.argv[1], int(sys.argv[2]), sys.argv[3])
    print(Path(sys.argv[3]).stat().st_size)
