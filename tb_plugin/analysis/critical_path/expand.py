"""How a joined graph's nodes show on a path as their parts (`segments.Expand`): a host
node as its pieces (their times scaled by the change), a rank summary's local path as the
segments it keeps (`summaries.ReducedPart`, made again the first time a path runs through
it). Built per timing's factors; each part's table only when a path first needs it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..core.common import distinct
from .changes import Scaled
from .graph import Labels
from .segments import Expand, Pieces, piece_expand


@dataclass
class PartPieces:
    """A part's pieces: per piece its node (local, nondecreasing), time, kind code
    (`segments.SEGMENT_KINDS`), name (an index into `name_table`) and lane (local; None:
    its node's)."""

    node: np.ndarray
    time: np.ndarray
    kind: np.ndarray
    name: np.ndarray
    name_table: list[str]
    lane: np.ndarray | None
    min_pieces: int  # a node shows as pieces from this many


class HasPieces(Protocol):
    def piece_table(self, factors: Scaled) -> PartPieces: ...


def joint_expand(
    parts: list[HasPieces],
    factors: list[Scaled],
    node_offset: np.ndarray,
    lane_offset: np.ndarray,
    node_lane: np.ndarray,
    node_rank: np.ndarray,
    labels: Labels,
) -> Expand:
    """An `Expand` over the joint graph: each node asked goes to its part's table."""
    made: dict[int, Expand] = {}
    bounds = np.append(node_offset, node_lane.size)

    def part_expand(i: int) -> Expand:
        got = made.get(i)
        if got is None:
            table = parts[i].piece_table(factors[i])
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            local = np.arange(hi - lo)
            node_lo = np.searchsorted(table.node, local, side="left")
            node_hi = np.searchsorted(table.node, local, side="right")
            lane = None if table.lane is None else table.lane + int(lane_offset[i])
            got = made[i] = piece_expand(
                node_lo,
                np.where(node_hi - node_lo >= table.min_pieces, node_hi, node_lo),
                table.time,
                table.kind,
                labels.codes(table.name_table)[table.name],
                node_lane[lo:hi],
                node_rank[lo:hi],
                lane,
            )
        return got

    def expand(nodes: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> Pieces:
        part = np.searchsorted(node_offset, nodes, side="right") - 1
        found: list[Pieces] = []
        for i in distinct(part).tolist():
            mine = np.flatnonzero(part == i)
            got = part_expand(i)(nodes[mine] - int(bounds[i]), t0[mine], t1[mine])
            got.owner = mine[got.owner]
            found.append(got)
        return _joined(found)

    return expand


def _joined(found: list[Pieces]) -> Pieces:
    if len(found) == 1:
        return found[0]
    cols = [
        np.concatenate([getattr(p, key) for p in found]) if found else np.zeros(0)
        for key in ("owner", "kind", "name", "lane", "rank", "start", "end")
    ]
    order = np.argsort(cols[0], kind="stable")
    return Pieces(*[c[order] for c in cols])
