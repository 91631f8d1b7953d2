"""Several ranks' graphs as one: each rank's times moved to the job's clock (the earliest
rank's origin, as the Distributed view aligns ranks), and every collective matched across
ranks by the Distributed view's identity rules (`distributed/matching.py`) joined through
one arrival node: a collective ends, on each rank, its own transfer after the last rank
arrived (its transfer: its recorded end less that last arrival)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np

from ..core.common import distinct, repeated
from ..distributed.matching import instances_of, match_instances
from ..distributed.summary import CollectiveTable
from .anchors import StepAnchors
from .changes import Change, Scaled, lags
from .expand import PartPieces, joint_expand
from .graph import (
    ARRIVE,
    COLLECTIVE,
    DUR,
    TRANSFER,
    Graph,
    GraphBuilder,
    Labels,
    end_event,
    finish,
    start_event,
)
from .segments import Expand as PieceExpand

ARRIVAL = "arrival"


class JoinPart(Protocol):
    """What a join reads of a rank: a whole trace (`parts.Part`) or its summary
    (`reduce.ReducedPart`)."""

    rank: int | None
    worker: str
    table: CollectiveTable
    collective_nodes: np.ndarray  # per instance of `table`, its node (-1: none)
    anchors: StepAnchors

    @property
    def graph(self) -> Graph: ...

    @property
    def origin_us(self) -> float: ...

    @property
    def assumptions(self) -> list[str]: ...

    def factors(self, change: Change | None) -> Scaled: ...

    def own_times(self, factors: Scaled) -> np.ndarray: ...

    def piece_table(self, factors: Scaled) -> PartPieces: ...


@dataclass
class Joint:
    graph: Graph
    parts: Sequence[JoinPart]
    node_offset: np.ndarray  # i8 per part: its first node in the joint graph
    time_offset: np.ndarray  # f8 per part: joint time = its trace time + offset
    anchors: list[StepAnchors]  # per part, events in the joint graph
    matched: int  # collective instances matched across ranks
    unmatched: int

    def part_of_node(self, node: int) -> int:
        return int(np.searchsorted(self.node_offset, node, side="right")) - 1

    def lags(self, change: Change | None) -> tuple[np.ndarray, list[Scaled]]:
        """The joint graph's lags under a change, and each part's factors."""
        n = len(self.graph)
        own = np.zeros(n)
        transfer = np.ones(n)
        factors = []
        for part, offset in zip(self.parts, self.node_offset.tolist()):
            f = part.factors(change)
            factors.append(f)
            size = len(part.graph)
            own[offset : offset + size] = part.own_times(f)
            transfer[offset : offset + size] = f.transfer
        return lags(self.graph, own, transfer), factors

    @cached_property
    def labels(self) -> tuple[Labels, np.ndarray]:
        """The names of paths as codes (equal names one code), and each node's name's."""
        labels = Labels()
        return labels, labels.codes(self.graph.names)[self.graph.name]

    def piece_expand(self, factors: list[Scaled]) -> PieceExpand:
        """How nodes show on a path as their parts, under these factors."""
        lane_counts = [len(p.graph.lanes) for p in self.parts]
        lane_offset = np.concatenate([[0], np.cumsum(lane_counts)[:-1]]).astype(np.int64)
        return joint_expand(
            list(self.parts),
            factors,
            self.node_offset,
            lane_offset,
            self.graph.lane,
            self.graph.rank,
            self.labels[0],
        )


def join(parts: Sequence[JoinPart]) -> Joint:
    if not parts:  # no rank could be read: an empty job (the view lists why, per rank)
        empty = np.zeros(0, np.int64)
        return Joint(finish(GraphBuilder().build()), [], empty, np.zeros(0), [], 0, 0)
    sizes = [len(p.graph) for p in parts]
    node_offset = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    origins = [p.origin_us for p in parts]
    reference = min(origins) if origins else 0.0
    time_offset = np.array([o - reference for o in origins])
    graphs = [p.graph for p in parts]
    names: list[str] = []
    lanes: list[str] = []
    cols: dict[str, list[np.ndarray]] = {
        k: [] for k in ("kind", "name", "rank", "lane", "row", "start", "end", "scalable")
    }
    edges: dict[str, list[np.ndarray]] = {k: [] for k in ("dst", "src", "role", "lag")}
    for i, g in enumerate(graphs):
        cols["kind"].append(g.kind)
        cols["name"].append(g.name + len(names))
        cols["rank"].append(np.full(len(g), i, dtype=np.int64))
        cols["lane"].append(g.lane + len(lanes))
        cols["row"].append(g.row)
        cols["start"].append(g.start + time_offset[i])
        cols["end"].append(g.end + time_offset[i])
        cols["scalable"].append(g.scalable)
        names += g.names
        lanes += g.lanes
        shift = 2 * int(node_offset[i])
        edges["dst"].append(g.edge_dst + shift)
        edges["src"].append(g.edge_src + shift)
        edges["role"].append(g.edge_role)
        edges["lag"].append(g.edge_lag)
    matched, unmatched = _arrivals(parts, node_offset, cols, edges, names)
    graph = Graph(
        names=names,
        kind=np.concatenate(cols["kind"]).astype(np.int8),
        name=np.concatenate(cols["name"]),
        rank=np.concatenate(cols["rank"]),
        lane=np.concatenate(cols["lane"]),
        lanes=lanes,
        row=np.concatenate(cols["row"]),
        start=np.concatenate(cols["start"]),
        end=np.concatenate(cols["end"]),
        scalable=np.concatenate(cols["scalable"]),
        edge_dst=np.concatenate(edges["dst"]),
        edge_src=np.concatenate(edges["src"]),
        edge_role=np.concatenate(edges["role"]).astype(np.int8),
        edge_lag=np.concatenate(edges["lag"]),
        queued_nodes=np.concatenate(
            [g.queued_nodes + off for g, off in zip(graphs, node_offset[:-1])]
            or [np.zeros(0, np.int64)]
        ),
        queued_us=np.concatenate([g.queued_us for g in graphs] or [np.zeros(0)]),
    )
    finish(graph)
    anchors = [_shifted(p.anchors, int(off)) for p, off in zip(parts, node_offset[:-1])]
    return Joint(graph, parts, node_offset[:-1], time_offset, anchors, matched, unmatched)


def _arrivals(
    parts: Sequence[JoinPart],
    node_offset: np.ndarray,
    cols: dict[str, list[np.ndarray]],
    edges: dict[str, list[np.ndarray]],
    names: list[str],
) -> tuple[int, int]:
    """One arrival node per matched collective: every member's start leads to it, it
    leads to every member's end (lag: that member's transfer). A collective seen on one
    rank, or not in its graph, ends its recorded duration after its own start."""
    inst = instances_of([p.table for p in parts], [p.origin_us for p in parts])
    match_instances(inst)
    per_rank = [p.collective_nodes for p in parts]
    node = np.concatenate(per_rank) if per_rank else np.zeros(0, np.int64)
    rank = inst.rank
    known = node >= 0
    joint_node = np.where(known, node + node_offset[rank], -1)
    start = np.concatenate(cols["start"])
    end = np.concatenate(cols["end"])
    groups = np.where(inst.matched & known, inst.match, -1)
    used = distinct(groups[groups >= 0])
    first_arrival = int(node_offset[-1])
    members = np.flatnonzero(groups >= 0)
    arrival_of = np.searchsorted(used, groups[members]) + first_arrival
    last = np.full(used.size, -np.inf)
    np.maximum.at(last, arrival_of - first_arrival, start[joint_node[members]])
    alone = np.flatnonzero(known & (groups < 0))
    own_nodes = joint_node[alone]
    transfer_own = end[own_nodes] - start[own_nodes]
    add_edges(edges, end_event(own_nodes), start_event(own_nodes), TRANSFER, transfer_own)
    if used.size:
        last_member = np.zeros(used.size, dtype=np.int64)
        order = np.lexsort((start[joint_node[members]], arrival_of))
        last_member[arrival_of[order] - first_arrival] = joint_node[members[order]]
        name_id = len(names)
        names.append(ARRIVAL)
        cols["kind"].append(np.full(used.size, COLLECTIVE, np.int8))
        cols["name"].append(np.full(used.size, name_id, np.int64))
        cols["rank"].append(np.concatenate(cols["rank"])[last_member])
        cols["lane"].append(np.concatenate(cols["lane"])[last_member])
        cols["row"].append(np.full(used.size, -1, np.int64))
        cols["start"].append(last)
        cols["end"].append(last)
        cols["scalable"].append(np.zeros(used.size, bool))
        m_nodes = joint_node[members]
        add_edges(edges, start_event(arrival_of), start_event(m_nodes), ARRIVE, 0.0)
        add_edges(edges, end_event(arrival_of), start_event(arrival_of), DUR, 0.0)
        _transfers(edges, m_nodes, arrival_of, last[arrival_of - first_arrival], start, end)
    return int(members.size), int(alone.size)


def _transfers(
    edges: dict[str, list[np.ndarray]],
    members: np.ndarray,
    arrival: np.ndarray,
    last: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> None:
    """Each member's end after its collective's last arrival (node `arrival`, at `last`).
    A member that ended before the last rank arrived did not wait for it (a broadcast's
    root, a send in NCCL's LL protocol: written into the peer's buffer): it ends its own
    duration after its own start."""
    transfer = end[members] - last
    waited = transfer >= 0
    add_edges(
        edges, end_event(members[waited]), end_event(arrival[waited]), TRANSFER, transfer[waited]
    )
    early = members[~waited]
    add_edges(edges, end_event(early), start_event(early), TRANSFER, end[early] - start[early])


def add_edges(
    edges: dict[str, list[np.ndarray]],
    dst: np.ndarray,
    src: np.ndarray,
    role: int,
    lag: np.ndarray | float,
) -> None:
    dst = np.asarray(dst, dtype=np.int64)
    edges["dst"].append(dst)
    edges["src"].append(np.asarray(src, dtype=np.int64))
    edges["role"].append(np.full(dst.size, role, np.int8))
    edges["lag"].append(repeated(lag, dst.size, np.float64))


def _shifted(anchors: StepAnchors, node_offset: int) -> StepAnchors:
    shift = 2 * node_offset

    def events(e: np.ndarray) -> np.ndarray:
        return np.where(e >= 0, e + shift, e)

    return StepAnchors(
        names=anchors.names,
        numbers=anchors.numbers,
        start_event=events(anchors.start_event),
        start_offset=anchors.start_offset,
        end_event=events(anchors.end_event),
        end_offset=anchors.end_offset,
        first_shift=anchors.first_shift,
        device_nodes=[d + node_offset if d.size else d for d in anchors.device_nodes],
    )
