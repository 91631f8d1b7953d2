"""One trace made ready for a view: its graph, its steps' anchors, the collectives it
holds (as the Distributed view's collective table, so ranks match by its rules), the
factors of a change, and how its host nodes are shown."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.trace_model import TraceModel
from ..core import comms
from ..core.ranks import header_rank
from ..core.steps import find_steps
from ..distributed.summary import CollectiveTable, collective_table
from .anchors import StepAnchors, step_anchors
from .build import RankGraph, rank_graph
from .changes import Change, Scaled, own_times, scaled
from .graph import IDLE_KIND, KIND_NAMES, WAIT, Graph
from .path import Expand, Segment, piece_expander


@dataclass
class Part:
    """A trace in a view: `rank` its rank number (None: unknown)."""

    model: TraceModel
    rg: RankGraph
    anchors: StepAnchors
    table: CollectiveTable
    collective_nodes: np.ndarray  # per instance of `table`, its node (-1: not in the graph)
    rank: int | None
    worker: str
    piece_names: list[str]
    piece_kinds: list[str]

    @property
    def origin_us(self) -> float:
        return float(self.model.time_origin_us)

    @property
    def graph(self) -> Graph:
        return self.rg.graph

    @property
    def assumptions(self) -> list[str]:
        return self.rg.assumptions

    def own_times(self, factors: Scaled) -> np.ndarray:
        """Per node, its own time under the factors."""
        return own_times(self.rg, factors)

    def factors(self, change: Change | None) -> Scaled:
        return scaled(self.model, self.rg, change, self.rank)

    def expander(self, factors: Scaled, node_offset: int = 0, rank_index: int = 0) -> Expand:
        piece_time = (self.rg.pieces.end - self.rg.pieces.start) * factors.pieces
        inner = piece_expander(
            self.rg.graph, self.rg.piece_node, piece_time, self.piece_names, self.piece_kinds
        )

        def expand(node: int, t0: float, t1: float) -> list[Segment] | None:
            out = inner(node - node_offset, t0, t1)
            if out is not None:
                for s in out:
                    s.rank = rank_index
            return out

        return expand


def part_of(model: TraceModel, worker: str = "", collectives: str = "own") -> Part:
    rg = rank_graph(model, collectives)
    coll = comms.extract(model)
    table = collective_table(coll, find_steps(model))
    node_of_row = {int(r): int(n) for r, n in zip(rg.acts.rows.tolist(), rg.act_node.tolist())}
    node_of_row.update(rg.transfer_node)
    nodes = np.array([node_of_row.get(int(r), -1) for r in coll.rows.tolist()], dtype=np.int64)
    names, kinds = _piece_labels(model, rg)
    return Part(
        model=model,
        rg=rg,
        anchors=step_anchors(model, rg),
        table=table,
        collective_nodes=nodes,
        rank=header_rank(model.header),
        worker=worker,
        piece_names=names,
        piece_kinds=kinds,
    )


def _piece_labels(model: TraceModel, rg: RankGraph) -> tuple[list[str], list[str]]:
    """Each host piece's name (its innermost range or call) and kind."""
    pieces = rg.pieces
    codes = np.where(pieces.row >= 0, model.events["name"][np.maximum(pieces.row, 0)], -1)
    names = [model.names[int(c)] if c >= 0 else IDLE_KIND for c in codes.tolist()]
    waits = rg.piece_wait >= 0
    node_names = rg.graph.names
    for i in np.flatnonzero(waits).tolist():
        node = int(rg.piece_node[i])
        names[i] = node_names[int(rg.graph.name[node])]
    blocking = pieces.blocking_call | waits
    kinds = [KIND_NAMES[WAIT] if b else KIND_NAMES[0] for b in blocking.tolist()]
    return names, kinds
