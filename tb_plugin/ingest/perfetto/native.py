"""Read a Perfetto protobuf trace with the compiled reader (`_native.c`), into the same
chunks, warnings and header as the protobuf runtime's reader (`events.py`) makes.

The compiled reader reads runs of whole packets without the GIL and without a Python
object per packet or event: it holds the state between packets (interned tables, tracks,
open slices, flows, events in begin order) and cuts chunks of columns where `read.py`'s
batches are cut. Python keeps the rest, by the same code as the other reader: the runs
(`stream.packet_runs`), compressed packets (inflated step by step), legacy JSON values,
Chrome metadata, a category's arrow kind, and chunks whose core args need the column
builder's own reading. `KINETOSCOPE_SCANNER=python` (or no compiler at install) reads
with `events.py` instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO

import msgspec
import numpy as np

from ...model.categories import Kind
from ..columns import INTERNED, Chunk, arg_columns, build_chunk, clean_durations, kinds, phase_table
from ..heap import return_freed_memory
from ..limits import load_memory_bytes
from ..native_chunk import _memory_part as memory_part
from ..text_blocks import DecodeReport, ProgressFn, TraceDecodeError, too_large
from .flows import flow_kind, header_value
from .rules import (
    BAD_VALUE,
    BATCH,
    BATCH_BYTES,
    CHECK_EVERY,
    HOLD_MAX,
    failure,
    finish_warnings,
    meta_events,
    native_module,
    progress_steps,
    text,
)
from .stream import inflated_runs, kept_before_damage, packet_runs

_DONE, _COMPRESSED, _TOO_LARGE = 0, 1, 2
_INT_COLUMNS = frozenset(
    ("id", "args_len", "external_id", "external_id_lower", "correlation", "device", "stream")
    + ("addr", "device_type", "device_id")
)
_encode = msgspec.json.Encoder().encode


def available() -> bool:
    """Whether Perfetto traces are read by the compiled reader."""
    return native_module() is not None


def _as_read(raw: bytes) -> str | bytes:
    """A string field as the protobuf runtime gives it: str when UTF-8, else bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


class _Python:
    """What the compiled reader asks of Python, read by the protobuf reader's own code."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.header = header

    def legacy(self, raw: bytes) -> bytes | tuple[int, str]:
        """A legacy JSON annotation value's text; or (1, why) when reading it fails the
        packet, (2, why) when encoding it does (annotations._special, events._raw)."""
        value = _as_read(raw)
        try:
            try:
                decoded = msgspec.json.decode(value)
            except msgspec.DecodeError:
                decoded = text(value)
        except BAD_VALUE as err:
            return 1, failure(err)
        try:
            return _encode(decoded)
        except BAD_VALUE as err:
            return 2, failure(err)

    def header_item(
        self,
        name: bytes,
        json: bytes | None,
        int_value: int | None,
        bool_value: bool | None,
        string: bytes,
    ) -> str | None:
        """Sets one ChromeMetadata item in the header (None), or why it fails the packet."""
        try:
            value = header_value(
                None if json is None else _as_read(json), int_value, bool_value, _as_read(string)
            )
        except BAD_VALUE as err:
            return failure(err)
        self.header[text(_as_read(name))] = value
        return None

    def flow_kind(self, category: str) -> bool:
        """Whether a category makes an arrow "ac2g"."""
        return flow_kind(category) == "ac2g"


def decode_native(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    merge: Callable[[Chunk], None],
) -> None:
    """As `read.decode_perfetto`, with the compiled reader."""
    _read_file(f, total, report, progress, merge)
    # The reader's tables and held events are gone: their pages go back before the
    # builder joins its columns (the load's peak), not after it.
    return_freed_memory()


def _read_file(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    merge: Callable[[Chunk], None],
) -> None:
    module = native_module()
    assert module is not None
    header: dict[str, Any] = {}
    reader = module.Reader(
        _Python(header),
        cap=load_memory_bytes(),
        check_every=CHECK_EVERY,
        batch=BATCH,
        batch_bytes=BATCH_BYTES,
        seed=int.from_bytes(os.urandom(8), "little"),
    )
    progress, step = progress_steps(progress, total)
    load = _Load(reader, report, merge, step)
    with kept_before_damage(report, lambda: reader.packets):
        for run in packet_runs(f, total, report, progress):
            load.read(run, nested=False)
            load.deliver(reader.slots > HOLD_MAX)
    finish_warnings(report, *reader.finish())
    load.deliver(True)
    reader.flush()
    load.merge_chunks()
    merge(build_chunk(meta_events(reader.meta())))
    report.header.update(header)


class _Load:
    """One file's runs through the compiled reader, its chunks to the builder."""

    def __init__(
        self,
        reader: Any,
        report: DecodeReport,
        merge: Callable[[Chunk], None],
        step: Callable[[], None] | None,
    ) -> None:
        self.reader, self.report, self.merge, self.step = reader, report, merge, step
        self.cap = load_memory_bytes()

    def too_large(self) -> TraceDecodeError:
        return too_large(self.cap, self.report.event_count + self.reader.slots)

    def read(self, run: bytes | memoryview, nested: bool) -> None:
        """The packets of a run; a top-level packet of compressed packets is inflated here
        and its packets read in turn (events.py's _packet)."""
        reader, pos = self.reader, 0
        while True:
            status, pos, data = reader.read(run, pos, nested, self.report.held_bytes)
            if status == _DONE:
                return
            if status == _TOO_LARGE:
                raise self.too_large()
            try:
                for inner in inflated_runs(data, self.report, self.step):
                    self.read(inner, nested=True)
                    if reader.over_cap(self.report.held_bytes):
                        raise self.too_large()
                    self.deliver(False)  # a packet may inflate to gigabytes
            except BAD_VALUE as err:
                reader.skip(failure(err))
            if reader.count_packet(self.report.held_bytes):
                raise self.too_large()

    def deliver(self, all_done: bool) -> None:
        """The events done go out (events.py's _take), a chunk at a time."""
        while self.reader.deliver(all_done):
            self.merge_chunks()
        self.merge_chunks()

    def merge_chunks(self) -> None:
        for raw in self.reader.chunks():
            self.report.event_count += raw["events"]
            self.merge(chunk_of(raw))


