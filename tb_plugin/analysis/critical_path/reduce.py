"""A rank's graph reduced to what the cross-rank join needs, for runs too many to hold
every rank's trace: its collectives (arrival and end) and, to each arrival and each step's
start and end, the local path that set it (from the end of a collective before it, or from
work with no known dependency), re-timed under the change with the collectives' ends as
recorded. A small plain `PathSummary` per rank, computed where the rank is read (a
process, a cluster worker) and kept in the summary cache.

Joined, the summaries reproduce the recorded job exactly, and its critical path: the
local paths are the ones that bound each arrival. Under a change, each rank keeps the local
path that bound each arrival with the collectives ending as recorded; the cross-rank part
(who arrives last, what each collective's end moves) is exact (`method: "summaries"`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.common import distinct, repeated
from .anchors import Windows, windows
from .changes import Change, Scaled, lags
from .graph import COLLECTIVE, CPU, DUR, PATH, PORT, Graph, finish
from .parts import Part
from .path import Expand, Segment, merged, segments_of
from .path_summary import PACKED, VERSION, ArrayOrNumber, PathSummary, Reduced, Shape
from .retime import Timing, chain_origins, evaluate, walk_back
from .segments import SEGMENT_KINDS

LATE_US = 1e9  # the collectives' ends moved this late: which local paths start at them


def reduce_part(
    part: Part, change: Change | None, segments: bool = True, finished: bool = False
) -> PathSummary:
    """`reduce_shaped`'s summary."""
    return reduce_shaped(part, change, segments, finished)[0]


