"""Read a Perfetto protobuf trace into the model builder's chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, BinaryIO

import msgspec

from ..columns import Chunk, build_chunk
from ..schema import Event
from ..text_blocks import DecodeReport, ProgressFn, TraceDecodeError
from .events import PacketReader
from .stream import PacketStreamError, StopReading, packet_runs

BATCH = 50_000  # events per chunk
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
    to `report.header`. A packet that cannot be read is skipped (with a warning); damaged
    framing, or a limit, stops the read and keeps every packet before it."""
    reader = PacketReader(report)
    pending: list[Event] = []
    if progress is not None:
        outer, seen = progress, [0, total]  # the file's progress, told again per inflate step

        def told(done: int, size: int) -> None:
            seen[:] = [done, size]
            outer(done, size)

        reader.step = lambda: outer(*seen)
        progress = told

    def give(events: list[Event]) -> None:
        report.event_count += len(events)
        merge(build_chunk(events))

    try:
        for run in packet_runs(f, total, report, progress):
            pending.extend(reader.events(run))
            if len(pending) >= BATCH:
                give(pending)
                pending = []
    except PacketStreamError as err:
        if reader.packets == 0:
            raise TraceDecodeError("unreadable", f"not a Perfetto trace: {err}", 0) from None
        report.partial = True
        report.warnings.append(f"the packet stream is damaged ({err}): kept what came before")
    except StopReading as stop:
        report.partial = True
        report.warnings.append(str(stop))
    pending.extend(reader.finish())
    for at in range(0, len(pending), BATCH):
        give(pending[at : at + BATCH])
    pending.clear()
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
