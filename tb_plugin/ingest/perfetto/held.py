"""What a Perfetto reader holds between packets, and about what it costs in memory.

A trace may open slices that never end, hold finished events behind them, intern names
and describe tracks without bound; all of it counts against the load memory cap
(`limits.load_memory_bytes`) with the builder's columns, so a small file of packets that
would hold gigabytes stops with `too_large` instead. The costs are measured (tracemalloc,
CPython 3.11, 50,000 of each) and rounded up: they bound, they do not account.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..schema import Event
from .annotations import Seen
from .rules import text

OPEN_COST = 500  # one slice waiting for its end, besides its args and name
EVENT_COST = 330  # one finished event waiting behind a slice still open, besides its args
FLOW_COST = 300  # one flow id waiting for its other side
PLACE_COST = 150  # one track with events (its stack, place, maybe its unknown uuid)
SEQUENCE_COST = 800  # one packet sequence's tables, empty
ENTRY_COST = 120  # one interned name, besides its text
META_COST = 250  # one metadata entry (process or thread name, sort index)


@dataclass
class Sequence:
    """The incremental state of one packet sequence."""

    categories: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    arg_names: dict[int, str] = field(default_factory=dict)
    arg_strings: dict[int, str] = field(default_factory=dict)
    seen: Seen = field(default_factory=Seen)  # annotations read, by their bytes
    default_track: int = 0
    nbytes: int = SEQUENCE_COST  # the interned tables (the annotations: `seen.nbytes`)

    def intern(self, data: Any) -> int:
        """Records the interned entries of a packet; the bytes they add (less those of the
        annotations read, dropped when an annotation name or string iid changes text)."""
        added = 0
        changed = False
        for table, entries in (
            (self.categories, data.event_categories),
            (self.names, data.event_names),
            (self.arg_names, data.debug_annotation_names),
        ):
            for entry in entries:
                name = text(entry.name)
                changed |= table is self.arg_names and table.get(entry.iid, name) != name
                table[entry.iid] = name
                added += ENTRY_COST + len(name)
        for entry in data.debug_annotation_string_values:
            value = entry.str.decode("utf-8", "replace")
            changed |= self.arg_strings.get(entry.iid, value) != value
            self.arg_strings[entry.iid] = value
            added += ENTRY_COST + len(value)
        self.nbytes += added
        if changed and self.seen:
            added -= self.seen.nbytes
            self.seen.clear()
            self.seen.nbytes = 0
        return added


Slot = list[Any]  # [event or None until its slice ends, its cost in bytes]


class Sink:
    """Where events go as they are made: a filled place at the end of the output, its
    cost added to what the reader holds until the event goes out."""

    def __init__(self, slots: deque[Slot]) -> None:
        self.slots = slots
        self.nbytes = 0

    def append(self, event: Event) -> None:
        cost = EVENT_COST + len(event.args)
        self.slots.append([event, cost])
        self.nbytes += cost
