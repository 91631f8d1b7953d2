"""Read a Perfetto protobuf trace into the model builder's chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from ..columns import Chunk, build_chunk
from ..schema import Event
from ..text_blocks import DecodeReport, ProgressFn
from .rules import BATCH, BATCH_BYTES, meta_events, native_module, progress_steps
from .stream import kept_before_damage, one_ahead, packet_runs


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
    if native_module() is not None:
        from .native import decode_native

        decode_native(f, total, report, progress, merge)
        return
    from .events import PacketReader  # the protobuf runtime: imported only where it reads

    reader = PacketReader(report)
    batches = _Batches(report, merge)
    reader.deliver = batches.add
    progress, reader.step = progress_steps(progress, total)

    with kept_before_damage(report, lambda: reader.packets):
        for run in one_ahead(packet_runs(f, total, report, progress)):
            reader.read(run)
    batches.add(reader.finish())
    batches.flush()
    merge(build_chunk(meta_events(reader.meta)))
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
