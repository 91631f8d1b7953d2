"""The block search of a previous position reaching a target (`last_at_least`): per
query, the latest position at or before its start whose value reaches its target, in
numpy passes over blocks of `_BLOCK` positions and a sparse table of block maxima. What
`tree_arrays.previous_reaching` falls back on, and the overlap walks' numpy passes."""

from __future__ import annotations

import numpy as np

_BLOCK = 32


def last_at_least(values: np.ndarray, start: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per query q, the largest j <= start[q] with values[j] >= targets[q], or -1 (the
    block search of `previous_at_least`, from any start)."""
    out = np.full(start.size, -1, dtype=np.int64)
    todo = np.flatnonzero(start >= 0)
    if values.size == 0 or todo.size == 0:
        return out
    todo = _inside_start_block(values, start, targets, todo, out)
    if todo.size == 0:
        return out
    tt = targets[todo]
    pos = _nearest_block_reaching(values, start[todo] // _BLOCK - 1, tt)
    found = pos >= 0
    _scan_block_back(values, todo[found], tt[found], pos[found], out)
    return out


def _inside_start_block(
    values: np.ndarray, start: np.ndarray, targets: np.ndarray, todo: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """Answers found from each query's start back to its block's first position go to
    `out`; returns the queries left."""
    b = _BLOCK
    for d in range(b):
        s = start[todo]
        ok = (s % b) >= d
        if not ok.any():
            break
        cand = s[ok] - d
        hit = values[cand] >= targets[todo[ok]]
        hit_pos = np.flatnonzero(ok)[hit]
        out[todo[hit_pos]] = cand[hit]
        keep = np.ones(todo.size, dtype=bool)
        keep[hit_pos] = False
        todo = todo[keep]
        if todo.size == 0:
            break
    return todo


def _nearest_block_reaching(values: np.ndarray, pos: np.ndarray, tt: np.ndarray) -> np.ndarray:
    """Per query, the nearest block at or before `pos` whose maximum reaches its target,
    or -1 (a sparse table of block maxima, descended from the largest power of two)."""
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
