"""What both Perfetto readers share, without the protobuf runtime (importing it costs a
small trace's whole load): Perfetto's enum values, the bounds of what a reader holds and
delivers, the text of string fields, and the words of its warnings. The protobuf
runtime's reader is `events.py`; the compiled one `native.py`."""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import msgspec

from ..schema import Event
from ..text_blocks import DecodeReport, ProgressFn

try:
    from . import _native  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the protobuf runtime reads every trace
    _native = None

# TrackEvent.Type
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
# TracePacket.SequenceFlags
SEQ_INCREMENTAL_STATE_CLEARED = 1
# NestedValue.NestedType
NESTED_DICT, NESTED_ARRAY = 1, 2

HOLD_MAX = 1_000_000  # events held back behind a slice still open, at most
CHECK_EVERY = 4096  # packets between two checks of the memory held
BATCH = 50_000  # events per chunk, at most
BATCH_BYTES = 32 << 20  # bytes of args per chunk, at most
# What a damaged value raises while a packet is read (besides the protobuf runtime's
# DecodeError): the packet is skipped, the file goes on.
BAD_VALUE = (ValueError, OverflowError, RecursionError, zlib.error, msgspec.MsgspecError)


def text(value: str | bytes) -> str:
    """A string field's value: proto2 string fields holding bytes that are not UTF-8 come
    back as bytes (damage, or a writer's bug); those are read with replacements."""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def failure(err: BaseException) -> str:
    """How a packet that could not be read is told in the load's warning."""
    return f"{type(err).__name__}: {str(err)[:200]}"


def finish_warnings(
    report: DecodeReport, unended: int, unmatched: int, unknown: int, bad: int, first_bad: str
) -> None:
    """The warnings of the end of a file (and `partial` for packets skipped)."""
    if unended:
        report.warnings.append(
            f"{unended} slices had no end in the file: read as ending at its last timestamp"
        )
    if unmatched:
        report.warnings.append(f"{unmatched} slice ends had no begin on their track: skipped")
    if unknown:
        report.warnings.append(
            f"{unknown} tracks had events but no descriptor: named by their uuid"
        )
    if bad:
        report.partial = True
        report.warnings.append(f"{bad} trace packets could not be read ({first_bad}): skipped")


_META_ARG = {
    "process_name": "name",
    "thread_name": "name",
    "process_labels": "labels",
    "process_sort_index": "sort_index",
    "thread_sort_index": "sort_index",
}


def meta_events(meta: list[tuple[Any, Any, str, Any]]) -> list[Event]:
    """The track descriptors' process and thread metadata as the JSON form's ph "M" events."""
    encode = msgspec.json.encode
    return [
        Event(
            ph="M", name=kind, pid=pid, tid=tid, args=msgspec.Raw(encode({_META_ARG[kind]: value}))
        )
        for pid, tid, kind, value in meta
    ]


def native_module() -> ModuleType | None:
    """The compiled reader (`_native.c`), unless it is not built or switched off
    (`KINETOSCOPE_SCANNER=python`, the switch of the JSON scanner too)."""
    if _native is None or os.environ.get("KINETOSCOPE_SCANNER", "") == "python":
        return None
    return _native


def progress_steps(
    progress: ProgressFn | None, total: int
) -> tuple[ProgressFn | None, Callable[[], None] | None]:
    """The file's progress callback, and a step that tells the file's progress again (per
    inflate step of compressed packets: lets the load's deadline stop a bomb)."""
    if progress is None:
        return None, None
    outer, seen = progress, [0, total]

    def told(done: int, size: int) -> None:
        seen[:] = [done, size]
        outer(done, size)

    return told, lambda: outer(*seen)
