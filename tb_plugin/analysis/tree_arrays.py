"""Vectorised helpers for ranges nested in time and for trees stored as parent arrays:
the parent search (previous greater-or-equal element), the union length of ranges per
group, node depths, subtree sums, ids of equal chains of labels. Pure numpy, no model."""

from __future__ import annotations

import numpy as np

_BLOCK = 32


def previous_at_least(values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each i, the largest j < i with values[j] >= targets[i], or -1.

    Vectorised in blocks: scan back inside i's block, then find the nearest earlier block
    whose maximum reaches the target with a sparse table over block maxima, then scan that
    block from its end. About 2 * _BLOCK + log2(n) numpy passes over shrinking sets."""
    n = values.size
    out = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out
    todo, tt = _inside_own_block(values, targets, out)
    if todo.size == 0:
        return out
    pos = _nearest_block_reaching(values, todo, tt)
    found = pos >= 0
    _scan_block_back(values, todo[found], tt[found], pos[found], out)
    return out


def _inside_own_block(
    values: np.ndarray, targets: np.ndarray, out: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Answers found inside each position's own block go to `out`; returns the positions
    left (and their targets)."""
    b = _BLOCK
    todo = np.arange(values.size, dtype=np.int64)
    tt = targets
    for d in range(1, b):
        ok = (todo % b) >= d
        if not ok.any():
            break
        cand = todo[ok] - d
        hit = values[cand] >= tt[ok]
        hit_pos = np.flatnonzero(ok)[hit]
        out[todo[hit_pos]] = cand[hit]
        keep = np.ones(todo.size, dtype=bool)
        keep[hit_pos] = False
        todo, tt = todo[keep], tt[keep]
        if todo.size == 0:
            break
    return todo, tt


def _nearest_block_reaching(values: np.ndarray, todo: np.ndarray, tt: np.ndarray) -> np.ndarray:
    """Per position, the nearest earlier block whose maximum reaches its target, or -1
    (a sparse table of block maxima, descended from the largest power of two)."""
    b = _BLOCK
    n = values.size
    nb = (n + b - 1) // b
    padded = np.full(nb * b, -np.inf)
    padded[:n] = values
    table = [padded.reshape(nb, b).max(axis=1)]
    k = 1
    while (1 << k) <= nb:
        prev = table[-1]
        step = 1 << (k - 1)
        nxt = prev.copy()
        nxt[step:] = np.maximum(prev[step:], prev[:-step])
        table.append(nxt)
        k += 1
    pos = todo // b - 1
    for k in range(len(table) - 1, -1, -1):
        size = 1 << k
        can = pos + 1 >= size
        if not can.any():
            continue
        skip = np.zeros(pos.size, dtype=bool)
        skip[can] = table[k][pos[can]] < tt[can]
        pos = pos - np.where(skip, size, 0)
    return pos


def _scan_block_back(
    values: np.ndarray, todo: np.ndarray, tt: np.ndarray, block: np.ndarray, out: np.ndarray
) -> None:
    """The last position inside each found block that reaches the target, into `out`."""
    n = values.size
    cur = block * _BLOCK + (_BLOCK - 1)
    for _ in range(_BLOCK):
        if todo.size == 0:
            break
        valid = cur < n
        hit = np.zeros(todo.size, dtype=bool)
        hit[valid] = values[cur[valid]] >= tt[valid]
        out[todo[hit]] = cur[hit]
        todo, tt, cur = todo[~hit], tt[~hit], cur[~hit] - 1


def segment_union_length(
    group: np.ndarray, starts: np.ndarray, ends: np.ndarray, n_groups: int
) -> np.ndarray:
    """Length of the union of [start, end) per group; input sorted by (group, start)."""
    out = np.zeros(n_groups)
    if group.size == 0:
        return out
    lengths = ends - starts
    # Running max of ends inside each group: shift each group above all earlier ones so
    # one global running max never crosses a group boundary.
    first = np.ones(group.size, dtype=bool)
    first[1:] = group[1:] != group[:-1]
    seg = np.cumsum(first) - 1
    seg_lo = np.minimum.reduceat(starts, np.flatnonzero(first))
    seg_hi = np.maximum.reduceat(ends, np.flatnonzero(first))
    span = seg_hi - seg_lo + 1.0
    offset = np.concatenate([[0.0], np.cumsum(span)[:-1]])
    rel_start = starts - seg_lo[seg] + offset[seg]
    rel_end = ends - seg_lo[seg] + offset[seg]
    running = np.maximum.accumulate(rel_end)
    prev_end = np.empty(group.size)
    prev_end[0] = -np.inf
    prev_end[1:] = running[:-1]
    prev_end[first] = -np.inf
    covered = np.where(
        prev_end >= rel_end, 0.0, np.where(prev_end > rel_start, rel_end - prev_end, lengths)
    )
    np.add.at(out, group, covered)
    return out


def depths(parent: np.ndarray) -> np.ndarray:
    """Number of ancestors of each node (pointer jumping: log2(depth) passes)."""
    depth = (parent >= 0).astype(np.int64)  # hops from the node to `anc`
    anc = parent.copy()
    live = np.flatnonzero(anc >= 0)
    while live.size:
        a = anc[live]
        new_depth = depth.copy()
        new_depth[live] += depth[a]
        new_anc = anc.copy()
        new_anc[live] = anc[a]
        depth, anc = new_depth, new_anc
        live = live[anc[live] >= 0]
    return depth


def subtree_sum(parent: np.ndarray, depth: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values summed over each node's subtree (deepest level first)."""
    total = values.astype(np.float64).copy()
    if parent.size == 0:
        return total
    order = np.argsort(-depth, kind="stable")
    d_sorted = depth[order]
    cuts = np.flatnonzero(np.diff(d_sorted)) + 1
    for level in np.split(order, cuts):
        if level.size == 0 or depth[level[0]] == 0:
            continue
        np.add.at(total, parent[level], total[level])
    return total


def subtree_any(parent: np.ndarray, depth: np.ndarray, flags: np.ndarray) -> np.ndarray:
    return subtree_sum(parent, depth, flags.astype(np.float64)) > 0


def levels_from_roots(parent: np.ndarray) -> list[np.ndarray]:
    """The nodes by depth, the roots first (each level in node order): a value computed
    from the parent's can be filled one level at a time."""
    if parent.size == 0:
        return []
    depth = depths(parent)
    order = np.argsort(depth, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(depth[order])) + 1)


def chain_ids(parent: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Equal ids for nodes whose chains of labels (to the root) are equal: interned
    level by level from the roots down (a Python stack; a module path)."""
    n = parent.size
    out = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out
    width = np.int64(int(label.max()) + 1)
    next_id = 0
    for level in levels_from_roots(parent):
        p = parent[level]
        up = np.where(p >= 0, out[np.maximum(p, 0)], -1)
        uniq, inv = np.unique((up + 1) * width + label[level], return_inverse=True)
        out[level] = next_id + inv.reshape(-1)
        next_id += uniq.size
    return out
