"""Write a Kineto JSON trace as a Perfetto protobuf trace, as a producer of
TracePacket / TrackEvent streams does: the test data of the protobuf reader (the same
trace in both forms must give the same numbers in every view).

Each (pid, tid) is a thread track (a process track per pid, a child track named by the
id where an id is not a 32-bit number); complete events are SLICE_BEGIN / SLICE_END
pairs with their args as debug annotations (names and categories interned per sequence,
half the annotation names inline); instants are INSTANT; flows are flow ids on the
slices they join (`ac2g` and `fwdbwd` ids kept apart); counters are counter tracks; the
top-level keys are ChromeEventBundle metadata. Overlapping complete events of one
thread (Perfetto nests slices per track) go to a child track of the thread.
"""

from __future__ import annotations

import bisect
import gzip
import json
from collections import defaultdict
from decimal import Decimal
from typing import Any

from kinetoscope.ingest.perfetto.schema import (
    COUNTER,
    INSTANT,
    MESSAGES,
    SLICE_BEGIN,
    SLICE_END,
    Trace,
)

_INT32 = range(-(2**31), 2**31)
_SEQUENCE = 7


class _Writer:
    def __init__(self) -> None:
        self.trace = Trace()
        self.next_uuid = 100
        self.process_tracks: dict[str, int] = {}
        self.thread_tracks: dict[tuple[str, str], list[int]] = {}
        self.lanes: dict[int, list[float]] = defaultdict(list)  # track → open slice ends
        self.counter_tracks: dict[tuple[Any, str], int] = {}
        self.interned: dict[str, dict[str, int]] = defaultdict(dict)
        self.meta: dict[tuple[str, str | None], dict[str, Any]] = defaultdict(dict)
        self.meta_ids: dict[tuple[str, str | None], tuple[Any, Any]] = {}
        self.first = True
        self.unbound_flows = 0

    def packet(self) -> Any:
        packet = self.trace.packet.add()
        packet.trusted_packet_sequence_id = _SEQUENCE
        if self.first:
            packet.sequence_flags = 1  # SEQ_INCREMENTAL_STATE_CLEARED
            self.first = False
        return packet

    def uuid(self) -> int:
        self.next_uuid += 1
        return self.next_uuid

    def iid(self, packet: Any, table: str, text: str) -> int:
        known = self.interned[table]
        if text not in known:
            known[text] = len(known) + 1
            entry = getattr(packet.interned_data, table).add(iid=known[text])
            if table == "debug_annotation_string_values":
                entry.str = text.encode()
            else:
                entry.name = text
        return known[text]

    # --- tracks ------------------------------------------------------------------------

    # Tracks and metadata are keyed by the ids' text, as the model joins metadata to
    # events (2020 traces give a thread's tid as text in its metadata, a number elsewhere).

    def process_track(self, pid: Any) -> int:
        if str(pid) not in self.process_tracks:
            uuid = self.process_tracks[str(pid)] = self.uuid()
            desc = self.packet().track_descriptor
            desc.uuid = uuid
            meta = self.meta[(str(pid), None)]
            if isinstance(pid, int) and pid in _INT32:
                desc.process.pid = pid
                if "process_name" in meta:
                    desc.process.process_name = str(meta["process_name"])
                if "process_labels" in meta:
                    desc.process.process_labels.append(str(meta["process_labels"]))
                if "process_sort_index" in meta:
                    desc.process.legacy_sort_index = int(meta["process_sort_index"])
            else:
                desc.name = str(pid)
                if "process_sort_index" in meta:
                    desc.sibling_order_rank = int(meta["process_sort_index"])
        return self.process_tracks[str(pid)]

    def thread_track(self, pid: Any, tid: Any, lane: int) -> int:
        lanes = self.thread_tracks.setdefault((str(pid), str(tid)), [])
        while len(lanes) <= lane:
            uuid = self.uuid()
            parent = self.process_track(pid)
            desc = self.packet().track_descriptor
            desc.uuid = uuid
            desc.parent_uuid = parent
            # 2020 traces write tids as digit strings: a number here, as the reader reads
            # digit names.
            numeric_tid = isinstance(tid, int) or (isinstance(tid, str) and tid.isdigit())
            numeric = isinstance(pid, int) and pid in _INT32 and numeric_tid
            if numeric:
                desc.thread.pid, desc.thread.tid = pid, int(tid)
                meta = self.meta[(str(pid), str(tid))] if not lanes else {}
                if "thread_name" in meta:
                    desc.thread.thread_name = str(meta["thread_name"])
                if "thread_sort_index" in meta:
                    desc.thread.legacy_sort_index = int(meta["thread_sort_index"])
            else:
                desc.name = str(tid)
                meta = self.meta[(str(pid), str(tid))] if not lanes else {}
                if "thread_sort_index" in meta:
                    desc.sibling_order_rank = int(meta["thread_sort_index"])
            lanes.append(uuid)
        return lanes[lane]

    def counter_track(self, pid: Any, name: str) -> int:
        key = (pid, name)
        if key not in self.counter_tracks:
            uuid = self.counter_tracks[key] = self.uuid()
            desc = self.packet().track_descriptor
            desc.uuid, desc.parent_uuid, desc.name = uuid, self.process_track(pid), name
            desc.counter.SetInParent()
        return self.counter_tracks[key]

    # --- events ------------------------------------------------------------------------

    def event(self, kind: int, track: int, ts_ns: int, ev: dict[str, Any] | None) -> Any:
        packet = self.packet()
        packet.timestamp = ts_ns
        event = packet.track_event
        event.type = kind
        event.track_uuid = track
        if ev is None:
            return event
        odd = len(self.trace.packet) % 2 == 1
        name, cat = ev.get("name"), ev.get("cat")
        if name is not None:
            if odd:
                event.name_iid = self.iid(packet, "event_names", str(name))
            else:
                event.name = str(name)
        if cat is not None:
            if odd:
                event.category_iids.append(self.iid(packet, "event_categories", str(cat)))
            else:
                event.categories.append(str(cat))
        for key, value in (ev.get("args") or {}).items():
            annotation = event.debug_annotations.add()
            if odd:
                annotation.name_iid = self.iid(packet, "debug_annotation_names", key)
            else:
                annotation.name = key
            self.value(packet, annotation, value, odd)
        return event

    def value(self, packet: Any, annotation: Any, value: Any, odd: bool) -> None:
        if isinstance(value, bool):
            annotation.bool_value = value
        elif isinstance(value, int):
            if -(2**63) <= value < 2**63:
                annotation.int_value = value
            else:
                annotation.uint_value = value
        elif isinstance(value, float):
            annotation.double_value = value
        elif isinstance(value, str):
            if odd and len(value) < 64:
                iid = self.iid(packet, "debug_annotation_string_values", value)
                annotation.string_value_iid = iid
            else:
                annotation.string_value = value
        elif isinstance(value, list):
            annotation.SetInParent()
            for item in value:
                self.value(packet, annotation.array_values.add(), item, odd)
            if not value:
                annotation.legacy_json_value = "[]"
        elif isinstance(value, dict):
            for key, item in value.items():
                entry = annotation.dict_entries.add(name=key)
                self.value(packet, entry, item, odd)
            if not value:
                annotation.legacy_json_value = "{}"
        else:
            annotation.legacy_json_value = json.dumps(value)


