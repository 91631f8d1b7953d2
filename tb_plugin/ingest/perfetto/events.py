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

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from google.protobuf.message import DecodeError

from ..limits import load_memory_bytes, max_open_slices
from ..schema import Event
from ..text_blocks import DecodeReport, too_large, too_many_open
from .annotations import read_annotations
from .flows import flow_event, flow_kind, metadata_value
from .held import (
    EVENT_COST,
    FLOW_COST,
    META_COST,
    OPEN_COST,
    PLACE_COST,
    Sequence,
    Sink,
    Slot,
)
from .rules import (
    BAD_VALUE,
    CHECK_EVERY,
    COUNTER,
    HOLD_MAX,
    INSTANT,
    SEQ_INCREMENTAL_STATE_CLEARED,
    SLICE_BEGIN,
    SLICE_END,
    failure,
    finish_warnings,
    text,
)
from .schema import Trace, TracePacket
from .stream import inflated_runs, packet_spans
from .tracks import MetaEntry, TrackTable

# TrackEvent field numbers (Perfetto's track_event.proto).
_CATEGORY_IIDS, _ANNOTATIONS, _TYPE, _NAME_IID, _TRACK_UUID = 3, 4, 9, 10, 11
_CATEGORIES, _NAME, _COUNTER, _DOUBLE_COUNTER = 22, 23, 30, 44
_FLOWS_OLD, _ENDS_OLD, _FLOWS, _ENDS, _CORRELATION = 36, 42, 47, 48, 52
# What a damaged packet raises while it is read: it is skipped, the file goes on.
BAD_PACKET = (DecodeError, *BAD_VALUE)
_encode = msgspec.json.Encoder().encode
_NO_ARGS = msgspec.Raw()


def _raw(args: dict[str, Any]) -> msgspec.Raw:
    return msgspec.Raw(_encode(args)) if args else _NO_ARGS


@dataclass
class _Open:
    """A slice whose END has not come yet."""

    ts: int
    name: str
    cat: str
    args: msgspec.Raw  # encoded at its BEGIN: its memory is known while it waits
    flows: list[int]
    ends: list[int]
    slot: Slot  # its place in the output, filled at its END
    cost: int


