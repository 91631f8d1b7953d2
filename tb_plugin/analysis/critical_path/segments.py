"""A path's segments as columns: the binding edges walked back from a step's end
(`retime.walk_arrays`), each edge's own part as its node's time (a host node shown as its
pieces, `PieceTable`), each add as an idle gap; clipped to the step and merged where the
same thing runs on. What `path.py` does one `Segment` at a time, in a few numpy passes:
a view makes `Segment`s only for the page it answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..core.common import distinct
from .graph import (
    DUR,
    GAP_NAMES,
    IDLE_KIND,
    KIND_NAMES,
    QUEUED_GAP,
    RETURN,
    ROLES,
    TRANSFER,
    Graph,
    Labels,
)
from .path import UNKNOWN, Segment, queued_part
from .retime import Timing, walk_arrays

SEGMENT_KINDS = (*KIND_NAMES, IDLE_KIND)
IDLE = SEGMENT_KINDS.index(IDLE_KIND)
MERGE_SLACK_US = 1e-6  # segments of one thing this close are one
DENSE_KEYS = 1 << 16  # name keys counted in an array, not sorted, below this span


@dataclass
class Segments:
    """Segments in time order; `name` codes into `labels`, `lane` into `lanes`."""

    rank: np.ndarray
    kind: np.ndarray
    name: np.ndarray
    lane: np.ndarray
    start: np.ndarray
    end: np.ndarray
    labels: Labels
    lanes: list[str]

    def __len__(self) -> int:
        return int(self.start.size)

    @property
    def dur(self) -> np.ndarray:
        return self.end - self.start

    def take(self, lo: int, hi: int) -> list[Segment]:
        names, lanes = self.labels.names, self.lanes
        return [
            Segment(r, SEGMENT_KINDS[k], names[n], s, e, lanes[ln])
            for r, k, n, ln, s, e in zip(
                self.rank[lo:hi].tolist(),
                self.kind[lo:hi].tolist(),
                self.name[lo:hi].tolist(),
                self.lane[lo:hi].tolist(),
                self.start[lo:hi].tolist(),
                self.end[lo:hi].tolist(),
            )
        ]

    def by_kind(self) -> dict[str, float]:
        total = np.bincount(self.kind, weights=self.dur, minlength=len(SEGMENT_KINDS))
        present = np.bincount(self.kind, minlength=len(SEGMENT_KINDS)) > 0
        return {SEGMENT_KINDS[k]: float(total[k]) for k in np.flatnonzero(present).tolist()}

    def by_name(self) -> dict[tuple[str, str], float]:
        if not len(self):
            return {}
        width = len(self.labels.names) + 1
        key = self.kind * width + self.name
        if int(key.max()) < 4 * key.size + DENSE_KEYS:  # a dense count, no sort
            dense = np.bincount(key, weights=self.dur)
            keys = np.flatnonzero(np.bincount(key))
            total = dense[keys]
        else:
            keys, inverse = np.unique(key, return_inverse=True)
            total = np.bincount(inverse.reshape(-1), weights=self.dur)
        names = self.labels.names
        return {
            (SEGMENT_KINDS[k // width], names[k % width]): float(t)
            for k, t in zip(keys.tolist(), total.tolist())
        }

    def by_rank(self, ranks: int) -> np.ndarray:
        return np.bincount(self.rank, weights=self.dur, minlength=ranks)


def concat(parts: list[Segments], labels: Labels, lanes: list[str]) -> Segments:
    if not parts:
        ints, floats = np.zeros(0, np.int64), np.zeros(0)
        return Segments(ints, ints, ints, ints, floats, floats, labels, lanes)

    def col(key: str) -> np.ndarray:
        return np.concatenate([getattr(p, key) for p in parts])

    return Segments(
        col("rank"), col("kind"), col("name"), col("lane"), col("start"), col("end"), labels, lanes
    )


@dataclass
class Rows:
    """Segments being built, per node of the graph: their columns, and which may show as
    the node's pieces (a node's own time on a duration edge)."""

    node: np.ndarray
    kind: np.ndarray
    name: np.ndarray
    start: np.ndarray
    end: np.ndarray
    expandable: np.ndarray

    @staticmethod
    def one(node: int, kind: int, name: int, start: float, end: float) -> Rows:
        def a(x: float, dtype: type) -> np.ndarray:
            return np.array([x], dtype=dtype)

        return Rows(
            a(node, np.int64),
            a(kind, np.int64),
            a(name, np.int64),
            a(start, np.float64),
            a(end, np.float64),
            np.zeros(1, bool),
        )

    @staticmethod
    def joined(rows: list[Rows]) -> Rows:
        return Rows(
            *[np.concatenate([getattr(r, f) for r in rows]) for f in Rows.__dataclass_fields__]
        )


# (nodes, t0, t1) -> for each node that shows as pieces: (which of the nodes, kind, name,
# lane, rank, start, end) of its pieces, in order; nodes it does not expand are left out.
Expand = Callable[[np.ndarray, np.ndarray, np.ndarray], "Pieces"]


@dataclass
class Pieces:
    owner: np.ndarray  # index into the nodes asked
    kind: np.ndarray
    name: np.ndarray
    lane: np.ndarray
    rank: np.ndarray
    start: np.ndarray
    end: np.ndarray


class PathBuilder:
    """Builds the segments of steps' paths on one graph and timing."""

    def __init__(
        self,
        graph: Graph,
        timing: Timing,
        labels: Labels,
        node_label: np.ndarray,
        expand: Expand | None,
    ) -> None:
        self.graph, self.timing, self.labels = graph, timing, labels
        self.node_label = node_label
        self.expand = expand
        # Per edge role, the name of the gap before a link of that role.
        self.gap_name = np.full(len(ROLES), labels.code("gap"), dtype=np.int64)
        for role, name in GAP_NAMES.items():
            self.gap_name[role] = labels.code(name)
        self.queued = labels.code(QUEUED_GAP)
        self.unknown = labels.code(UNKNOWN)
        self.host_gap = labels.code("host gap")

    def step(self, sink: int, tail: float, start: float) -> Segments:
        """The path of one step ending at event `sink` (+ `tail`), back to `start`."""
        at = float(self.timing.value[sink])
        event, edge, lag_from, lag_to, gap_to = walk_arrays(self.graph, self.timing, sink, start)
        end = at + tail
        rows = self._links(event[::-1], edge[::-1], lag_from[::-1], lag_to[::-1], gap_to[::-1])
        if edge.size and edge[-1] < 0 and np.isfinite(start) and gap_to[-1] > start:
            first = Rows.one(int(event[-1] // 2), IDLE, self.unknown, start, float(gap_to[-1]))
            rows = Rows.joined([first, rows])
        if tail > 0:
            rows = Rows.joined([rows, Rows.one(sink // 2, IDLE, self.host_gap, at, end)])
        return _merged(_clipped(self._segments(rows), start, end))

    def _links(
        self,
        event: np.ndarray,
        edge: np.ndarray,
        lag_from: np.ndarray,
        lag_to: np.ndarray,
        gap_to: np.ndarray,
    ) -> Rows:
        """The links' rows in time order (the links given so): per link its own part,
        then its gap (a launch delay's part after the activity was queued on the GPU apart),
        each where it has time."""
        g = self.graph
        linked = edge >= 0
        node, edge = event[linked] // 2, edge[linked]
        lag_from, lag_to, gap_to = lag_from[linked], lag_to[linked], gap_to[linked]
        role = g.edge_role[edge].astype(np.int64)
        own = np.isin(role, (DUR, TRANSFER, RETURN)) & (lag_to > lag_from)
        split = gap_to - queued_part(g, node, role, gap_to - lag_to)
        gap_name = self.gap_name[role]
        kind = g.kind[node].astype(np.int64)

        def per_link(a: np.ndarray, b: ArrayLike, c: ArrayLike) -> np.ndarray:
            """Link i's own part's value, then its gap's, then its queued part's."""
            return np.stack(np.broadcast_arrays(a, b, c), axis=1).reshape(-1)

        keep = per_link(own, split > lag_to, gap_to > split)
        return Rows(
            np.repeat(node, 3)[keep],
            per_link(kind, IDLE, IDLE)[keep],
            per_link(self.node_label[node], gap_name.astype(np.int64), self.queued)[keep],
            per_link(lag_from, lag_to, split)[keep],
            per_link(lag_to, split, gap_to)[keep],
            per_link(own & (role == DUR), False, False)[keep],
        )

    def _segments(self, rows: Rows) -> Segments:
        g = self.graph
        seg = Segments(
            g.rank[rows.node].astype(np.int64),
            rows.kind,
            rows.name,
            g.lane[rows.node].astype(np.int64),
            rows.start,
            rows.end,
            self.labels,
            g.lanes,
        )
        if self.expand is None or not rows.expandable.any():
            return seg
        return _with_pieces(seg, rows.node, rows.expandable, self.expand)


def _with_pieces(
    seg: Segments, node: np.ndarray, expandable: np.ndarray, expand: Expand
) -> Segments:
    """The rows of nodes that show as pieces replaced by those pieces, in place."""
    which = np.flatnonzero(expandable)
    pieces = expand(node[which], seg.start[which], seg.end[which])
    if pieces.owner.size == 0:
        return seg
    replaced = which[distinct(pieces.owner)]
    keep = np.ones(len(seg), dtype=bool)
    keep[replaced] = False
    # Each row's place: kept rows at their own, pieces at their owner's row.
    place = np.concatenate([np.flatnonzero(keep), which[pieces.owner]]).astype(np.float64)
    sub = np.concatenate([np.zeros(int(keep.sum())), np.arange(pieces.owner.size) + 1.0])
    order = np.lexsort((sub, place))
    cols = {
        "rank": np.concatenate([seg.rank[keep], pieces.rank]),
        "kind": np.concatenate([seg.kind[keep], pieces.kind]),
        "name": np.concatenate([seg.name[keep], pieces.name]),
        "lane": np.concatenate([seg.lane[keep], pieces.lane]),
        "start": np.concatenate([seg.start[keep], pieces.start]),
        "end": np.concatenate([seg.end[keep], pieces.end]),
    }
    return Segments(**{k: v[order] for k, v in cols.items()}, labels=seg.labels, lanes=seg.lanes)


def _clipped(seg: Segments, start: float, end: float) -> Segments:
    keep = (seg.end > start) & (seg.start < end)
    out = Segments(
        seg.rank[keep],
        seg.kind[keep],
        seg.name[keep],
        seg.lane[keep],
        np.maximum(seg.start[keep], start),
        np.minimum(seg.end[keep], end),
        seg.labels,
        seg.lanes,
    )
    return out


def _merged(seg: Segments) -> Segments:
    """Adjacent segments of the same thing (rank, kind, name, lane) joined; empty ones
    dropped."""
    keep = seg.end > seg.start
    rank, kind, name, lane = seg.rank[keep], seg.kind[keep], seg.name[keep], seg.lane[keep]
    start, end = seg.start[keep], seg.end[keep]
    if start.size == 0:
        return Segments(rank, kind, name, lane, start, end, seg.labels, seg.lanes)
    same = (rank[1:] == rank[:-1]) & (kind[1:] == kind[:-1]) & (name[1:] == name[:-1])
    same &= (lane[1:] == lane[:-1]) & (np.abs(end[:-1] - start[1:]) < MERGE_SLACK_US)
    head = np.concatenate([[True], ~same])
    first = np.flatnonzero(head)
    last = np.append(first[1:], head.size) - 1
    return Segments(
        rank[first],
        kind[first],
        name[first],
        lane[first],
        start[first],
        end[last],
        seg.labels,
        seg.lanes,
    )


def piece_expand(
    node_lo: np.ndarray,
    node_hi: np.ndarray,
    piece_time: np.ndarray,
    piece_kind: np.ndarray,
    piece_name: np.ndarray,
    node_lane: np.ndarray,
    node_rank: np.ndarray,
    piece_lane: np.ndarray | None = None,
) -> Expand:
    """An `Expand` of nodes whose pieces are [node_lo[n], node_hi[n]) of the piece arrays
    (times scaled to fill each node's part of the path, in order); nodes of no piece, or
    of no time, are not expanded."""
    total = np.zeros(node_lo.size)
    counts = node_hi - node_lo
    has = counts > 0
    sums = np.concatenate([[0.0], np.cumsum(piece_time)])
    total[has] = sums[node_hi[has]] - sums[node_lo[has]]

    def expand(nodes: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> Pieces:
        ok = (nodes < node_lo.size) & (nodes >= 0)
        n = np.where(ok, nodes, 0)
        ok &= (counts[n] > 0) & (total[n] > 0)
        which = np.flatnonzero(ok)
        n = n[which]
        cnt = counts[n]
        owner = np.repeat(which, cnt)
        first = np.repeat(node_lo[n], cnt)
        offset = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)  # in its node
        idx = first + offset
        scale = np.repeat((t1[which] - t0[which]) / total[n], cnt)
        dur = piece_time[idx] * scale
        # Each piece starts where the ones before it in its node end.
        before = np.cumsum(dur) - dur
        before -= np.repeat(before[np.cumsum(cnt) - cnt], cnt)
        start = np.repeat(t0[which], cnt) + before
        lane = piece_lane[idx] if piece_lane is not None else np.repeat(node_lane[n], cnt)
        return Pieces(
            owner,
            piece_kind[idx],
            piece_name[idx],
            lane,
            np.repeat(node_rank[n], cnt),
            start,
            start + dur,
        )

    return expand
