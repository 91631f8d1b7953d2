"""One trace made ready for a view: its graph, its steps' anchors, the collectives it
holds (as the Distributed view's collective table, so ranks match by its rules), the
factors of a change, and how its host nodes are shown."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...model.trace_model import TraceModel
from ..core import comms
from ..core.ranks import header_rank
from ..core.steps import find_steps
from ..distributed.summary import CollectiveTable, collective_table
from .anchors import StepAnchors, step_anchors
from .build import RankGraph, rank_graph
from .changes import Change, Scaled, own_times, scaled
from .expand import PartPieces
from .graph import IDLE_KIND, KIND_NAMES, WAIT, Graph
from .path import Expand, Segment, piece_expander
from .segments import SEGMENT_KINDS


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

    @cached_property
    def piece_labels(self) -> PieceLabels:
        """Its host pieces' names and kinds: made when a path shows them (a run's summary
        without segments never does)."""
        return _piece_labels(self.model, self.rg)

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

    def piece_table(self, factors: Scaled) -> PartPieces:
        """Its host nodes' pieces, each its time under the change (a node of one piece
        shows as itself)."""
        time = (self.rg.pieces.end - self.rg.pieces.start) * factors.pieces
        labels = self.piece_labels
        return PartPieces(self.rg.piece_node, time, labels.kind, labels.name, labels.table, None, 2)

    def expander(self, factors: Scaled, node_offset: int = 0, rank_index: int = 0) -> Expand:
        """Host nodes as their pieces one node at a time (a rank's summary, `reduce.py`)."""
        piece_time = (self.rg.pieces.end - self.rg.pieces.start) * factors.pieces
        labels = self.piece_labels
        names = [labels.table[c] for c in labels.name.tolist()]
        kinds = [SEGMENT_KINDS[k] for k in labels.kind.tolist()]
        inner = piece_expander(self.rg.graph, self.rg.piece_node, piece_time, names, kinds)

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
    nodes = _nodes_of_rows(rg, coll.rows)
    return Part(
        model=model,
        rg=rg,
        anchors=step_anchors(model, rg),
        table=table,
        collective_nodes=nodes,
        rank=header_rank(model.header),
        worker=worker,
    )


def _nodes_of_rows(rg: RankGraph, rows: np.ndarray) -> np.ndarray:
    """Per row (a collective's), its node: a GPU activity's, a host collective's; -1."""
    out = np.full(rows.size, -1, dtype=np.int64)
    order = np.argsort(rg.acts.rows, kind="stable")
    acts = rg.acts.rows[order]
    if acts.size:
        pos = np.minimum(np.searchsorted(acts, rows), acts.size - 1)
        found = acts[pos] == rows
        out[found] = rg.act_node[order[pos[found]]]
    for i, row in enumerate(rows.tolist()):
        node = rg.transfer_node.get(int(row))
        if node is not None:
            out[i] = node
    return out


@dataclass
class PieceLabels:
    """Per host piece, its name (an index into `table`) and kind (SEGMENT_KINDS index)."""

    name: np.ndarray
    table: list[str]
    kind: np.ndarray


def _piece_labels(model: TraceModel, rg: RankGraph) -> PieceLabels:
    """Each host piece's name (its innermost range or call; a wait: its node's), as an
    index into a table of the names used, and its kind (SEGMENT_KINDS index)."""
    pieces = rg.pieces
    codes = np.where(pieces.row >= 0, model.events["name"][np.maximum(pieces.row, 0)], -1)
    codes = codes.astype(np.int64)
    n_model = len(model.names)
    codes[codes < 0] = n_model  # no range: idle
    waits = np.flatnonzero(rg.piece_wait >= 0)
    g = rg.graph
    wait_names = [g.names[int(g.name[int(rg.piece_node[i])])] for i in waits.tolist()]
    codes[waits] = n_model + 1 + np.arange(waits.size)
    used, index = _used_codes(codes, n_model + 1 + waits.size)
    table = [
        model.names[c]
        if c < n_model
        else IDLE_KIND
        if c == n_model
        else wait_names[c - n_model - 1]
        for c in used.tolist()
    ]
    blocking = pieces.blocking_call | (rg.piece_wait >= 0)
    kind = np.where(blocking, SEGMENT_KINDS.index(KIND_NAMES[WAIT]), SEGMENT_KINDS.index("cpu"))
    return PieceLabels(index.reshape(-1).astype(np.int64), table, kind.astype(np.int64))


def _used_codes(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(codes, return_inverse=True) for codes in [0, n_codes), by a table instead
    of a sort: a 1 GB trace's millions of pieces sorted were ~0.4 s."""
    present = np.zeros(n_codes, dtype=bool)
    present[codes] = True
    used = np.flatnonzero(present)
    position = np.cumsum(present, dtype=np.int64) - 1
    return used, position[codes]
