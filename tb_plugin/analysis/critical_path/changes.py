"""What-if changes: one kind of work scaled by a factor (0.5: twice as fast), on every rank
or on one, and the graph's lags under it.

- `kernel`: the GPU activities of that name (a communication kernel's transfer);
- `op`: the host time of every call of that op (its children included) and the GPU work
  launched inside it (a graph-replayed kernel goes with the op that captured it);
- `collective`: the transfer of every collective of that type (`all_reduce`, ...);
- `rank_all`: every node's own time on the rank (host pieces, GPU work; not the waits,
  gaps and delays between them, nor the transfers, which are the group's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.errors import ViewParamError
from ...model.trace_model import TraceModel
from ..core.gpu_owners import gpu_owners
from ..core.graph_replay import graph_replay, has_graph_launches
from ..core.host_ranges import host_ranges
from ..core.rules import collective_type
from .build import RankGraph
from .graph import COLLECTIVE, DUR, TRANSFER, WAIT, Graph
from .host import under_ops

CHANGE_KINDS = ("kernel", "op", "collective", "rank_all")


@dataclass(frozen=True)
class Change:
    kind: str  # CHANGE_KINDS
    name: str  # kernel or op name, collective type; "" for rank_all
    factor: float
    rank: int | None = None  # only on this rank (the trace's rank); None: every rank

    def label(self) -> str:
        what = {
            "kernel": f"kernel {self.name}",
            "op": f"op {self.name}",
            "collective": f"collective {self.name}",
            "rank_all": "everything",
        }[self.kind]
        where = f" on rank {self.rank}" if self.rank is not None else ""
        return f"{what}{where} x{self.factor:g}"


def change_of(params: dict[str, object]) -> Change | None:
    """The change a request names (`kernel`, `op`, `collective` or `rank_all`, with
    `factor` and maybe `rank`), None when it names none; ViewParamError when it names
    several, or a factor that is not a positive number."""
    named = [k for k in CHANGE_KINDS if _named(params.get(k))]
    if not named:
        return None
    if len(named) > 1:
        raise ViewParamError(f"one change at a time: got {', '.join(named)}")
    factor = check_factor(params.get("factor"))
    kind = named[0]
    name = "" if kind == "rank_all" else str(params[kind])
    if kind == "collective":
        name = collective_type(name) or name
    rank = params.get("rank")
    return Change(kind, name, float(factor), rank if isinstance(rank, int) else None)


def names_an_op(params: dict[str, object]) -> bool:
    """Whether a request's change is of an op: its ranks then read which op owns each GPU
    activity (`core.gpu_owners`), found once for a batch of ranks."""
    return _named(params.get("op"))


def _named(value: object) -> bool:
    return value not in (None, "", False)


MAX_FACTOR = 1e6  # a million times as long: past it the times a step sums overflow


def check_factor(factor: object) -> float:
    """A change's factor: a number from 0 to MAX_FACTOR, else ViewParamError."""
    if not isinstance(factor, (int, float)) or not np.isfinite(factor) or factor < 0:
        raise ViewParamError("factor: a number >= 0 (0.5: twice as fast), e.g. factor=0.5")
    if factor > MAX_FACTOR:
        raise ViewParamError(f"factor: at most {MAX_FACTOR:g} (a change a million times as long)")
    return float(factor)


@dataclass
class Scaled:
    """Per node, the factor on its own time, and on its transfer (collectives)."""

    own: np.ndarray
    transfer: np.ndarray
    pieces: np.ndarray  # per host piece, the factor on its time
    matched: int  # calls (ops), activities (kernels), collectives the change applies to


def scaled(model: TraceModel, rg: RankGraph, change: Change | None, rank: int | None) -> Scaled:
    """The factors a change puts on one rank's graph (`rank`: the trace's rank)."""
    g = rg.graph
    own = np.ones(len(g))
    transfer = np.ones(len(g))
    pieces = np.ones(len(rg.pieces))
    if change is None or (change.rank is not None and change.rank != rank):
        return Scaled(own, transfer, pieces, 0)
    f = change.factor
    collective = g.kind == COLLECTIVE
    # Compared by the graph's name codes: a name per node as text was an object array of
    # every node made for each change.
    if change.kind == "kernel":
        hit = (g.name == _code_of(g.names, change.name)) & (rg_is_gpu(rg))
        own[hit & ~collective] = f
        transfer[hit & collective] = f
        return Scaled(own, transfer, pieces, int(hit.sum()))
    if change.kind == "collective":
        typed = np.array([(collective_type(n) or n) == change.name for n in g.names], dtype=bool)
        hit = collective & typed[g.name] if len(g) else collective
        transfer[hit] = f
        return Scaled(own, transfer, pieces, int(hit.sum()))
    if change.kind == "rank_all":
        own[g.scalable] = f
        pieces[:] = f
        return Scaled(own, transfer, pieces, int(g.scalable.sum()))
    return _op_factors(model, rg, change, own, transfer, pieces)


