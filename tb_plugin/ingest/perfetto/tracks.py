"""Perfetto tracks as Kineto's processes and threads.

A track's pid is the `ProcessDescriptor` pid of the track or its nearest ancestor (else a
`ThreadDescriptor`'s pid, else the name of its root track: Kineto's "Spans" and "Traces"
pids are names); its tid is its `ThreadDescriptor` tid, else its name when it has a
parent. A name of digits is read as a number, as Kineto writes stream and thread ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rules import text

# (pid, tid, kind, value): the metadata the JSON form writes as ph "M" events.
MetaEntry = tuple[Any, Any, str, Any]


@dataclass
class Track:
    uuid: int
    parent: int = 0
    name: str = ""
    pid: int | None = None  # of its ProcessDescriptor or ThreadDescriptor
    tid: int | None = None  # of its ThreadDescriptor
    is_process: bool = False
    is_counter: bool = False


_ID_DIGITS = 20  # a 64-bit id has at most 20 digits; a longer name stays a name


def name_id(name: str) -> int | str:
    """A track name of ASCII digits as the number it writes (`"7"` → 7); any other name
    (`"²"`, other scripts' digits, thousands of digits) as it is."""
    if name.isascii() and name.isdigit() and len(name) <= _ID_DIGITS:
        return int(name)
    return name


TRACK_COST = 250  # bytes of one described track, besides its name (counted by the reader)


@dataclass
class TrackTable:
    tracks: dict[int, Track] = field(default_factory=dict)
    _places: dict[int, tuple[Any, Any]] = field(default_factory=dict)
    unknown: set[int] = field(default_factory=set)
    nbytes: int = 0  # about what the tracks and their names hold

    def describe(self, descriptor: Any) -> list[MetaEntry]:
        """Record a TrackDescriptor; the process and thread metadata it states."""
        track = Track(
            uuid=descriptor.uuid, parent=descriptor.parent_uuid, name=text(descriptor.name)
        )
        meta: list[MetaEntry] = []
        if descriptor.HasField("process"):
            proc = descriptor.process
            track.pid, track.is_process = proc.pid, True
            if proc.process_name:
                meta.append((proc.pid, None, "process_name", text(proc.process_name)))
            if proc.process_labels:
                labels = ",".join(map(text, proc.process_labels))
                meta.append((proc.pid, None, "process_labels", labels))
            if proc.HasField("legacy_sort_index"):
                meta.append((proc.pid, None, "process_sort_index", proc.legacy_sort_index))
        if descriptor.HasField("thread"):
            thread = descriptor.thread
            track.pid, track.tid = thread.pid, thread.tid
            if thread.thread_name:
                meta.append((thread.pid, thread.tid, "thread_name", text(thread.thread_name)))
            if thread.HasField("legacy_sort_index"):
                meta.append((thread.pid, thread.tid, "thread_sort_index", thread.legacy_sort_index))
        track.is_counter = descriptor.HasField("counter")
        self.tracks[track.uuid] = track
        self.nbytes += TRACK_COST + len(track.name) + sum(len(str(m[3])) for m in meta)
        self._places.clear()  # a parent described late changes its children's places
        if not meta and descriptor.HasField("sibling_order_rank") and not track.is_counter:
            # A named process (Kineto's "Spans") or thread: its rank is its sort index.
            pid, tid = self.place(track.uuid)
            kind = "process_sort_index" if tid is None else "thread_sort_index"
            meta.append((pid, tid, kind, descriptor.sibling_order_rank))
        return meta

    def place(self, uuid: int) -> tuple[Any, Any]:
        """(pid, tid) of the events of a track."""
        known = self._places.get(uuid)
        if known is None:
            known = self._places[uuid] = self._resolve(uuid)
        return known

    def name(self, uuid: int) -> str:
        track = self.tracks.get(uuid)
        return track.name if track else ""

    def _resolve(self, uuid: int) -> tuple[Any, Any]:
        track = self.tracks.get(uuid)
        if track is None:
            self.unknown.add(uuid)
            return f"track {uuid}", None
        if track.tid is not None:
            return track.pid, track.tid
        pid: Any = track.pid
        chain, seen = track, {uuid}
        while pid is None and chain.parent and chain.parent not in seen:
            seen.add(chain.parent)
            parent = self.tracks.get(chain.parent)
            if parent is None:
                break
            chain, pid = parent, parent.pid
        if pid is None:  # a named process (its name may be empty, as a JSON pid "")
            pid = name_id(chain.name)
        tid = name_id(track.name) if track.parent and not track.is_process else None
        return pid, tid
