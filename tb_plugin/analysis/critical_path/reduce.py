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

import msgspec
import numpy as np

from ..core.common import distinct
from ..distributed.summary import CollectiveTable
from .anchors import Windows, windows
from .changes import Change, Scaled, lags
from .graph import COLLECTIVE, CPU, DUR, PATH, PORT, Graph, finish
from .parts import Part
from .path import Expand, Segment, merged, segments_of
from .retime import Timing, chain_origins, evaluate, walk_back
from .segments import SEGMENT_KINDS

VERSION = "5"  # 5: each step's recorded start and end (a what-if's baseline)
_PACKED = {
    "node_kind": "<i1",
    "node_name": "<i8",
    "node_lane": "<i8",
    "node_start": "<f8",
    "node_end": "<f8",
    "node_transfer": "<f8",
    "node_own": "<f8",
    "collective_nodes": "<i8",
    "edge_dst": "<i8",
    "edge_src": "<i8",
    "edge_role": "<i1",
    "edge_lag": "<f8",
    "step_start_event": "<i8",
    "step_start_offset": "<f8",
    "step_end_event": "<i8",
    "step_end_offset": "<f8",
    "step_recorded_start": "<f8",
    "step_recorded_end": "<f8",
    "seg_node": "<i8",
    "seg_kind": "<i1",
    "seg_name": "<i8",
    "seg_lane": "<i8",
    "seg_start": "<f8",
    "seg_dur": "<f8",
}


class PathSummary(msgspec.Struct, gc=False):
    """One rank reduced (module doc); the `_PACKED` fields are packed little-endian arrays."""

    version: str
    change: str  # the change's label, "" for the recorded timing
    matched: int
    rank: int | None
    time_origin_us: float
    collectives: CollectiveTable
    names: list[str]
    lanes: list[str]
    step_names: list[str]
    step_numbers: list[int | None]
    first_shift: float
    assumptions: list[str]
    node_kind: bytes
    node_name: bytes
    node_lane: bytes
    node_start: bytes
    node_end: bytes
    node_transfer: bytes
    node_own: bytes
    collective_nodes: bytes
    edge_dst: bytes
    edge_src: bytes
    edge_role: bytes
    edge_lag: bytes
    step_start_event: bytes
    step_start_offset: bytes
    step_end_event: bytes
    step_end_offset: bytes
    step_recorded_start: bytes  # the rank's steps as recorded (trace clock), whatever the change
    step_recorded_end: bytes
    seg_node: bytes
    seg_kind: bytes
    seg_name: bytes
    seg_lane: bytes
    seg_start: bytes
    seg_dur: bytes

    def column(self, name: str) -> np.ndarray:
        return np.frombuffer(getattr(self, name), dtype=_PACKED[name])


class _Reduced:
    """The reduced graph as it is built: nodes, edges and the local paths' segments."""

    def __init__(self, graph: Graph) -> None:
        self.source = graph
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}
        self.cols: dict[str, list[float]] = {k: [] for k in _PACKED}

    def name(self, text: str) -> int:
        if text not in self._name_ids:
            self._name_ids[text] = len(self.names)
            self.names.append(text)
        return self._name_ids[text]

    def node(
        self, kind: int, name: str, lane: int, start: float, end: float, own: float = 0.0
    ) -> int:
        """A node at its recorded times; `own`: its time under the change."""
        c = self.cols
        c["node_kind"].append(kind)
        c["node_name"].append(self.name(name))
        c["node_lane"].append(lane)
        c["node_start"].append(start)
        c["node_end"].append(end)
        c["node_transfer"].append(1.0)
        c["node_own"].append(own)
        return len(c["node_kind"]) - 1

    def edge(self, dst: int, src: int, role: int, lag: float = 0.0) -> None:
        self.cols["edge_dst"].append(dst)
        self.cols["edge_src"].append(src)
        self.cols["edge_role"].append(role)
        self.cols["edge_lag"].append(lag)