def chunk_of(raw: dict[str, Any]) -> Chunk:
    """The Chunk of one of the compiled reader's chunks: the columns `columns.build_chunk`
    makes of the same events."""
    tables: dict[str, list[Any]] = raw["tables"]
    codes = {k: np.frombuffer(v, dtype=np.int32) for k, v in raw["codes"].items()}
    wide = {
        k: np.frombuffer(v, dtype=np.int64 if k in _INT_COLUMNS else np.float64)
        for k, v in raw["columns"].items()
        if k != "has_stack"
    }
    cols = {"ph": phase_table(tables["ph"])[codes["ph"]]}
    cols.update({key: codes[key] for key in INTERNED})
    cols["kind"] = kinds(tables["cat"], tables["name"], cols)
    cols["ts"] = wide["ts"]
    dur = wide["dur"].copy()
    negative = int(np.count_nonzero(dur < 0))
    cols["dur"] = clean_durations(dur)
    cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, wide["id"], -1)
    cols["args_end"] = np.cumsum(wide["args_len"])
    blob = raw["args"]  # a buffer (the builder writes it to its args file as it is)
    if raw["python_core"]:  # a value only the column builder reads as it does
        ends, text = cols["args_end"].tolist(), bytes(blob)
        raws = [msgspec.Raw(text[s:e]) for s, e in zip([0, *ends[:-1]], ends)]
        memory = arg_columns(cols, raws, wide["args_len"])
    else:
        external = wide["external_id"]
        cols["external_id"] = np.where(external >= 0, external, wide["external_id_lower"])
        cols["correlation"] = wide["correlation"]
        cols["device"] = wide["device"].astype(np.int32)
        cols["stream"] = wide["stream"]
        cols["blocks_per_sm"] = wide["blocks_per_sm"].astype(np.float32)
        cols["occupancy"] = wide["occupancy"].astype(np.float32)
        cols["has_stack"] = np.frombuffer(raw["columns"]["has_stack"], dtype=np.bool_)
        cols["work_sig"] = np.full(len(external), -1, dtype=np.int64)
        memory = memory_part(cols["kind"], wide)  # the JSON scanner's columns, as here
    return Chunk(
        cols=cols,
        tables={k: tables[k] for k in INTERNED},
        args=blob,
        memory=memory,
        meta=[],
        warnings=[],
        events=int(raw["events"]),
        negative_durations=negative,
    )