def _ns(us: Any) -> int:
    """Nanoseconds, exactly: a float of microseconds times 1000 rounds off above 2**53 ns
    (epoch timestamps), which would move events by up to ~256 ns."""
    return int((Decimal(repr(float(us))) * 1000).to_integral_value())


def _lanes(slices: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Slices of one thread in lanes where each lane nests (Perfetto's rule per track)."""
    lanes: list[list[dict[str, Any]]] = []
    stacks: list[list[int]] = []
    for ev in sorted(slices, key=lambda e: (_ns(e["ts"]), -_ns(e.get("dur", 0)))):
        start = _ns(ev["ts"])
        end = start + _ns(ev.get("dur", 0))
        for lane in range(len(stacks)):
            stack = stacks[lane]
            while stack and stack[-1] <= start:
                stack.pop()
            if not stack or stack[-1] >= end:
                break
        else:
            lanes.append([])
            stacks.append([])
            lane, stack = len(stacks) - 1, stacks[-1]
        stack.append(end)
        lanes[lane].append(ev)
    return lanes


def _write_slices(writer: _Writer, pid: Any, tid: Any, slices: list[dict[str, Any]]) -> dict:
    """BEGIN/END pairs lane by lane; the id of each slice's BEGIN event by the slice."""
    begins: dict[int, Any] = {}
    for lane, events in enumerate(_lanes(slices)):
        track = writer.thread_track(pid, tid, lane)
        open_ends: list[int] = []
        for ev in events:
            start = _ns(ev["ts"])
            while open_ends and open_ends[-1] <= start:
                writer.event(SLICE_END, track, open_ends.pop(), None)
            begins[id(ev)] = writer.event(SLICE_BEGIN, track, start, ev)
            open_ends.append(start + _ns(ev.get("dur", 0)))
        while open_ends:
            writer.event(SLICE_END, track, open_ends.pop(), None)
    return begins


def _bind_flows(events: list[dict[str, Any]], begins: dict[int, Any]) -> int:
    """Flow ids on the slices their s / f events bind to: the slice of their thread that
    starts at their time, else the innermost one that encloses it (Chrome's rule; the
    protobuf form has no flow times of its own, so such a flow moves to its slice's
    start). Flows that meet no slice are counted and left out; an id with two starts or
    two ends is counted too (its protobuf form pairs them otherwise)."""
    by_thread: dict[tuple[str, str], list[tuple[int, int, dict[str, Any]]]] = defaultdict(list)
    for ev in events:
        if ev.get("ph") == "X" and isinstance(ev.get("ts"), (int, float)):
            start = _ns(ev["ts"])
            key = (str(ev.get("pid")), str(ev.get("tid")))
            by_thread[key].append((start, start + _ns(ev.get("dur", 0)), ev))
    for slices in by_thread.values():
        slices.sort(key=lambda s: (s[0], -s[1]))
    ids: dict[tuple[Any, Any], int] = {}
    ends_seen: set[tuple[tuple[Any, Any], str]] = set()
    missed = 0
    for ev in events:
        if ev.get("ph") not in ("s", "f"):
            continue
        slice_ = _binding(
            by_thread.get((str(ev.get("pid")), str(ev.get("tid"))), []), _ns(ev["ts"])
        )
        if slice_ is None:
            missed += 1
            continue
        key = (ev.get("cat"), ev.get("id"))
        flow = ids.setdefault(key, len(ids) + 1)
        if (key, ev["ph"]) in ends_seen:  # an id used twice: Perfetto pairs it otherwise
            missed += 1
        ends_seen.add((key, ev["ph"]))
        track_event = begins[id(slice_)]
        if ev["ph"] == "s":
            track_event.flow_ids.append(flow)
        else:
            track_event.terminating_flow_ids.append(flow)
    return missed


def _binding(slices: list[tuple[int, int, dict[str, Any]]], ts: int) -> dict[str, Any] | None:
    at = bisect.bisect_right(slices, ts, key=lambda s: s[0])
    if at and slices[at - 1][0] == ts:  # starts there: the first (outermost) of them
        first = at - 1
        while first and slices[first - 1][0] == ts:
            first -= 1
        return slices[first][2]
    for start, end, ev in reversed(slices[max(0, at - 64) : at]):
        if start <= ts <= end:
            return ev
    return None


def write_perfetto(trace: dict[str, Any] | list[Any]) -> tuple[bytes, int]:
    """The Perfetto protobuf form of a Kineto JSON trace (a parsed object or bare array)."""
    header = trace if isinstance(trace, dict) else {"traceEvents": trace}
    events = [e for e in header.get("traceEvents", []) if isinstance(e, dict) and e]
    writer = _Writer()
    bundle = writer.packet().chrome_events
    for key, value in header.items():
        if key == "traceEvents":
            continue
        item = bundle.metadata.add(name=key)
        if isinstance(value, bool):
            item.bool_value = value
        elif isinstance(value, int):
            item.int_value = value
        elif isinstance(value, str):
            item.string_value = value
        else:
            item.json_value = json.dumps(value)
    for ev in events:
        if ev.get("ph") == "M":
            thread = ev.get("name", "").startswith("thread")
            ids = (ev.get("pid"), ev.get("tid") if thread else None)
            meta_key = (str(ids[0]), str(ids[1]) if thread else None)
            writer.meta_ids.setdefault(meta_key, ids)
            value = next(iter((ev.get("args") or {}).values()), None)
            writer.meta[meta_key][str(ev.get("name"))] = value
    by_thread: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
    for ev in events:
        if ev.get("ph") == "X" and isinstance(ev.get("ts"), (int, float)):
            by_thread[(ev.get("pid"), ev.get("tid"))].append(ev)
    begins: dict[int, Any] = {}
    for (pid, tid), slices in by_thread.items():
        begins.update(_write_slices(writer, pid, tid, slices))
    writer.unbound_flows = _bind_flows(events, begins)
    for ev in events:
        if ev.get("ph") in ("i", "I"):
            track = writer.thread_track(ev.get("pid"), ev.get("tid"), 0)
            writer.event(INSTANT, track, _ns(ev["ts"]), ev)
        elif ev.get("ph") == "C":
            for key, value in (ev.get("args") or {}).items():
                track = writer.counter_track(ev.get("pid"), f"{ev.get('name')} {key}")
                counter = writer.event(COUNTER, track, _ns(ev["ts"]), None)
                counter.double_counter_value = float(value)
    # Tracks of pids and threads that only have metadata (the JSON form names them too).
    for pid, tid in writer.meta_ids.values():
        if tid is None:
            writer.process_track(pid)
        else:
            writer.thread_track(pid, tid, 0)
    return writer.trace.SerializeToString(), writer.unbound_flows


def write_perfetto_file(json_path: str, out_path: str) -> int:
    """Write the protobuf form of a JSON trace file; how many of its flow events are bound
    to no slice (they have no protobuf form)."""
    opener = gzip.open if json_path.endswith(".gz") else open
    with opener(json_path, "rb") as f:
        trace = json.load(f)
    data, unbound = write_perfetto(trace)
    if out_path.endswith(".gz"):
        data = gzip.compress(data, 1)
    with open(out_path, "wb") as out:
        out.write(data)
    return unbound


__all__ = ["MESSAGES", "write_perfetto", "write_perfetto_file"]