@dataclass
class PacketReader:
    """Turns runs of packets into events; one per file."""

    report: DecodeReport
    tracks: TrackTable = field(default_factory=TrackTable)
    header: dict[str, Any] = field(default_factory=dict)
    meta: list[MetaEntry] = field(default_factory=list)
    _sequences: dict[int, Sequence] = field(default_factory=dict)
    _open: dict[int, list[_Open]] = field(default_factory=dict)
    _flows: dict[int, tuple[Event, bool]] = field(default_factory=dict)
    # Events in the order their slices begin (as the JSON form lists them: for two slices
    # of one span the outer one first), each slot filled when known.
    _slots: deque[Slot] = field(default_factory=deque)
    _unmatched_ends: int = 0
    last_ts: int = 0
    packets: int = 0  # packets read
    bad_packets: int = 0  # packets skipped: they could not be read
    first_bad: str = ""
    _open_bytes: int = 0
    _open_slices: int = 0  # begun, not yet ended
    _max_open: int = field(default_factory=max_open_slices)
    _tables_bytes: int = 0  # the sequences' interned tables and annotations
    _cap: int = field(default_factory=load_memory_bytes)
    step: Callable[[], None] | None = None  # called per inflate step of compressed packets
    # Where complete events go, in order (the batches of the model builder).
    deliver: Callable[[list[Event]], None] = lambda events: None

    def __post_init__(self) -> None:
        self._out = Sink(self._slots)

    def read(self, run: bytes | memoryview) -> None:
        """Reads the packets of `run`; the events complete after them go to `deliver`, in
        begin order (past `HOLD_MAX` waiting ones, even after a slice still open)."""
        self._run(run, nested=False)
        self.deliver(self._take(len(self._slots) > HOLD_MAX))

    def _run(self, run: bytes | memoryview, nested: bool) -> None:
        """Reads a run of whole packets: with one protobuf call, else (a packet of it is
        damaged) packet by packet, skipping those that cannot be read."""
        try:
            packets = Trace.FromString(run).packet
        except DecodeError:
            packets = None
        if packets is not None:
            for packet in packets:
                self._guarded(packet, nested)
            return
        for start, end in packet_spans(run):
            try:
                packet = TracePacket.FromString(run[start:end])
            except DecodeError as err:
                self._skip(err)
                continue
            self._guarded(packet, nested)

    def _guarded(self, packet: Any, nested: bool) -> None:
        try:
            self._packet(packet, nested)
        except BAD_PACKET as err:
            self._skip(err)
        self.packets += 1
        if self.packets % CHECK_EVERY == 0:
            self.check_memory()

    def _skip(self, err: BaseException) -> None:
        self.bad_packets += 1
        if not self.first_bad:
            self.first_bad = failure(err)

    def held_bytes(self) -> int:
        """About the memory the reader holds between packets."""
        return (
            self._open_bytes
            + self._out.nbytes
            + self._tables_bytes
            + len(self._flows) * FLOW_COST
            + (len(self._open) + len(self.tracks.unknown)) * PLACE_COST
            + self.tracks.nbytes
            + len(self.meta) * META_COST
        )

    def check_memory(self) -> None:
        """Stops the load (`too_large`) when what the reader holds and the builder's
        columns pass the load memory cap, or more slices are open than a trace holds."""
        if self._open_slices > self._max_open:
            raise too_many_open(self._max_open, self.report.event_count + len(self._slots))
        if self.held_bytes() + self.report.held_bytes > self._cap:
            raise too_large(self._cap, self.report.event_count + len(self._slots))

    def _take(self, all_done: bool) -> list[Event]:
        out: list[Event] = []
        slots = self._slots
        gone = 0
        while slots and slots[0][0] is not None:
            event, cost = slots.popleft()
            out.append(event)
            gone += cost
        if all_done:
            waiting = deque(slot for slot in slots if slot[0] is None)
            for event, cost in slots:
                if event is not None:
                    out.append(event)
                    gone += cost
            self._slots = self._out.slots = waiting
        self._out.nbytes -= gone
        return out

    def _packet(self, packet: Any, nested: bool) -> None:
        seq = self._sequence(packet)
        if packet.HasField("track_event"):
            self._event(packet, seq)
        elif packet.HasField("track_descriptor"):
            self.meta.extend(self.tracks.describe(packet.track_descriptor))
        elif packet.HasField("chrome_events"):
            for item in packet.chrome_events.metadata:
                self.header[text(item.name)] = metadata_value(item)
        elif packet.compressed_packets:
            if nested:  # Perfetto never nests them
                raise ValueError("compressed packets inside compressed packets")
            for run in inflated_runs(packet.compressed_packets, self.report, self.step):
                self._run(run, nested=True)
                self.check_memory()
                self.deliver(self._take(False))  # a packet may inflate to gigabytes

    def _sequence(self, packet: Any) -> Sequence:
        key = packet.trusted_packet_sequence_id
        seq = self._sequences.get(key)
        cleared = packet.incremental_state_cleared or (
            packet.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED
        )
        if seq is None or cleared:
            if seq is not None:
                self._tables_bytes -= seq.nbytes + seq.seen.nbytes
            seq = self._sequences[key] = Sequence(
                default_track=seq.default_track if seq is not None else 0
            )
            self._tables_bytes += seq.nbytes
        if packet.HasField("trace_packet_defaults"):
            seq.default_track = packet.trace_packet_defaults.track_event_defaults.track_uuid
        if packet.HasField("interned_data"):
            self._tables_bytes += seq.intern(packet.interned_data)
        return seq

    def _event(self, packet: Any, seq: Sequence) -> None:
        # One ListFields call (in C) for the fields an event has, instead of a HasField
        # and a read per field it might have: most of a packet's decode time.
        got = {f.number: v for f, v in packet.track_event.ListFields()}
        ts = packet.timestamp
        self.last_ts = max(self.last_ts, ts)
        track = got.get(_TRACK_UUID, seq.default_track)
        kind = got.get(_TYPE, 0)
        raw = got.get(_ANNOTATIONS)
        args: dict[str, Any] = {}
        if raw:
            seen = seq.seen.nbytes
            args = read_annotations(raw, seq.arg_names, seq.arg_strings, seq.seen)
            self._tables_bytes += seq.seen.nbytes - seen
        if _CORRELATION in got:  # Perfetto's own field: Kineto's `correlation` arg
            args.setdefault("correlation", got[_CORRELATION])
        flows = [*got.get(_FLOWS, ()), *got.get(_FLOWS_OLD, ())]
        ends = [*got.get(_ENDS, ()), *got.get(_ENDS_OLD, ())]
        if kind == SLICE_END:
            self._end(track, ts, args, flows, ends)
            return
        name = got.get(_NAME)
        name = text(name) if name is not None else seq.names.get(got.get(_NAME_IID, 0), "")
        cats = [seq.categories.get(i, "") for i in got.get(_CATEGORY_IIDS, ())]
        cat = ",".join([*cats, *map(text, got.get(_CATEGORIES, ()))])
        out = self._out
        if kind == SLICE_BEGIN:
            encoded = _raw(args)
            cost = OPEN_COST + len(encoded) + len(name) + len(cat) + 8 * len(flows + ends)
            slot: Slot = [None, 0]
            self._open.setdefault(track, []).append(
                _Open(ts, name, cat, encoded, flows, ends, slot, cost)
            )
            self._slots.append(slot)
            self._open_bytes += cost
            self._open_slices += 1
        elif kind == INSTANT:
            instant = self._emit("i", track, ts, 0, name, cat, _raw(args))
            out.append(instant)
            self._link(instant, flows, ends)
        elif kind == COUNTER:
            value = got.get(_DOUBLE_COUNTER, got.get(_COUNTER, 0))
            name = name or self.tracks.name(track)
            out.append(self._emit("C", track, ts, 0, name, cat, _raw({"value": value})))

    def _end(
        self, track: int, ts: int, args: dict[str, Any], flows: list[int], ends: list[int]
    ) -> None:
        stack = self._open.get(track)
        if not stack:
            self._unmatched_ends += 1
            return
        begun = stack[-1]
        encoded = begun.args
        if args:  # the END's annotations join the BEGIN's
            merged = msgspec.json.decode(encoded) if encoded else {}
            merged.update(args)
            encoded = _raw(merged)
        done = self._emit("X", track, begun.ts, ts - begun.ts, begun.name, begun.cat, encoded)
        stack.pop()
        if not stack:
            del self._open[track]
        self._open_bytes -= begun.cost
        self._open_slices -= 1
        self._fill(begun.slot, done)
        self._link(done, [*begun.flows, *flows], [*begun.ends, *ends])

    def _fill(self, slot: Slot, event: Event) -> None:
        cost = EVENT_COST + len(event.args)
        slot[0], slot[1] = event, cost
        self._out.nbytes += cost

    def _emit(
        self, ph: str, track: int, ts: int, dur: int, name: str, cat: str, args: msgspec.Raw
    ) -> Event:
        pid, tid = self.tracks.place(track)
        return Event(
            ph=ph,
            cat=cat or None,
            name=name,
            pid=pid,
            tid=tid,
            ts=ts / 1000,
            dur=dur / 1000,
            args=args,
        )

    def _link(self, event: Event, flows: list[int], ends: list[int]) -> None:
        """Flow arrows. Slices come out as they end, so either side of a flow may come
        first: the two events of an id are paired, the earlier one is the source."""
        out = self._out
        for flow in [*flows, *ends]:
            other = self._flows.pop(flow, None)
            if other is None:
                self._flows[flow] = (event, flow in ends)
                continue
            earlier = float(other[0].ts or 0) <= float(event.ts or 0)  # type: ignore[arg-type]
            source, target = (other[0], event) if earlier else (event, other[0])
            kind = flow_kind(source.cat, target.cat)
            out.append(flow_event("s", source, flow, kind))
            out.append(flow_event("f", target, flow, kind))

    def _lone_flows(self) -> list[Event]:
        """Flow ids seen once: a start whose target was not recorded (or an end whose
        source was not), kept as the JSON form keeps such a lone s or f event."""
        out = []
        for flow, (event, terminating) in self._flows.items():
            ph = "f" if terminating else "s"
            out.append(flow_event(ph, event, flow, flow_kind(event.cat)))
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
                event = self._emit("X", track, begun.ts, dur, begun.name, begun.cat, begun.args)
                self._fill(begun.slot, event)
        self._open.clear()
        self._open_bytes = 0
        self._open_slices = 0
        for event in self._lone_flows():
            self._out.append(event)
        out = self._take(True)
        finish_warnings(
            self.report,
            unended,
            self._unmatched_ends,
            len(self.tracks.unknown),
            self.bad_packets,
            self.first_bad,
        )
        return out