LATE_US = 1e9  # the collectives' ends moved this late: which local paths start at them


def reduce_part(part: Part, change: Change | None, segments: bool = True) -> PathSummary:
    """The rank's summary under `change` (None: as recorded). Its nodes keep their recorded
    times (the join reads its adds from them); a local path's own time is its length under
    the change. Each arrival (and each step's start and end) gets the local path that set
    it with the collectives ending as recorded, and, when another, the one from the latest
    collective end that reaches it (their ends moved LATE_US later): so a rank whose
    collective ends later than recorded (another rank slower) waits for it there.
    `segments`: keep each local path's segments (what it shows as); without them the
    summary is a fraction of the size and work, and a join asks for them again of the few
    ranks its path runs through (`ReducedPart`)."""
    graph = finish(part.graph)  # the rank alone: its collectives end as recorded
    factors = part.factors(change)
    lag = lags(graph, part.own_times(factors), factors.transfer)
    coll = part.collective_nodes
    ends = 2 * distinct(coll[coll >= 0]) + 1
    late_add = graph.add.copy()
    late_add[ends] += LATE_US
    timings = (evaluate(graph, lag), evaluate(graph, lag, late_add))
    expand = part.expander(factors, 0, 0) if segments else None
    local = _Local(_Reduced(graph), graph, timings, graph.base_times(), expand)
    recorded = local.recorded
    for node in distinct(coll[coll >= 0]).tolist():
        name, lane = graph.names[graph.name[node]], int(graph.lane[node])
        r = local.out.node(COLLECTIVE, name, lane, recorded[2 * node], recorded[2 * node + 1])
        local.out.cols["node_transfer"][r] = float(factors.transfer[node])
        local.reduced_of[2 * node], local.reduced_of[2 * node + 1] = 2 * r, 2 * r + 1
        local.ports[2 * node + 1] = True
    markers = _step_markers(local, part, windows(part.anchors, timings[0]))
    as_recorded = Timing(local.recorded, np.full(graph.events, -1, np.int64), graph.edge_lag)
    recorded_steps = windows(part.anchors, as_recorded)
    local.out.cols["step_recorded_start"] = recorded_steps.start.tolist()
    local.out.cols["step_recorded_end"] = recorded_steps.end.tolist()
    bounds = [(2 * n, local.reduced_of[2 * n]) for n in distinct(coll[coll >= 0]).tolist()]
    local.paths_to(bounds + markers)
    of = local.reduced_of
    local.out.cols["collective_nodes"] = [of[2 * n] // 2 if n >= 0 else -1 for n in coll]
    return _summary(part, change, factors, local.out)


def _step_markers(local: _Local, part: Part, steps: Windows) -> list[tuple[int, int]]:
    """Each step's start and end as a zero-length node of the reduced graph (its events,
    offsets into the summary's step columns); returns (event, marker's start) for each,
    the local paths into them to be found. The whole trace (no step recorded, start -1)
    starts at its earliest event and keeps -1 in the summary: the join takes its bounds
    from the whole job, as it does for a whole trace."""
    recorded, cols = local.recorded, local.out.cols
    markers: list[tuple[int, int]] = []
    for k in range(len(part.anchors)):
        start_event, sink = int(part.anchors.start_event[k]), int(steps.sink[k])
        whole = start_event < 0
        if whole:
            start_event = 2 * int(np.argmin(recorded[0::2]))
        pair = []
        for event, key in ((start_event, "start"), (sink, "end")):
            at = float(recorded[event])
            marker = local.out.node(CPU, f"step {key}", 0, at, at)
            local.out.edge(2 * marker + 1, 2 * marker, DUR, 0.0)
            pair.append((event, 2 * marker))
            reduced = 2 * marker if key == "start" else 2 * marker + 1
            cols[f"step_{key}_event"].append(-1 if whole else reduced)
        cols["step_start_offset"].append(float(part.anchors.start_offset[k]))
        cols["step_end_offset"].append(float(steps.tail[k]))
        markers += pair
        # A step's start is a port too: the local paths after it start there (each path
        # stays within a step, so a rank's summary grows with its steps, not their square).
        local.reduced_of.setdefault(start_event, pair[0][1] + 1)  # the marker's end
        local.ports[start_event] = True
    return markers


@dataclass
class _Local:
    """A rank's graph under a change, and the reduced graph made of it."""

    out: _Reduced
    graph: Graph
    timings: tuple[Timing, Timing]  # the collectives' ends as recorded, and late
    recorded: np.ndarray  # each event's recorded time
    expand: Expand | None  # None: no segments kept
    reduced_of: dict[int, int] = field(default_factory=dict)  # event -> reduced event
    ports: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def __post_init__(self) -> None:
        self.ports = np.zeros(self.graph.events, dtype=bool)

    def paths_to(self, bounds: list[tuple[int, int]]) -> None:
        """For each (event, target) of `bounds`, the local paths that set `event`: under
        each timing, a PATH node from the port it came from (or from work with no known
        dependency, pinned where it was) into `target` (an event of the reduced graph);
        one per distinct origin. Every port is marked before: the walks are one pass."""
        recorded, late = self.timings
        events = np.array([event for event, _ in bounds], dtype=np.int64)
        origins = chain_origins(self.graph, recorded, events, self.ports).tolist()
        late_origins = chain_origins(self.graph, late, events, self.ports).tolist()
        kind = self.graph.kind
        for (event, target), origin, late_origin in zip(bounds, origins, late_origins):
            self._path(event, target, recorded, origin)
            if origin % 2 == 1 and self.ports[origin] and kind[origin // 2] == COLLECTIVE:
                continue  # from a collective's end: moving every end alike picks the same
            if late_origin != origin:
                self._path(event, target, late, late_origin)

    def _path(self, event: int, target: int, timing: Timing, origin: int) -> None:
        out, value = self.out, timing.value
        if origin in self.reduced_of:
            source = self.reduced_of[origin]
        else:
            at = float(self.recorded[origin])
            pinned = out.node(CPU, "unknown dependency", 0, at, at)
            out.edge(2 * pinned + 1, 2 * pinned, DUR, 0.0)
            source = 2 * pinned + 1
        if origin == event:
            # A step's first start that nothing before it set is its own marker's port:
            # the marker is where the path starts (an edge to itself would be a cycle).
            if source // 2 != target // 2:
                out.edge(target, source, PORT, 0.0)
            return
        start, end = float(self.recorded[origin]), float(self.recorded[event])
        own = float(value[event] - value[origin])
        path = out.node(PATH, "local path", 0, start, end, own)
        out.edge(2 * path, source, PORT, 0.0)
        out.edge(2 * path + 1, 2 * path, DUR, end - start)
        out.edge(target, 2 * path + 1, PORT, 0.0)
        if self.expand is not None:  # the links walked again, as Steps, for their segments
            links = walk_back(self.graph, timing, event, -np.inf, self.ports)
            segments = merged(list(reversed(segments_of(self.graph, links, self.expand))))
            self._segments(path, segments, float(value[origin]))

    def _segments(self, path: int, segments: list[Segment], start: float) -> None:
        lanes, c = self.graph.lanes, self.out.cols
        for s in segments:
            c["seg_node"].append(path)
            c["seg_kind"].append(SEGMENT_KINDS.index(s.kind))
            c["seg_name"].append(self.out.name(s.name))
            c["seg_lane"].append(lanes.index(s.lane) if s.lane in lanes else 0)
            c["seg_start"].append(s.start - start)
            c["seg_dur"].append(s.dur)


def _summary(part: Part, change: Change | None, factors: Scaled, out: _Reduced) -> PathSummary:
    packed = {k: np.asarray(v, dtype=_PACKED[k]).tobytes() for k, v in out.cols.items()}
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
        **packed,
    )
