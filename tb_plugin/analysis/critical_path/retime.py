"""Evaluating a dependency graph: every event's time under some lags (the recorded ones, or
a what-if's), the in-edge that set it, and the chain of those edges back from an event:
the critical path.

The evaluation is one pass over the events in the graph's order (a longest path in a
DAG). It is sequential by nature: compiled (`_retime.c`, a few nanoseconds an edge), or in
Python over plain lists (about a microsecond an edge) where no C compiler built it; only
when a critical path or a what-if is asked for."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graph import DUR, RETURN, TRANSFER, Graph

try:  # the compiled evaluation (`_retime.c`); without a C compiler, the Python loop
    from . import _retime  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a machine without a C compiler
    _retime = None


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
    (`add`: instead of the graph's; an event with no in-edge is its add). In one compiled
    pass (`_retime.c`) where it is built, else in Python: the same doubles."""
    lags = graph.edge_lag if lag is None else lag
    if _retime is not None:
        return _evaluate_compiled(graph, lags, graph.add if add is None else add)
    return evaluate_python(graph, lags, add)


def _evaluate_compiled(graph: Graph, lags: np.ndarray, add: np.ndarray) -> Timing:
    assert _retime is not None
    order, in_ptr, edges, src = graph.kept(
        "compiled_evaluation",
        (graph.order, graph.in_ptr, graph.in_edges, graph.edge_src),
        lambda: _compiled_inputs(graph),
    )
    value = np.empty(graph.events)
    binding = np.empty(graph.events, dtype=np.int64)
    _retime.evaluate(
        order,
        in_ptr,
        src,
        np.ascontiguousarray(lags[edges], dtype=np.float64),
        edges,
        np.ascontiguousarray(add, dtype=np.float64),
        value,
        binding,
    )
    return Timing(value, binding, lags)


def _compiled_inputs(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The finished graph's order, in-edge pointers, in-edges and their sources, as the
    compiled pass takes them."""
    edges = np.ascontiguousarray(graph.in_edges, dtype=np.int64)
    return (
        np.ascontiguousarray(graph.order, dtype=np.int64),
        np.ascontiguousarray(graph.in_ptr, dtype=np.int64),
        edges,
        np.ascontiguousarray(graph.edge_src[edges], dtype=np.int64),
    )


def evaluate_python(graph: Graph, lags: np.ndarray, add: np.ndarray | None = None) -> Timing:
    """`evaluate`'s loop in Python (the compiled pass's twin)."""
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


def walk_arrays(
    graph: Graph, timing: Timing, event: int, stop: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`walk_back`'s links as columns (event, edge, lag_from, lag_to, gap_to), latest
    first, with no object a link (the chain walked by `_retime.walk` where it is built)."""
    ev, ed = _chain(graph, timing, event, stop)
    value, lags = timing.value, timing.lag
    gap_to = value[ev]
    linked = ed >= 0
    lag_from = gap_to.copy()
    inner = np.flatnonzero(linked[:-1])
    lag_from[inner] = value[ev[inner + 1]]
    lag_to = lag_from.copy()
    lag_to[linked] += lags[ed[linked]]
    return ev, ed, lag_from, lag_to, gap_to


def chain_origin(graph: Graph, timing: Timing, event: int, ports: np.ndarray) -> int:
    """The event `walk_back(graph, timing, event, -inf, ports)` ends at, without a Step a
    link (a rank's summary asks this of each arrival, twice)."""
    events, _ = _chain(graph, timing, event, -np.inf, ports)
    return int(events[-1])


def chain_origins(
    graph: Graph, timing: Timing, events: np.ndarray, ports: np.ndarray
) -> np.ndarray:
    """`chain_origin` of each of `events`, in one compiled pass (numpy: one walk each)."""
    starts = np.ascontiguousarray(events, dtype=np.int64)
    if _retime is None:
        return np.array(
            [chain_origin(graph, timing, int(e), ports) for e in starts.tolist()], dtype=np.int64
        )
    out = np.empty(starts.size, dtype=np.int64)
    port_bytes = np.ascontiguousarray(ports, dtype=np.bool_)
    if _retime.origins(timing.value, timing.binding, graph.edge_src, starts, port_bytes, out):
        raise ValueError("the graph's binding edges form a cycle")
    return out


def _chain(
    graph: Graph, timing: Timing, event: int, stop: float, ports: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The events of the binding chain back from `event` and the edge into each (-1: the
    last), latest first; with `ports` (a flag per event), to the first port reached."""
    if _retime is not None:
        port_bytes = b"" if ports is None else np.ascontiguousarray(ports, dtype=np.bool_)
        room = 1024
        while True:
            events = np.empty(room, dtype=np.int64)
            edges = np.empty(room, dtype=np.int64)
            count = _retime.walk(
                timing.value, timing.binding, graph.edge_src, int(event), float(stop), events,
                edges, port_bytes,
            )  # fmt: skip
            if count == -1:
                raise ValueError("the graph's binding edges form a cycle")
            if count >= 0:
                return events[:count], edges[:count]
            room = -count
    links = walk_back(graph, timing, event, stop, ports)
    return (
        np.array([link.event for link in links], dtype=np.int64),
        np.array([link.edge for link in links], dtype=np.int64),
    )
