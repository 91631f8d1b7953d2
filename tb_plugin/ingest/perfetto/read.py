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

BATCH = 50_000  # events per chunk, at most
BATCH_BYTES = 32 << 20  # bytes of args per chunk, at most
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
    batches = _Batches(report, merge)
    reader.deliver = batches.add
    if progress is not None:
        outer, seen = progress, [0, total]  # the file's progress, told again per inflate step

        def told(done: int, size: int) -> None:
            seen[:] = [done, size]
            outer(done, size)

        reader.step = lambda: outer(*seen)
        progress = told

    try:
        for run in packet_runs(f, total, report, progress):
            reader.read(run)
    except PacketStreamError as err:
        if reader.packets == 0:
            raise TraceDecodeError("unreadable", f"not a Perfetto trace: {err}", 0) from None
        report.partial = True
        report.warnings.append(f"the packet stream is damaged ({err}): kept what came before")
    except StopReading as stop:
        report.partial = True
        report.warnings.append(str(stop))
    batches.add(reader.finish())
    batches.flush()
    merge(build_chunk(_meta_events(reader.meta)))
    report.header.update(reader.header)


class _Batches:
    """Complete events gathered into chunks of `BATCH` events or `BATCH_BYTES` of args
    (events with big args: a chunk's args are spilled, and counted, at its merge)."""

    def __init__(self, report: DecodeReport, merge: Callable[[Chunk], None]) -> None:
        self.report, self.merge = report, merge
        self.events: list[Event] = []
        self.nbytes = 0

    def add(self, events: list[Event]) -> None:
        for at in range(0, len(events), BATCH):
            part = events[at : at + BATCH]
            self.events.extend(part)
            self.nbytes += sum(len(e.args) for e in part)
            if len(self.events) >= BATCH or self.nbytes >= BATCH_BYTES:
                self.flush()

    def flush(self) -> None:
        if self.events:
            self.report.event_count += len(self.events)
            self.merge(build_chunk(self.events))
            self.events, self.nbytes = [], 0


def _meta_events(meta: list[tuple[Any, Any, str, Any]]) -> list[Event]:
    encode = msgspec.json.encode
    return [
        Event(
            ph="M", name=kind, pid=pid, tid=tid, args=msgspec.Raw(encode({_META_ARG[kind]: value}))
        )
        for pid, tid, kind, value in meta
    ]
