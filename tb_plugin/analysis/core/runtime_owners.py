"""Which op-tree node a runtime/driver call belongs to by its `External id`: the node of
its own thread with that id, where that node contains the call in time (optree.py's rule;
the containing node otherwise)."""

from __future__ import annotations

import numpy as np

from ...model.trace_model import TraceModel


def attach_runtimes(
    model: TraceModel,
    runtime_threads: tuple[np.ndarray, np.ndarray],
    node_threads: tuple[np.ndarray, np.ndarray],
    rt_container: np.ndarray,
) -> np.ndarray:
    """Node of each runtime call (rows, and their thread keys) among the nodes (the same):
    the node of its thread with its External id if that node contains it in time, else
    the innermost node containing it; -1 when none."""
    (runtimes, rt_thread), (node_rows, node_thread) = runtime_threads, node_threads
    out = rt_container.copy()
    if runtimes.size == 0 or node_rows.size == 0:
        return out
    ev = model.events
    same = _match_pairs(
        node_thread,
        model.column_at("external_id", node_rows),
        rt_thread,
        model.column_at("external_id", runtimes),
    )
    ok = same >= 0
    n, r = node_rows[same[ok]], runtimes[ok]
    inside = (ev["ts"][n] <= ev["ts"][r]) & (
        ev["ts"][n] + ev["dur"][n] >= ev["ts"][r] + ev["dur"][r]
    )
    idx = np.flatnonzero(ok)[inside]
    out[idx] = same[idx]
    return out


def _match_pairs(
    key_a: np.ndarray, key_b: np.ndarray, q_a: np.ndarray, q_b: np.ndarray
) -> np.ndarray:
    """Index of the first item with (key_a, key_b) == (q_a, q_b), or -1; ids < 1 never
    match."""
    out = np.full(q_a.size, -1, dtype=np.int64)
    items = np.flatnonzero(key_b > 0)
    if items.size == 0 or q_a.size == 0:
        return out
    ua = _distinct(key_a[items])
    shift = np.int64(1) << np.int64(40)
    if max(int(key_b.max()), int(q_b.max())) >= int(shift) or ua.size >= (1 << 22):
        table: dict[tuple[int, int], int] = {}
        for i, a, b in zip(items.tolist(), key_a[items].tolist(), key_b[items].tolist()):
            table.setdefault((a, b), i)
        return np.array(
            [table.get((a, b), -1) for a, b in zip(q_a.tolist(), q_b.tolist())], dtype=np.int64
        )
    combined = np.searchsorted(ua, key_a[items]).astype(np.int64) * shift + key_b[items]
    order, sorted_keys = _stable_order(combined)
    q_rank = np.searchsorted(ua, q_a)
    q_ok = (q_rank < ua.size) & (q_b > 0)
    q_ok[q_ok] &= ua[q_rank[q_ok]] == q_a[q_ok]
    q_comb = q_rank.astype(np.int64) * shift + np.maximum(q_b, 0)
    pos = np.searchsorted(sorted_keys, q_comb, side="left")
    pc = np.minimum(pos, sorted_keys.size - 1)
    hit = q_ok & (pos < sorted_keys.size) & (sorted_keys[pc] == q_comb)
    found = pc[hit]
    out[hit] = items[found if order is None else order[found]]
    return out


def _stable_order(keys: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """(the stable sorting order, the sorted keys); the order None where the keys ascend
    already (the nodes come by thread, and their ids ascend with time in each): the
    sort and its gather skipped, the same first match of each key."""
    if bool(np.all(keys[1:] >= keys[:-1])):
        return None, keys
    order = np.argsort(keys, kind="stable")
    return order, keys[order]


def _distinct(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)`; read off in one pass where they are sorted already (the nodes'
    threads: the nodes are in thread order)."""
    if values.size and bool(np.all(values[1:] >= values[:-1])):
        return values[np.concatenate([[True], values[1:] != values[:-1]])]
    return np.unique(values)