def reduce_shaped(
    part: Part, change: Change | None, segments: bool = True, finished: bool = False
) -> tuple[PathSummary, Shape]:
    """The rank's summary under `change` (None: as recorded). Its nodes keep their recorded
    times (the join reads its adds from them); a local path's own time is its length under
    the change. Each arrival (and each step's start and end) gets the local path that set
    it with the collectives ending as recorded, and, when another, the one from the latest
    collective end that reaches it (their ends moved LATE_US later): so a rank whose
    collective ends later than recorded (another rank slower) waits for it there.
    `segments`: keep each local path's segments (what it shows as); without them the
    summary is a fraction of the size and work, and a join asks for them again of the few
    ranks its path runs through (`ReducedPart`). `finished`: the part's graph was reduced
    before (under another change): its order and adds, which no change moves, are kept."""
    # The rank alone: its collectives end as recorded.
    graph = part.graph if finished else finish(part.graph)
    coll = part.collective_nodes
    collectives = distinct(coll[coll >= 0])
    factors, timings = timed(part, graph, change, collectives)
    expand = part.expander(factors, 0, 0) if segments else None
    local = _Local(Reduced(), graph, timings, graph.base_times(), expand)
    arrivals = local.collective_nodes(collectives, factors.transfer[collectives])
    steps = windows(part.anchors, timings[0])
    markers = _step_markers(local, part, steps)
    as_recorded = Timing(local.recorded, np.full(graph.events, -1, np.int64), graph.edge_lag)
    recorded_steps = windows(part.anchors, as_recorded)
    local.out.pieces["step_recorded_start"].append(recorded_steps.start)
    local.out.pieces["step_recorded_end"].append(recorded_steps.end)
    local.paths_to(*(np.concatenate(pair) for pair in zip(arrivals, markers)))
    nodes_of = np.full(coll.size, -1, dtype=np.int64)
    nodes_of[coll >= 0] = local.reduced_of[2 * coll[coll >= 0]] // 2
    local.out.pieces["collective_nodes"].append(nodes_of)
    shape = Shape(collectives, arrivals[1] // 2, steps.sink, **local.walked)
    return _summary(part, change, factors, local.out), shape


def timed(
    part: Part, graph: Graph, change: Change | None, collectives: np.ndarray
) -> tuple[Scaled, tuple[Timing, Timing]]:
    """The change's factors on the rank, and its (finished) graph evaluated under them
    twice: the `collectives` ending as recorded, and LATE_US late."""
    factors = part.factors(change)
    lag = lags(graph, part.own_times(factors), factors.transfer)
    late_add = graph.add.copy()
    late_add[2 * collectives + 1] += LATE_US
    return factors, (evaluate(graph, lag), evaluate(graph, lag, late_add))


def path_lengths(
    timings: tuple[Timing, Timing], event: np.ndarray, origin: np.ndarray, is_late: np.ndarray
) -> np.ndarray:
    """Each local path's own time: its event's time less its origin's, under the timing it
    was found under (`is_late`: the collectives' ends late)."""
    recorded_value, late_value = (timing.value for timing in timings)
    return np.where(
        is_late, late_value[event] - late_value[origin],
        recorded_value[event] - recorded_value[origin],
    )  # fmt: skip


def _step_markers(local: _Local, part: Part, steps: Windows) -> tuple[np.ndarray, np.ndarray]:
    """Each step's start and end as a zero-length node of the reduced graph (its events,
    offsets into the summary's step columns); returns the events and the markers' starts
    (start and end of each step in turn), the local paths into them to be found. The whole
    trace (no step recorded, start -1) starts at its earliest event and keeps -1 in the
    summary: the join takes its bounds from the whole job, as it does for a whole trace."""
    out, anchors = local.out, part.anchors
    start_event = anchors.start_event.astype(np.int64)
    whole = start_event < 0
    if whole.any():
        start_event[whole] = 2 * int(np.argmin(local.recorded[0::2]))
    events = np.stack([start_event, steps.sink.astype(np.int64)], axis=1).ravel()
    at = local.recorded[events]
    names = [out.name("step start"), out.name("step end")] if events.size else [0, 0]
    markers = out.nodes(CPU, np.tile(names, len(anchors)), 0, at, at)
    out.edges(2 * markers + 1, 2 * markers, DUR, 0.0)
    starts, ends = markers[0::2], markers[1::2]
    pieces = out.pieces
    pieces["step_start_event"].append(np.where(whole, -1, 2 * starts))
    pieces["step_end_event"].append(np.where(whole, -1, 2 * ends + 1))
    pieces["step_start_offset"].append(anchors.start_offset)
    pieces["step_end_offset"].append(steps.tail)
    # A step's start is a port too: the local paths after it start there (each path
    # stays within a step, so a rank's summary grows with its steps, not their square).
    # The first to claim an event keeps it: a collective's end, an earlier step's start.
    for event, marker in zip(start_event.tolist(), starts.tolist()):
        if local.reduced_of[event] < 0:
            local.reduced_of[event] = 2 * marker + 1  # the marker's end
    local.ports[start_event] = True
    return events, 2 * markers


@dataclass
class _Local:
    """A rank's graph under a change, and the reduced graph made of it."""

    out: Reduced
    graph: Graph
    timings: tuple[Timing, Timing]  # the collectives' ends as recorded, and late
    recorded: np.ndarray  # each event's recorded time
    expand: Expand | None  # None: no segments kept
    reduced_of: np.ndarray = field(init=False)  # event -> reduced event, -1: none
    ports: np.ndarray = field(init=False)  # where local paths start
    walked: dict[str, Any] = field(init=False)  # `Shape`'s fields of the walk (`paths_to`)

    def __post_init__(self) -> None:
        self.reduced_of = np.full(self.graph.events, -1, dtype=np.int64)
        self.ports = np.zeros(self.graph.events, dtype=bool)

    def collective_nodes(
        self, nodes: np.ndarray, transfer: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The collectives `nodes` as nodes of the reduced graph, each end a port; returns
        their arrivals (start events) and those of the reduced nodes."""
        graph, recorded = self.graph, self.recorded
        names = [self.out.name(graph.names[code]) for code in graph.name[nodes].tolist()]
        made = self.out.nodes(
            COLLECTIVE, np.array(names, dtype=np.int64), graph.lane[nodes],
            recorded[2 * nodes], recorded[2 * nodes + 1], transfer=transfer,
        )  # fmt: skip
        self.reduced_of[2 * nodes] = 2 * made
        self.reduced_of[2 * nodes + 1] = 2 * made + 1
        self.ports[2 * nodes + 1] = True
        return 2 * nodes, 2 * made

    def paths_to(self, events: np.ndarray, targets: np.ndarray) -> None:
        """For each event of `events` and its target (an event of the reduced graph), the
        local paths that set it: under each timing, a PATH node from the port it came from
        (or from work with no known dependency, pinned where it was) into the target; one
        per distinct origin. Every port is marked before: the walks are one pass."""
        recorded, late = self.timings
        origins = chain_origins(self.graph, recorded, events, self.ports)
        late_origins = chain_origins(self.graph, late, events, self.ports)
        # from a collective's end: moving every end alike picks the same
        from_end = (origins % 2 == 1) & self.ports[origins]
        from_end &= self.graph.kind[origins // 2] == COLLECTIVE
        either = np.stack([np.ones(events.size, bool), ~from_end & (late_origins != origins)], 1)
        kept = either.ravel()
        is_late = np.tile([False, True], events.size)[kept]
        event = np.repeat(events, 2)[kept]
        origin = np.stack([origins, late_origins], axis=1).ravel()[kept]
        path_node = self._paths(event, np.repeat(targets, 2)[kept], origin, is_late)
        path = origin != event
        self.walked = {
            "events": events, "ports": self.ports, "origins": (origins, late_origins),
            "path_node": path_node[path], "path_event": event[path],
            "path_origin": origin[path], "path_late": is_late[path],
        }  # fmt: skip

    def _paths(
        self, event: np.ndarray, target: np.ndarray, origin: np.ndarray, is_late: np.ndarray
    ) -> np.ndarray:
        """Each (event, target, origin) its path, in order: a pinned "unknown dependency"
        node first where no port of the reduced graph is the origin, then the PATH node
        (none where the origin is the event itself: a step's first start that nothing set
        starts at its own marker), and their edges. Returns each one's PATH node (where it
        has one)."""
        recorded = self.recorded
        own = path_lengths(self.timings, event, origin, is_late)
        source = self.reduced_of[origin]
        pinned, path = source < 0, origin != event
        walked = None
        if self.expand is not None:  # the links walked again, as Steps, for their segments
            walked = {
                k: self._walked(self.expand, int(event[k]), self.timings[int(is_late[k])])
                for k in np.flatnonzero(path).tolist()
            }
        names = self._path_names(pinned, path, walked)
        counts = pinned.astype(np.int64) + path
        pin_node = self.out.node_count + np.cumsum(counts) - counts
        path_node = pin_node + pinned
        made = np.stack([pinned, path], axis=1).ravel()
        self.out.nodes(
            _paired(CPU, PATH, made),
            _paired(names.get(UNKNOWN, 0), names.get(LOCAL_PATH, 0), made),
            0,
            _paired(recorded[origin], recorded[origin], made),
            _paired(recorded[origin], recorded[event], made),
            _paired(0.0, own, made),
        )
        source = np.where(pinned, 2 * pin_node + 1, source)
        self._path_edges(pin_node, path_node, pinned, path, source, target, origin, event)
        for k, segments in (walked or {}).items():
            start = float(self.timings[int(is_late[k])].value[origin[k]])
            self._segments(int(path_node[k]), segments, start)
        return path_node

    def _path_edges(
        self,
        pin_node: np.ndarray,
        path_node: np.ndarray,
        pinned: np.ndarray,
        path: np.ndarray,
        source: np.ndarray,
        target: np.ndarray,
        origin: np.ndarray,
        event: np.ndarray,
    ) -> None:
        """`_paths`' edges, a job's in turn: the pinned node's duration; then into the
        target from the source (no path), else source -> path, its duration, -> target."""
        # an edge to itself would be a cycle: a marker's own start is no edge
        into_target = np.where(path, True, source // 2 != target // 2)
        kept = np.stack([pinned, into_target, path, path], axis=1).ravel()
        at_path = 2 * path_node
        dst = np.stack([2 * pin_node + 1, np.where(path, at_path, target), at_path + 1, target], 1)
        src = np.stack([2 * pin_node, source, at_path, at_path + 1], axis=1)
        lag = np.zeros((event.size, 4))
        lag[:, 2] = self.recorded[event] - self.recorded[origin]
        roles = np.tile(np.array([DUR, PORT, DUR, PORT], dtype=np.int8), event.size)
        self.out.edges(dst.ravel()[kept], src.ravel()[kept], roles[kept], lag.ravel()[kept])

    def _walked(self, expand: Expand, event: int, timing: Timing) -> list[Segment]:
        """The segments of the local path into `event` under `timing`, as its links
        walked back to the port it starts at show."""
        links = walk_back(self.graph, timing, event, -np.inf, self.ports)
        return merged(list(reversed(segments_of(self.graph, links, expand))))

    def _path_names(
        self, pinned: np.ndarray, path: np.ndarray, walked: dict[int, list[Segment]] | None
    ) -> dict[str, int]:
        """The ids of the names `_paths` uses, numbered in the order a pass job by job
        first uses them: a job's pinned node, its path, the path's segments."""
        out = self.out
        if walked is not None:
            for k in range(pinned.size):
                if pinned[k]:
                    out.name(UNKNOWN)
                if path[k]:
                    out.name(LOCAL_PATH)
                    for segment in walked[k]:
                        out.name(segment.name)
        first = {
            text: int(np.argmax(used))
            for text, used in ((UNKNOWN, pinned), (LOCAL_PATH, path))
            if used.any()
        }
        return {
            text: out.name(text)
            for text in sorted(first, key=lambda text: (first[text], text != UNKNOWN))
        }

    def _segments(self, path: int, segments: list[Segment], start: float) -> None:
        lanes, out = self.graph.lanes, self.out
        for key, values in (
            ("seg_node", [path] * len(segments)),
            ("seg_kind", [SEGMENT_KINDS.index(s.kind) for s in segments]),
            ("seg_name", [out.name(s.name) for s in segments]),
            ("seg_lane", [lanes.index(s.lane) if s.lane in lanes else 0 for s in segments]),
            ("seg_start", [s.start - start for s in segments]),
            ("seg_dur", [s.dur for s in segments]),
        ):
            out.pieces[key].append(values)


UNKNOWN, LOCAL_PATH = "unknown dependency", "local path"  # the reduced nodes' names


def _paired(first: ArrayOrNumber, second: ArrayOrNumber, kept: np.ndarray) -> np.ndarray:
    """`first` and `second` a job's pair in turn (scalars or a value per job), the kept."""
    jobs = kept.size // 2
    return np.stack([repeated(first, jobs), repeated(second, jobs)], axis=1).ravel()[kept]


def _summary(part: Part, change: Change | None, factors: Scaled, out: Reduced) -> PathSummary:
    return PathSummary(
        version=VERSION,
        change=change.label() if change is not None else "",
        matched=factors.matched,
        rank=part.rank,
        time_origin_us=part.origin_us,
        collectives=part.table,
        names=out.names,
        lanes=list(part.graph.lanes),
        step_names=list(part.anchors.names),
        step_numbers=list(part.anchors.numbers),
        first_shift=float(part.anchors.first_shift),
        assumptions=list(part.assumptions),
        **{key: out.packed(key) for key in PACKED},
    )
