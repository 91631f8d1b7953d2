"""Perfetto packets → the events of Kineto's JSON form (msgspec `Event`s), so the model is
built by the same column builder as a JSON trace's.

- A SLICE_BEGIN / SLICE_END pair on a track is one complete event (ph "X"); the END's
  debug annotations join the BEGIN's (Perfetto's rule). Events come out in the order
  their slices begin, as the JSON form lists them.
- INSTANT → ph "i"; COUNTER on a counter track → ph "C" named as the track, its value
  under "value".
- Debug annotations are the event's args, under their names.
- The two slices of a flow id are a flow from the earlier to the later: ph "s" at the
  start, ph "f" (bp "e") at the end, named and categorised "ac2g" when a side is a launch
  call or GPU work and "fwdbwd" otherwise (Kineto's two kinds of arrow; Perfetto's flows
  carry no category). Its id is the Perfetto flow id; an id seen once keeps its lone end.
- `correlation_id` is the `correlation` arg where the annotations name none.
- Timestamps are nanoseconds (the trace clock); the model's are microseconds.
- Interned names, categories and annotation names and strings are per packet sequence,
  dropped when the sequence clears its incremental state.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ...model.categories import CATEGORY_KINDS, GPU_ACTIVITY_KINDS, LAUNCH_KINDS
from ..schema import Event
from ..text_blocks import DecodeReport
from .annotations import read_annotations, text
from .schema import (
    COUNTER,
    INSTANT,
    SEQ_INCREMENTAL_STATE_CLEARED,
    SLICE_BEGIN,
    SLICE_END,
    Trace,
)
from .tracks import MetaEntry, TrackTable

# TrackEvent field numbers (Perfetto's track_event.proto).
_CATEGORY_IIDS, _ANNOTATIONS, _TYPE, _NAME_IID, _TRACK_UUID = 3, 4, 9, 10, 11
_CATEGORIES, _NAME, _COUNTER, _DOUBLE_COUNTER = 22, 23, 30, 44
_FLOWS_OLD, _ENDS_OLD, _FLOWS, _ENDS, _CORRELATION = 36, 42, 47, 48, 52
HOLD_MAX = 1_000_000  # events held back behind a slice still open, at most
_encode = msgspec.json.Encoder().encode
_NO_ARGS = msgspec.Raw()


@dataclass
class _Sequence:
    """The incremental state of one packet sequence."""

    categories: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    arg_names: dict[int, str] = field(default_factory=dict)
    arg_strings: dict[int, str] = field(default_factory=dict)
    seen: dict[bytes, Any] = field(default_factory=dict)  # annotations read, by their bytes
    default_track: int = 0

    def intern(self, data: Any) -> None:
        for entry in data.event_categories:
            self.categories[entry.iid] = text(entry.name)
        for entry in data.event_names:
            self.names[entry.iid] = text(entry.name)
        for entry in data.debug_annotation_names:
            self.arg_names[entry.iid] = text(entry.name)
        for entry in data.debug_annotation_string_values:
            self.arg_strings[entry.iid] = entry.str.decode("utf-8", "replace")


class _Sink:
    """Where events go as they are made: a filled place at the end of the output."""

    def __init__(self, slots: deque[list[Event | None]]) -> None:
        self.slots = slots

    def append(self, event: Event) -> None:
        self.slots.append([event])


@dataclass
class _Open:
    """A slice whose END has not come yet."""

    ts: int
    name: str
    cat: str
    args: dict[str, Any]
    flows: list[int]
    ends: list[int]
    slot: list[Event | None]  # its place in the output, filled at its END


@dataclass
class PacketReader:
    """Turns runs of packets into events; one per file."""

    report: DecodeReport
    tracks: TrackTable = field(default_factory=TrackTable)
    header: dict[str, Any] = field(default_factory=dict)
    meta: list[MetaEntry] = field(default_factory=list)
    _sequences: dict[int, _Sequence] = field(default_factory=dict)
    _open: dict[int, list[_Open]] = field(default_factory=dict)
    _flows: dict[int, tuple[Event, bool]] = field(default_factory=dict)
    # Events in the order their slices begin (as the JSON form lists them: for two slices
    # of one span the outer one first), each a one-item list filled when known.
    _slots: deque[list[Event | None]] = field(default_factory=deque)
    _unmatched_ends: int = 0
    last_ts: int = 0

    def events(self, run: bytes) -> list[Event]:
        """The events complete after the packets of `run`, in begin order; past
        `HOLD_MAX` waiting ones, those complete go out even after a slice still open."""
        out = _Sink(self._slots)
        for packet in Trace.FromString(run).packet:
            self._packet(packet, out)
        return self._take(len(self._slots) > HOLD_MAX)

    def _take(self, all_done: bool) -> list[Event]:
        out: list[Event] = []
        slots = self._slots
        while slots and slots[0][0] is not None:
            out.append(slots.popleft()[0])  # type: ignore[arg-type]
        if all_done:
            waiting = [slot for slot in slots if slot[0] is None]
            out.extend(slot[0] for slot in slots if slot[0] is not None)  # type: ignore[misc]
            self._slots = deque(waiting)
        return out

    def _packet(self, packet: Any, out: _Sink) -> None:
        seq = self._sequence(packet)
        if packet.HasField("track_event"):
            self._event(packet, seq, out)
        elif packet.HasField("track_descriptor"):
            self.meta.extend(self.tracks.describe(packet.track_descriptor))
        elif packet.HasField("chrome_events"):
            for item in packet.chrome_events.metadata:
                self.header[text(item.name)] = _metadata_value(item)
        elif packet.compressed_packets:
            for inner in Trace.FromString(zlib.decompress(packet.compressed_packets)).packet:
                self._packet(inner, out)

    def _sequence(self, packet: Any) -> _Sequence:
        key = packet.trusted_packet_sequence_id
        seq = self._sequences.get(key)
        cleared = packet.incremental_state_cleared or (
            packet.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED
        )
        if seq is None or cleared:
            seq = self._sequences[key] = _Sequence(
                default_track=seq.default_track if seq is not None else 0
            )
        if packet.HasField("trace_packet_defaults"):
            seq.default_track = packet.trace_packet_defaults.track_event_defaults.track_uuid
        if packet.HasField("interned_data"):
            seq.intern(packet.interned_data)
        return seq

    def _event(self, packet: Any, seq: _Sequence, out: _Sink) -> None:
        # One ListFields call (in C) for the fields an event has, instead of a HasField
        # and a read per field it might have: most of a packet's decode time.
        got = {f.number: v for f, v in packet.track_event.ListFields()}
        ts = packet.timestamp
        self.last_ts = max(self.last_ts, ts)
        track = got.get(_TRACK_UUID, seq.default_track)
        kind = got.get(_TYPE, 0)
        raw = got.get(_ANNOTATIONS)
        args = read_annotations(raw, seq.arg_names, seq.arg_strings, seq.seen) if raw else {}
        if _CORRELATION in got:  # Perfetto's own field: Kineto's `correlation` arg
            args.setdefault("correlation", got[_CORRELATION])
        flows = [*got.get(_FLOWS, ()), *got.get(_FLOWS_OLD, ())]
        ends = [*got.get(_ENDS, ()), *got.get(_ENDS_OLD, ())]
        if kind == SLICE_END:
            self._end(track, ts, args, flows, ends, out)
            return
        name = got.get(_NAME)
        name = text(name) if name is not None else seq.names.get(got.get(_NAME_IID, 0), "")
        cats = [seq.categories.get(i, "") for i in got.get(_CATEGORY_IIDS, ())]
        cat = ",".join([*cats, *map(text, got.get(_CATEGORIES, ()))])
        if kind == SLICE_BEGIN:
            slot: list[Event | None] = [None]
            self._slots.append(slot)
            self._open.setdefault(track, []).append(_Open(ts, name, cat, args, flows, ends, slot))
        elif kind == INSTANT:
            instant = self._emit("i", track, ts, 0, name, cat, args)
            out.append(instant)
            self._link(instant, flows, ends, out)
        elif kind == COUNTER:
            value = got.get(_DOUBLE_COUNTER, got.get(_COUNTER, 0))
            name = name or self.tracks.name(track)
            out.append(self._emit("C", track, ts, 0, name, cat, {"value": value}))

    def _end(
        self,
        track: int,
        ts: int,
        args: dict[str, Any],
        flows: list[int],
        ends: list[int],
        out: _Sink,
    ) -> None:
        stack = self._open.get(track)
        if not stack:
            self._unmatched_ends += 1
            return
        begun = stack.pop()
        begun.args.update(args)
        done = self._emit("X", track, begun.ts, ts - begun.ts, begun.name, begun.cat, begun.args)
        begun.slot[0] = done
        self._link(done, [*begun.flows, *flows], [*begun.ends, *ends], out)

    def _emit(
        self, ph: str, track: int, ts: int, dur: int, name: str, cat: str, args: dict[str, Any]
    ) -> Event:
        pid, tid = self.tracks.place(track)
        raw = msgspec.Raw(_encode(args)) if args else _NO_ARGS
        return Event(
            ph=ph,
            cat=cat or None,
            name=name,
            pid=pid,
            tid=tid,
            ts=ts / 1000,
            dur=dur / 1000,
            args=raw,
        )

    def _link(self, event: Event, flows: list[int], ends: list[int], out: _Sink) -> None:
        """Flow arrows. Slices come out as they end, so either side of a flow may come
        first: the two events of an id are paired, the earlier one is the source."""
        for flow in [*flows, *ends]:
            other = self._flows.pop(flow, None)
            if other is None:
                self._flows[flow] = (event, flow in ends)
                continue
            earlier = float(other[0].ts or 0) <= float(event.ts or 0)  # type: ignore[arg-type]
            source, target = (other[0], event) if earlier else (event, other[0])
            kind = _flow_kind(source.cat, target.cat)
            out.append(_flow_event("s", source, flow, kind))
            out.append(_flow_event("f", target, flow, kind))

    def _lone_flows(self) -> list[Event]:
        """Flow ids seen once: a start whose target was not recorded (or an end whose
        source was not), kept as the JSON form keeps such a lone s or f event."""
        out = []
        for flow, (event, terminating) in self._flows.items():
            ph = "f" if terminating else "s"
            out.append(_flow_event(ph, event, flow, _flow_kind(event.cat)))
        self._flows.clear()
        return out

    def finish(self) -> list[Event]:
        """The events left; slices still open at the end of the file end there (with a
        warning)."""
        unended = 0
        for track, stack in self._open.items():
            for begun in stack:
                unended += 1
                dur = max(0, self.last_ts - begun.ts)
                begun.slot[0] = self._emit(
                    "X", track, begun.ts, dur, begun.name, begun.cat, begun.args
                )
        self._open.clear()
        self._slots.extend([event] for event in self._lone_flows())
        out = self._take(True)
        if unended:
            self.report.warnings.append(
                f"{unended} slices had no end in the file: read as ending at its last timestamp"
            )
        if self._unmatched_ends:
            self.report.warnings.append(
                f"{self._unmatched_ends} slice ends had no begin on their track: skipped"
            )
        if self.tracks.unknown:
            self.report.warnings.append(
                f"{len(self.tracks.unknown)} tracks had events but no descriptor: "
                "named by their uuid"
            )
        return out


def _flow_kind(*categories: str | None) -> str:
    """Kineto's arrow kind: "ac2g" where a side is a launch call or GPU work (between a
    launch and its kernel), "fwdbwd" otherwise (between operators)."""
    for category in categories:
        kind = CATEGORY_KINDS.get((category or "").lower())
        if kind in GPU_ACTIVITY_KINDS or kind in LAUNCH_KINDS:
            return "ac2g"
    return "fwdbwd"


def _flow_event(ph: str, at: Event, flow: int, kind: str) -> Event:
    return Event(
        ph=ph,
        cat=kind,
        name=kind,
        pid=at.pid,
        tid=at.tid,
        ts=at.ts,
        id=flow,
        bp="e" if ph == "f" else None,
    )


def _metadata_value(item: Any) -> Any:
    if item.HasField("json_value"):
        try:
            return msgspec.json.decode(item.json_value)
        except msgspec.DecodeError:
            return text(item.json_value)
    if item.HasField("int_value"):
        return item.int_value
    if item.HasField("bool_value"):
        return item.bool_value
    return text(item.string_value)


def iter_events(
    runs: Iterator[bytes], reader: PacketReader, batch: int = 50_000
) -> Iterator[list[Event]]:
    """Events in batches of about `batch`, then the slices left open."""
    pending: list[Event] = []
    for run in runs:
        pending.extend(reader.events(run))
        if len(pending) >= batch:
            yield pending
            pending = []
    pending.extend(reader.finish())
    if pending:
        yield pending
