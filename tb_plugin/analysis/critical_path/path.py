"""The critical path of a step as segments: the binding edges back from the step's end
(`retime.walk_back`) to its start, each edge's own part as the node's time (a host node
shown as its pieces), each event's add as an idle gap; clipped to the step and merged
where the same thing runs on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .graph import (
    DUR,
    GAP_NAMES,
    IDLE_KIND,
    KIND_NAMES,
    LAUNCH,
    QUEUED_GAP,
    RETURN,
    TRANSFER,
    Graph,
)
from .retime import Step


@dataclass
class Segment:
    rank: int  # the graph's rank index
    kind: str
    name: str
    start: float
    end: float
    lane: str

    @property
    def dur(self) -> float:
        return self.end - self.start


UNKNOWN = "unknown dependency"  # the path reached work whose dependency is not in the trace

# A node's own part [t0, t1] as segments (a host node: its pieces); None: the node itself.
Expand = Callable[[int, float, float], list[Segment] | None]


def node_segment(graph: Graph, node: int, t0: float, t1: float, kind: str | None = None) -> Segment:
    return Segment(
        int(graph.rank[node]),
        kind or KIND_NAMES[int(graph.kind[node])],
        graph.names[int(graph.name[node])],
        t0,
        t1,
        graph.lanes[int(graph.lane[node])],
    )


def segments_of(
    graph: Graph, links: list[Step], expand: Expand | None, start: float = -np.inf
) -> list[Segment]:
    """The segments of a walk back (latest first): each edge's own part as its node's
    time, each add as an idle gap; a walk that ends at an event with no in-edge after
    `start` says the time before it is of an unknown dependency."""
    out: list[Segment] = []
    for link in links:
        node = link.event // 2
        if link.edge < 0:
            if np.isfinite(start) and link.gap_to > start:
                out.append(_idle(graph, node, UNKNOWN, start, link.gap_to))
            break
        role = int(graph.edge_role[link.edge])
        if link.gap_to > link.lag_to:
            split = link.gap_to
            if role == LAUNCH and graph.queued_nodes.size:  # else no part of it was queued
                nodes, roles = np.array([node]), np.array([role])
                gaps = np.array([link.gap_to - link.lag_to])
                split -= float(queued_part(graph, nodes, roles, gaps)[0])
            if split < link.gap_to:  # latest first
                out.append(_idle(graph, node, QUEUED_GAP, split, link.gap_to))
            if split > link.lag_to:
                out.append(_idle(graph, node, GAP_NAMES.get(role, "gap"), link.lag_to, split))
        if role in (DUR, TRANSFER, RETURN) and link.lag_to > link.lag_from:
            own = expand(node, link.lag_from, link.lag_to) if expand and role == DUR else None
            # latest first, as the walk goes
            out.extend(reversed(own or [node_segment(graph, node, link.lag_from, link.lag_to)]))
    return out


def queued_part(graph: Graph, node: np.ndarray, role: np.ndarray, gap: np.ndarray) -> np.ndarray:
    """Per link (its node, edge role and gap): the end of its gap the work waited queued on
    the GPU (a launch delay only; 0: none recorded)."""
    waited = np.clip(graph.queued_wait(node), 0.0, np.maximum(gap, 0.0))
    return np.where(role == LAUNCH, waited, 0.0)


def _idle(graph: Graph, node: int, name: str, t0: float, t1: float) -> Segment:
    return Segment(
        int(graph.rank[node]), IDLE_KIND, name, t0, t1, graph.lanes[int(graph.lane[node])]
    )


def merged(segments: list[Segment]) -> list[Segment]:
    """Adjacent segments of the same thing (rank, kind, name, lane) joined."""
    out: list[Segment] = []
    for s in segments:
        if s.end <= s.start:
            continue
        last = out[-1] if out else None
        if (
            last is not None
            and (last.rank, last.kind, last.name, last.lane) == (s.rank, s.kind, s.name, s.lane)
            and abs(last.end - s.start) < 1e-6
        ):
            last.end = s.end
            continue
        out.append(Segment(s.rank, s.kind, s.name, s.start, s.end, s.lane))
    return out


def piece_expander(
    graph: Graph,
    piece_node: np.ndarray,
    piece_time: np.ndarray,
    piece_name: list[str],
    piece_kind: list[str],
) -> Expand:
    """Host nodes shown as their pieces, each its (scaled) time from the node's start."""

    def expand(node: int, t0: float, t1: float) -> list[Segment] | None:
        lo = int(np.searchsorted(piece_node, node, side="left"))
        hi = int(np.searchsorted(piece_node, node, side="right"))
        if hi - lo <= 1:
            return None
        times = piece_time[lo:hi]
        total = float(times.sum())
        if total <= 0:
            return None
        scale = (t1 - t0) / total
        rank, lane = int(graph.rank[node]), graph.lanes[int(graph.lane[node])]
        out, at = [], t0
        for i in range(lo, hi):
            nxt = at + float(piece_time[i]) * scale
            out.append(Segment(rank, piece_kind[i], piece_name[i], at, nxt, lane))
            at = nxt
        return out

    return expand