def _code_of(names: list[str], name: str) -> int:
    """The graph's code of `name`; -1 (no node) when it names none."""
    try:
        return names.index(name)
    except ValueError:
        return -1


def rg_is_gpu(rg: RankGraph) -> np.ndarray:
    out = np.zeros(len(rg.graph), dtype=bool)
    out[rg.act_node] = True
    return out


def _op_factors(
    model: TraceModel,
    rg: RankGraph,
    change: Change,
    own: np.ndarray,
    transfer: np.ndarray,
    pieces: np.ndarray,
) -> Scaled:
    f = change.factor
    under = under_ops(model, change.name)
    inside = np.zeros(len(rg.pieces), dtype=bool)
    ranged = rg.pieces.range_pos >= 0
    inside[ranged] = under[rg.pieces.range_pos[ranged]]
    pieces[inside] = f
    gpu = _gpu_under_op(model, rg, change.name, under)
    g = rg.graph
    gpu_nodes = rg.act_node[gpu]
    collective = g.kind[gpu_nodes] == COLLECTIVE
    own[gpu_nodes[~collective]] = f
    transfer[gpu_nodes[collective]] = f
    ranges = host_ranges(model)
    calls = int((model.events["name"][ranges.rows] == model.name_code(change.name)).sum())
    # The op's calls (its own ranges, not the pieces or children they hold); an op seen
    # only as a graph capture: the replayed kernels it owns.
    return Scaled(own, transfer, pieces, calls if calls else int(gpu.sum()))


def _gpu_under_op(model: TraceModel, rg: RankGraph, name: str, under: np.ndarray) -> np.ndarray:
    """Per GPU activity (rg.acts order), whether the op launched it: its owning op
    (`gpu_owners`: the op tree's rule) is under the op, or, replayed from a
    CUDA graph, it was captured by an op of that name."""
    owners = gpu_owners(model)
    acts = rg.acts
    out = np.zeros(len(acts), dtype=bool)
    if owners.gpu.size and len(acts):
        pos = np.minimum(np.searchsorted(owners.gpu, acts.rows), owners.gpu.size - 1)
        known = owners.gpu[pos] == acts.rows
        # `under` is by host-range position (the op tree's nodes, optree._nest)
        node = np.where(known, owners.positions(host_ranges(model).rows)[pos], -1)
        owned = node >= 0
        out[owned] = under[node[owned]]
    if has_graph_launches(model):
        replay = graph_replay(model)
        if replay.kernels.size:
            pos = np.minimum(np.searchsorted(replay.kernels, acts.rows), replay.kernels.size - 1)
            hit = np.flatnonzero((replay.kernels[pos] == acts.rows) & replay.named[pos])
            for i in hit.tolist():
                out[i] |= replay.name_of(int(pos[i])) == name
    return out


def lags(rg_graph: Graph, node_own: np.ndarray, node_transfer: np.ndarray) -> np.ndarray:
    """The graph's edge lags with nodes' own times and transfers scaled: a DUR edge's lag
    is its node's (new) own time, a TRANSFER edge's its node's transfer times the factor;
    a blocking node's own time is its return, never scaled."""
    g = rg_graph
    out = g.edge_lag.copy()
    dur, dur_node, tr, tr_node = g.kept(
        "scaled_edges", (g.edge_dst, g.edge_role, g.kind), lambda: _scaled_edges(g)
    )
    out[dur] = node_own[dur_node]
    out[tr] = g.edge_lag[tr] * node_transfer[tr_node]
    return out


def _scaled_edges(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The edges a change's factors set: DUR edges of nodes other than waits and TRANSFER
    edges, each with its node."""
    node = g.edge_dst // 2
    dur = np.flatnonzero((g.edge_role == DUR) & (g.kind[node] != WAIT))
    tr = np.flatnonzero(g.edge_role == TRANSFER)
    return dur, node[dur], tr, node[tr]


def own_times(rg: RankGraph, factors: Scaled) -> np.ndarray:
    """Per node, its own time under the factors: host nodes the sum of their pieces' scaled
    times, other nodes their recorded duration times their factor."""
    g = rg.graph
    dur = g.node_durations() * factors.own
    if len(rg.pieces):
        piece_time, host, recorded = g.kept(
            "host_pieces",
            (g.kind, rg.pieces.start, rg.pieces.end, rg.piece_node),
            lambda: _host_pieces(rg),
        )
        if (factors.pieces == 1.0).all():
            hosts = recorded  # a change of no host piece (kernels, collectives)
        else:
            weights = piece_time * factors.pieces
            hosts = np.bincount(rg.piece_node, weights=weights, minlength=len(g))
        dur[host] = hosts[host]
    return dur


def _host_pieces(rg: RankGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The host pieces' recorded times, which nodes are made of pieces, and per node the
    sum of its pieces' recorded times."""
    host = np.zeros(len(rg.graph), dtype=bool)
    host[rg.piece_node] = True
    piece_time = rg.pieces.end - rg.pieces.start
    recorded = np.bincount(rg.piece_node, weights=piece_time, minlength=len(rg.graph))
    return piece_time, host, recorded
