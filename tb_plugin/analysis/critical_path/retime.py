"""Evaluating a dependency graph: every event's time under some lags (the recorded ones, or
a what-if's), the in-edge that set it, and the chain of those edges back from an event:
the critical path.

The evaluation is one pass over the events in the graph's order (a longest path in a
DAG). It is sequential by nature; it runs in Python over plain lists, about a microsecond
an edge, and only when a critical path or a what-if is asked for."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graph import DUR, RETURN, TRANSFER, Graph


@dataclass
class Timing:
    """Event times under one set of lags, and the in-edge that set each (-1: none)."""

    value: np.ndarray  # f8 per event
    binding: np.ndarray  # i8 per event: edge index, -1 for an event with no in-edge
    lag: np.ndarray  # the lags evaluated

    def start(self) -> np.ndarray:
        return self.value[0::2]

    def end(self) -> np.ndarray:
        return self.value[1::2]


def evaluate(graph: Graph, lag: np.ndarray | None = None, add: np.ndarray | None = None) -> Timing:
    """Every event's time: the latest in-edge's source time + lag, plus the event's add
    (`add`: instead of the graph's; an event with no in-edge is its add)."""
    lags = graph.edge_lag if lag is None else lag
    edges = graph.in_edges
    src = graph.edge_src[edges].tolist()
    reach_lag = lags[edges].tolist()
    edge_ids = edges.tolist()
    ptr = graph.in_ptr.tolist()
    add = (graph.add if add is None else add).tolist()
    value = [0.0] * graph.events
    binding = [-1] * graph.events
    for k, p in enumerate(graph.order.tolist()):
        a, b = ptr[k], ptr[k + 1]
        if a == b:
            value[p] = add[p]
            continue
        best = value[src[a]] + reach_lag[a]
        chosen = a
        for q in range(a + 1, b):
            x = value[src[q]] + reach_lag[q]
            if x > best:
                best, chosen = x, q
        value[p] = best + add[p]
        binding[p] = edge_ids[chosen]
    return Timing(np.array(value), np.array(binding, dtype=np.int64), lags)


@dataclass
class Step:
    """One link of a path, latest first: `edge` into `event` (its source is the next
    link's event), the time the edge's own part took (`lag_from`, `lag_to`) and the add
    after it (`gap_from`, `gap_to`)."""

    event: int
    edge: int
    lag_from: float
    lag_to: float
    gap_to: float


def walk_back(
    graph: Graph, timing: Timing, event: int, stop: float, ports: np.ndarray | None = None
) -> list[Step]:
    """The binding edges from `event` back to the first event at or before `stop`, to an
    event with no in-edge, or (with `ports`, a flag per event) to the first port reached."""
    value, binding = timing.value, timing.binding
    src, lags = graph.edge_src, timing.lag
    out: list[Step] = []
    p = int(event)
    while True:
        e = int(binding[p])
        at_port = ports is not None and bool(ports[p]) and p != event
        if e < 0 or value[p] <= stop or at_port:
            out.append(Step(p, -1, float(value[p]), float(value[p]), float(value[p])))
            return out
        u = int(src[e])
        lag_from = float(value[u])
        lag_to = lag_from + float(lags[e])
        out.append(Step(p, e, lag_from, lag_to, float(value[p])))
        p = u


def node_part(graph: Graph, role: int) -> bool:
    """Whether an edge's own part (its lag) is a node's time on the path (a duration, a
    transfer, a blocking call's return) rather than a dependency with no time."""
    return role in (DUR, TRANSFER, RETURN)
