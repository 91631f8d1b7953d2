"""The dependency graph of a span: nodes (host pieces, GPU activities, collectives, waits),
each with a start and an end event, and edges between events.

An event's time is the latest of its in-edges' `source time + lag`, plus the event's own
`add` (what the trace shows after its last dependency was met: a launch delay, a host
gap). `add` is read from the trace once (`finish`), so evaluating the graph with the
trace's own lags gives back every recorded time exactly; a what-if changes some lags (a
node's duration, a collective's transfer) and evaluates again (`retime.py`).

Events are numbered `2 * node` (start) and `2 * node + 1` (end). Edge roles say what an
edge is, for the path's names and for the changes that scale it (module `ROLES`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ..core.common import distinct, gather_ranges, repeated

T = TypeVar("T")

# Node kinds: what a node's own time is on the critical path.
CPU, KERNEL, MEMCPY, MEMSET, COLLECTIVE, WAIT, PATH = range(7)
KIND_NAMES = ("cpu", "kernel", "memcpy", "memset", "collective", "wait", "path")
IDLE_KIND = "idle"  # a gap on the path: what the trace shows between a dependency and a start

# Edge roles.
DUR = 0  # a node's start -> its end: its own duration (scaled by a change)
CHAIN = 1  # the previous node of a host thread (end) -> the next (start)
LAUNCH = 2  # the launch call (start) -> the GPU activity it launched (start)
STREAM = 3  # the previous activity of a GPU stream (end) -> the next (start)
EVENT = 4  # recorded work of a stream (end) -> the waiting stream's next activity (start)
ISSUE = 5  # the op that issued a host collective (start) -> the collective (start)
TRANSFER = 6  # an arrival at a collective (start) -> its end: the collective's transfer
RETURN = 7  # what a blocking call waited for (end) -> the call's end
PORT = 8  # a reduced graph's local path: from where it starts to where it leads
ARRIVE = 9  # a rank's arrival at a collective (start) -> the collective's last arrival
WAKE = 10  # work another thread ended (end) -> a thread resuming after a long gap (start)
INFERRED = 11  # as EVENT, for a wait recorded only as runtime calls (`stream_waits.py`)
HANDOFF = 12  # the autograd engine's handoff between the training and backward threads
ROLES = (
    "dur",
    "chain",
    "launch",
    "stream",
    "event",
    "issue",
    "transfer",
    "return",
    "port",
    "arrive",
    "wake",
    "inferred_event",
    "handoff",
)
# The name of the gap after a binding edge of each role, on the path.
GAP_NAMES = {
    CHAIN: "host gap",
    LAUNCH: "launch delay",
    STREAM: "stream gap",
    EVENT: "stream wait",
    ISSUE: "issue delay",
    PORT: "gap",
    WAKE: "wake-up delay",
    INFERRED: "stream wait (inferred)",
    HANDOFF: "autograd handoff",
}
# The part of a launch delay after the activity was queued on the GPU (the trace records
# `queued`): the device held it, not the host.
QUEUED_GAP = "queued on the GPU"


@dataclass
class Graph:
    """Nodes and edges of one span (or of several ranks joined). Times are µs on the
    graph's clock (a rank's trace time plus its offset to the job's clock)."""

    names: list[str]
    kind: np.ndarray  # i1, node kinds above
    name: np.ndarray  # i8, into names
    rank: np.ndarray  # i8, the rank index of each node (0 in a span)
    lane: np.ndarray  # i8, into lanes: the thread or stream the node ran on
    lanes: list[str]
    row: np.ndarray  # i8, the trace row of the node's event (-1: none)
    start: np.ndarray  # f8, recorded
    end: np.ndarray  # f8, recorded
    scalable: np.ndarray  # bool: a change may scale the node's own duration
    edge_dst: np.ndarray  # i8 events
    edge_src: np.ndarray  # i8 events
    edge_role: np.ndarray  # i1
    edge_lag: np.ndarray  # f8, recorded lag
    # Filled by `finish`.
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    in_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    in_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    add: np.ndarray = field(default_factory=lambda: np.zeros(0))
    dropped: dict[str, int] = field(default_factory=dict)  # edges left out, by role
    # GPU activities whose trace records when they were queued (CUPTI's `queued`,
    # `core/queued_times.py`), sorted, and the µs each waited queued before its start.
    queued_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    queued_us: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return int(self.kind.size)

    @property
    def events(self) -> int:
        return 2 * len(self)

    def queued_wait(self, nodes: np.ndarray) -> np.ndarray:
        """Per node, the µs it waited queued on the GPU before its recorded start (0: none
        recorded)."""
        out = np.zeros(nodes.size)
        if self.queued_nodes.size and nodes.size:
            at = np.minimum(np.searchsorted(self.queued_nodes, nodes), self.queued_nodes.size - 1)
            found = self.queued_nodes[at] == nodes
            out[found] = self.queued_us[at[found]]
        return out

    def base_times(self) -> np.ndarray:
        """Recorded time of every event (start, end interleaved)."""
        out = np.empty(self.events)
        out[0::2] = self.start
        out[1::2] = self.end
        return out

    def node_durations(self) -> np.ndarray:
        return np.maximum(self.end - self.start, 0.0)

    def kept(self, key: str, sources: tuple[np.ndarray, ...], build: Callable[[], T]) -> T:
        """What `build` derives from the graph's arrays `sources`, kept with the graph
        while those are the same arrays (`finish` and added edges put new ones): a what-if
        or top gains evaluates one graph once per change."""
        memo: dict[str, tuple[tuple[np.ndarray, ...], Any]] = self.__dict__.setdefault("_kept", {})
        found = memo.get(key)
        if found is not None and _same_arrays(found[0], sources):
            return found[1]  # type: ignore[no-any-return]
        value = build()
        memo[key] = (sources, value)
        return value


