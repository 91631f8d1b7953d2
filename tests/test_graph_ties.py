"""The evaluation order among events at one time (`graph.finish`): each edge between two
such events puts its destination after its source. Its depths are found a pass at a time
over the edges out of what the pass before deepened; here against passes over every edge,
on random graphs with and without cycles, and on a chain and a cycle of ties."""

from __future__ import annotations

import numpy as np
from kinetoscope.analysis.critical_path.graph import (
    DUR,
    MAX_TIE_PASSES,
    GraphBuilder,
    _tie_levels,
    finish,
)


def _every_edge_levels(
    src: np.ndarray, dst: np.ndarray, tie: np.ndarray, events: int
) -> np.ndarray:
    level = np.zeros(events, dtype=np.int64)
    for _ in range(MAX_TIE_PASSES):
        want = level[src[tie]] + 1
        late = want > level[dst[tie]]
        if not late.any():
            break
        np.maximum.at(level, dst[tie[late]], want[late])
    return level


def test_tie_depths_equal_passes_over_every_edge() -> None:
    rng = np.random.default_rng(11)
    for trial in range(60):
        events = int(rng.integers(2, 400))
        edges = int(rng.integers(1, 3 * events))
        src = rng.integers(0, events, edges)
        dst = rng.integers(0, events, edges)
        if trial % 2 == 0:  # acyclic: every edge forward in a random order of the events
            rank = rng.permutation(events)
            keep = rank[src] < rank[dst]
            src, dst = src[keep], dst[keep]
        tie = np.flatnonzero(rng.random(src.size) < 0.7)
        got = _tie_levels(src, dst, tie, events)
        assert np.array_equal(got, _every_edge_levels(src, dst, tie, events))


def _zero_length_nodes(count: int) -> tuple[GraphBuilder, np.ndarray]:
    b = GraphBuilder()
    at = np.full(count, 100.0)
    nodes = b.nodes(0, np.zeros(count, np.int64), 0, np.full(count, -1), at, at)
    return b, nodes


def test_a_chain_of_ties_keeps_every_link() -> None:
    """Thirty zero-length nodes at one time, each after the next one's id (so no order of
    ids keeps them): every link kept, each node after the one it follows."""
    b, ids = _zero_length_nodes(30)
    nodes = ids[::-1]
    b.edges(2 * nodes + 1, 2 * nodes, DUR, np.zeros(nodes.size))
    b.edges(2 * nodes[1:], 2 * nodes[:-1] + 1, 0, np.zeros(nodes.size - 1))
    graph = finish(b.build())
    assert graph.dropped == {}
    position = np.empty(graph.order.size, dtype=np.int64)
    position[graph.order] = np.arange(graph.order.size)
    assert np.all(np.diff(position[2 * nodes]) > 0)


def test_a_cycle_of_ties_loses_one_link_and_stays_cheap() -> None:
    """Two nodes at one time, each after the other: no order keeps both links; one is
    left out and counted, and the passes stop at the cap."""
    b, nodes = _zero_length_nodes(2)
    b.edges(2 * nodes + 1, 2 * nodes, DUR, np.zeros(2))
    b.edges(2 * nodes[[1, 0]], 2 * nodes[[0, 1]] + 1, 0, np.zeros(2))
    graph = finish(b.build())
    assert sum(graph.dropped.values()) == 1
