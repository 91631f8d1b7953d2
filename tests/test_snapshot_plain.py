"""`check_plain` on random graphs of lists and dicts (shared children, self-references,
longer cycles, tuple keys), decoded from real pickles: refused exactly when the graph
has a cycle, as a plain recursive search finds it. The walk remembers only containers
with more than one reference; these graphs are where that could go wrong."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest
from kinetoscope.ingest.snapshot import SnapshotError, decode_snapshot


def has_cycle(value: Any) -> bool:
    done: set[int] = set()

    def visit(item: Any, path: set[int]) -> bool:
        if not isinstance(item, (list, dict, tuple)) or id(item) in done:
            return False
        if id(item) in path:
            return True
        path.add(id(item))
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        found = any(visit(c, path) for c in children)
        path.discard(id(item))
        done.add(id(item))
        return found

    return visit(value, set())


def _graph(r: random.Random) -> dict:
    nodes: list[Any] = [[] if r.random() < 0.5 else {} for _ in range(r.randrange(1, 8))]
    for node in nodes:
        for _ in range(r.randrange(0, 4)):
            target = r.choice(nodes) if r.random() < 0.6 else r.choice([1, "x", None, (1, 2)])
            if isinstance(node, list):
                node.append(target)
            else:
                node[r.choice(["a", "b", 5, (1, "k")])] = target
    return {"segments": [], "device_traces": [nodes[: r.randrange(1, len(nodes) + 1)]]}


def test_refused_exactly_when_the_graph_has_a_cycle() -> None:
    r = random.Random(34)
    cyclic = 0
    for _ in range(2000):
        snapshot = _graph(r)
        data = pickle.dumps(snapshot, protocol=r.choice([2, 4, 5]))
        if has_cycle(snapshot):
            cyclic += 1
            with pytest.raises(SnapshotError, match="holds itself"):
                decode_snapshot(data)
        else:
            assert decode_snapshot(data) == snapshot
    assert 200 < cyclic < 1800  # both kinds were tried
