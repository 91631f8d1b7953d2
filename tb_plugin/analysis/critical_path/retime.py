"""Evaluating a dependency graph: every event's time under some lags (the recorded ones, or
a what-if's), the in-edge that set it, and the chain of those edges back from an event:
the critical path.

The evaluation is one pass over the events in the graph's order (a longest path in a
DAG). It is sequential by nature; it runs in Python over plain lists, about a microsecond
an edge, and only when a critical path or a what-if is asked for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .graph import DUR, RETURN, TRANSFER, Graph


@dataclass
class Timing:
    """Event times under one set of lags, and the in-edge that set each (-1: none)."""

    value: np.ndarray  # f8 per event
    binding: np.ndarray  # i8 per event: edge index, -1 for an event with no in-edge
    lag: np.ndarray  # the lags evaluated
    # The same as lists, and each edge's source: what `walk_back` reads one item at a
    # time (a list's item is several times cheaper than an array's; a rank's summary
    # walks back some hundred paths).
    lists: tuple[list[float], list[int], list[int], list[float]] = field(
        repr=False, default=([], [], [], [])
    )

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
    lists = (value, binding, graph.edge_src.tolist(), lags.tolist())
    return Timing(np.array(value), np.array(binding, dtype=np.int64), lags, lists)


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
    graph: Graph, timing: Timing, event: int, stop: float, ports: Sequence[int] | None = None
) -> list[Step]:
    """The binding edges from `event` back to the first event at or before `stop`, to an
    event with no in-edge, or (with `ports`, a flag per event) to the first port reached.
    (`graph`: the one `timing` evaluated.)"""
    value, _, src, lags = timing.lists
    events, edges = _chain(timing, event, stop, ports)
    out = []
    for p, e in zip(events, edges):
        lag_from = value[src[e]]
        out.append(Step(p, e, lag_from, lag_from + lags[e], value[p]))
    last = value[events[-1]]
    out.append(Step(events[-1], -1, last, last, last))
    return out


def origin_of(timing: Timing, event: int, ports: Sequence[int] | None = None) -> int:
    """The event `walk_back` (with no `stop`) ends at, without making its steps."""
    return _chain(timing, event, -np.inf, ports)[0][-1]


def _chain(
    timing: Timing, event: int, stop: float, ports: Sequence[int] | None
) -> tuple[list[int], list[int]]:
    """`walk_back`'s events (from `event`, the last where it stops) and the binding edge
    into each but the last."""
    value, binding, src, _ = timing.lists
    events: list[int] = []
    edges: list[int] = []
    p = int(event)
    while True:
        events.append(p)
        e = binding[p]
        if e < 0 or value[p] <= stop or (ports is not None and p != event and ports[p]):
            return events, edges
        edges.append(e)
        p = src[e]


def node_part(graph: Graph, role: int) -> bool:
    """Whether an edge's own part (its lag) is a node's time on the path (a duration, a
    transfer, a blocking call's return) rather than a dependency with no time."""
    return role in (DUR, TRANSFER, RETURN)
