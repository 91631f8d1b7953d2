"""Read a Perfetto protobuf trace into the model builder's chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, BinaryIO

import msgspec
from google.protobuf.message import DecodeError

from ..columns import Chunk, build_chunk
from ..schema import Event
from ..text_blocks import DecodeReport, ProgressFn, TraceDecodeError
from .events import PacketReader, iter_events
from .stream import PacketStreamError, packet_runs

_META_ARG = {
    "process_name": "name",
    "thread_name": "name",
    "process_labels": "labels",
    "process_sort_index": "sort_index",
    "thread_sort_index": "sort_index",
}


def decode_perfetto(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    merge: Callable[[Chunk], None],
) -> None:
    """Decode the packets of `f` into chunks given to `merge`; the trace's metadata
    (ChromeEventBundle.metadata: `deviceProperties`, `distributedInfo`, versions...) goes
    to `report.header`. Damage stops the read and keeps what came before it."""
    reader = PacketReader(report)
    try:
        for events in iter_events(packet_runs(f, total, report, progress), reader):
            report.event_count += len(events)
            merge(build_chunk(events))
    except (PacketStreamError, DecodeError) as err:
        if report.event_count == 0 and not reader.tracks.tracks:
            raise TraceDecodeError("unreadable", f"not a Perfetto trace: {err}", 0) from None
        report.partial = True
        report.warnings.append(f"the packet stream is damaged ({err}): kept what came before")
        tail = reader.finish()
        if tail:
            merge(build_chunk(tail))
    merge(build_chunk(_meta_events(reader.meta)))
    report.header.update(reader.header)


def _meta_events(meta: list[tuple[Any, Any, str, Any]]) -> list[Event]:
    encode = msgspec.json.encode
    return [
        Event(
            ph="M", name=kind, pid=pid, tid=tid, args=msgspec.Raw(encode({_META_ARG[kind]: value}))
        )
        for pid, tid, kind, value in meta
    ]