def _same_arrays(kept: tuple[np.ndarray, ...], now: tuple[np.ndarray, ...]) -> bool:
    return len(kept) == len(now) and all(a is b for a, b in zip(kept, now))


class Labels:
    """Names as codes, one code per distinct name (equal names merge on a path)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._ids: dict[str, int] = {}

    def code(self, name: str) -> int:
        got = self._ids.get(name)
        if got is None:
            got = self._ids[name] = len(self.names)
            self.names.append(name)
        return got

    def codes(self, names: list[str]) -> np.ndarray:
        return np.array([self.code(n) for n in names], dtype=np.int64)


class GraphBuilder:
    """Collects nodes and edges in pieces of arrays; `build` joins them."""

    def __init__(self) -> None:
        self._names = Labels()
        self._lanes = Labels()
        self.names = self._names.names
        self.lanes = self._lanes.names
        self._nodes: list[dict[str, np.ndarray]] = []
        self._edges: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._queued: list[tuple[np.ndarray, np.ndarray]] = []
        self.count = 0

    def name_id(self, name: str) -> int:
        return self._names.code(name)

    def name_ids(self, names: list[str]) -> np.ndarray:
        return self._names.codes(names)

    def lane_id(self, lane: str) -> int:
        return self._lanes.code(lane)

    def nodes(
        self,
        kind: np.ndarray | int,
        name: np.ndarray,
        lane: np.ndarray | int,
        row: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        scalable: np.ndarray | bool = True,
        rank: int = 0,
    ) -> np.ndarray:
        """Adds nodes; returns their ids."""
        n = int(np.asarray(start).size)
        ids = np.arange(self.count, self.count + n, dtype=np.int64)
        self._nodes.append(
            {
                "kind": repeated(kind, n, np.int8),
                "name": np.asarray(name, dtype=np.int64).reshape(n),
                "rank": np.full(n, rank, dtype=np.int64),
                "lane": repeated(lane, n, np.int64),
                "row": np.asarray(row, dtype=np.int64).reshape(n),
                "start": np.asarray(start, dtype=np.float64).reshape(n),
                "end": np.asarray(end, dtype=np.float64).reshape(n),
                "scalable": repeated(scalable, n, bool),
            }
        )
        self.count += n
        return ids

    def queued(self, nodes: np.ndarray, wait_us: np.ndarray) -> None:
        """GPU activity `nodes` waited `wait_us` queued before their start."""
        self._queued.append((np.asarray(nodes, np.int64), np.asarray(wait_us, np.float64)))

    def edges(
        self, dst: np.ndarray, src: np.ndarray, role: int, lag: np.ndarray | float = 0.0
    ) -> None:
        """Edges from events `src` to events `dst` (equal lengths)."""
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        src = np.asarray(src, dtype=np.int64).reshape(-1)
        if dst.size == 0:
            return
        lags = repeated(lag, dst.size, np.float64)
        self._edges.append((dst, src, np.full(dst.size, role, np.int8), lags))

    def build(self) -> Graph:
        def cat(key: str, dtype: str) -> np.ndarray:
            parts = [n[key] for n in self._nodes]
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

        def edge_cat(i: int, dtype: str) -> np.ndarray:
            parts = [e[i] for e in self._edges]
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

        return Graph(
            names=self.names,
            kind=cat("kind", "i1"),
            name=cat("name", "i8"),
            rank=cat("rank", "i8"),
            lane=cat("lane", "i8"),
            lanes=self.lanes,
            row=cat("row", "i8"),
            start=cat("start", "f8"),
            end=cat("end", "f8"),
            scalable=cat("scalable", "?"),
            edge_dst=edge_cat(0, "i8"),
            edge_src=edge_cat(1, "i8"),
            edge_role=edge_cat(2, "i1"),
            edge_lag=edge_cat(3, "f8"),
            queued_nodes=np.concatenate([q[0] for q in self._queued] or [np.zeros(0, np.int64)]),
            queued_us=np.concatenate([q[1] for q in self._queued] or [np.zeros(0)]),
        )


def start_event(nodes: ArrayLike) -> np.ndarray:
    return 2 * np.asarray(nodes, dtype=np.int64)


def end_event(nodes: ArrayLike) -> np.ndarray:
    return 2 * np.asarray(nodes, dtype=np.int64) + 1


def duration_edges(graph: Graph, lag: np.ndarray | None = None) -> None:
    """Every node's start -> end edge (role DUR), lag its recorded duration unless given;
    call before `finish`. Collectives and blocking nodes get theirs from their builders."""
    nodes = np.arange(len(graph), dtype=np.int64)
    lags = graph.node_durations() if lag is None else lag
    _append_edges(graph, end_event(nodes), start_event(nodes), DUR, lags)


def _append_edges(
    graph: Graph, dst: np.ndarray, src: np.ndarray, role: int, lag: np.ndarray
) -> None:
    graph.edge_dst = np.concatenate([graph.edge_dst, dst])
    graph.edge_src = np.concatenate([graph.edge_src, src])
    graph.edge_role = np.concatenate([graph.edge_role, np.full(dst.size, role, np.int8)])
    graph.edge_lag = np.concatenate([graph.edge_lag, lag.astype(np.float64)])


MAX_TIE_PASSES = 64


def finish(graph: Graph) -> Graph:
    """The evaluation order and each event's `add`. Events are ordered by recorded time
    (`_order_keys`: clocks rounded apart by up to CLOCK_SLACK_US count as in order), ties
    by dependency; an edge that goes back in time further (a GPU activity that starts
    before its launch call: the trace's clocks disagree) or that no order of ties can
    satisfy is left out, counted by role in `dropped`: the recorded times stay exact."""
    base = graph.base_times()
    src, dst = graph.edge_src, graph.edge_dst
    key = _order_keys(graph, base)
    backward = key[src] > key[dst]
    level = _tie_levels(src, dst, np.flatnonzero(key[src] == key[dst]), base.size)
    order = np.lexsort((level, key)).astype(np.int64)
    position = np.empty(base.size, dtype=np.int64)
    position[order] = np.arange(base.size)
    keep = ~backward & (position[src] < position[dst])
    graph.dropped = _count_roles(graph.edge_role[~keep])
    kept = np.flatnonzero(keep)
    kept = kept[np.argsort(position[dst[kept]], kind="stable")]
    counts = np.bincount(position[dst[kept]], minlength=base.size)
    graph.order = order
    graph.in_edges = kept
    graph.in_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    graph.add = _adds(graph, base, graph.edge_lag)
    return graph


def _tie_levels(src: np.ndarray, dst: np.ndarray, tie: np.ndarray, events: int) -> np.ndarray:
    """Per event, its depth among the edges `tie` (between events at one time): each
    edge's destination at least one deeper than its source, after at most MAX_TIE_PASSES
    passes (a cycle of ties never settles: `finish` leaves out the edge no order keeps).
    After FULL_TIE_PASSES passes over every tie (most graphs settle in one or two), a pass
    looks only at the edges out of the events the pass before deepened (the others already
    hold): a joined run of many ranks pays for what moves, not for every tie each time."""
    level = np.zeros(events, dtype=np.int64)
    active = tie
    by_src = first = None
    for done in range(MAX_TIE_PASSES):
        if active.size == 0:
            break
        want = level[src[active]] + 1
        late = want > level[dst[active]]
        if not late.any():
            break
        deepened = dst[active[late]]
        np.maximum.at(level, deepened, want[late])
        if done + 1 < FULL_TIE_PASSES:
            continue
        if by_src is None or first is None:  # the ties by source, once
            by_src = tie[np.argsort(src[tie], kind="stable")]
            first = np.concatenate([[0], np.cumsum(np.bincount(src[tie], minlength=events))])
        moved = distinct(deepened)
        active = by_src[gather_ranges(first[moved], first[moved + 1])]
    return level


FULL_TIE_PASSES = 3


CLOCK_SLACK_US = 1.0  # an edge back in time by at most this is clocks rounded apart


def _order_keys(graph: Graph, base: np.ndarray) -> np.ndarray:
    """Each event's place in time for the evaluation order: its recorded time, or, for a
    node's start that an edge reaches from at most CLOCK_SLACK_US later (a kernel starting
    0.1 µs before the one it waited for ends: the clocks rounded apart), that later time,
    so the edge is kept (its event's add is then negative: the recorded times stay exact).
    Not past the node's own end."""
    src, dst = graph.edge_src, graph.edge_dst
    ahead = base[src] - base[dst]
    near = np.flatnonzero((ahead > 0) & (ahead <= CLOCK_SLACK_US) & (dst % 2 == 0))
    if near.size == 0:
        return base
    key = base.copy()
    np.maximum.at(key, dst[near], base[src[near]])
    starts = np.flatnonzero(key[0::2] > base[1::2]) * 2
    key[starts] = base[starts]  # a start raised past its node's end: left as recorded
    return key


def _count_roles(roles: np.ndarray) -> dict[str, int]:
    counts = np.bincount(roles.astype(np.int64), minlength=len(ROLES))
    return {ROLES[i]: int(c) for i, c in enumerate(counts.tolist()) if c}


def _adds(graph: Graph, base: np.ndarray, lag: np.ndarray) -> np.ndarray:
    """Per event, its recorded time less the latest of its in-edges' source time + lag
    (its recorded time for an event with no in-edge)."""
    add = base.copy()
    edges = graph.in_edges
    if edges.size == 0:
        return add
    reach = base[graph.edge_src[edges]] + lag[edges]
    ptr = graph.in_ptr
    has = np.flatnonzero(ptr[1:] > ptr[:-1])
    latest = np.maximum.reduceat(reach, ptr[:-1][has])
    events = graph.order[has]
    add[events] = base[events] - latest
    return add
