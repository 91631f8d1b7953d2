"""Vectorised helpers for ranges nested in time and for trees stored as parent arrays:
the parent search (previous greater-or-equal element), the union length of ranges per
group, node depths, subtree sums, ids of equal chains of labels. Pure numpy, no model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from .block_search import last_at_least

try:
    from . import _nesting  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's passes give the same parents
    _nesting = None


def running_count(mask: np.ndarray) -> np.ndarray:
    """`np.cumsum(mask)` of a boolean array (int64), summed in int64: numpy's cumsum
    casting booleans holds the GIL throughout (up to 0.5 s on a 4 GB trace's 9M rows,
    every request thread of the server stalled meanwhile); the cast alone and a cumsum
    without a cast release it."""
    counts = np.asarray(mask, dtype=bool).astype(np.int64)
    return np.cumsum(counts, out=counts)


_JUMPS = 64  # passes of previous_reaching before the block search takes over


def next_up(values: np.ndarray) -> np.ndarray:
    """`np.nextafter(values, np.inf)`, bit for bit: a positive finite float64's next is
    its bits plus one (libm's nextafter, one call per value, took 2 ms per 0.5M times);
    zeros, negatives, infinities, NaN and other dtypes go to numpy's."""
    x = np.asarray(values)
    if x.dtype != np.float64:
        return np.nextafter(x, np.inf)
    out = np.ascontiguousarray(x).view(np.int64) + 1
    up = out.view(np.float64)
    odd = ~(x > 0)
    odd |= x == np.inf
    if odd.any():
        up[odd] = np.nextafter(x[odd], np.inf)
    return up


def nesting_order(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The order `np.lexsort((-end, start, group))` gives (by group, start, longer first,
    input order), from two stable sorts that are fast on a trace's mostly sorted starts
    (Timsort's runs) and few groups, then equal starts put longer first."""
    if bool((start[1:] >= start[:-1]).all()):
        # Starts ascending in input order (a NaN compares false: it sorts last, so its
        # order is the sorts'): by group alone, stably (a trace's Python frames).
        order = np.argsort(group, kind="stable")
    else:
        order = np.argsort(start, kind="stable")
        order = order[np.argsort(group[order], kind="stable")]
    # Ties: equal starts (NaN equal to NaN), then of those (few) the ones in one group;
    # the groups are compared only there (no second column gathered in full).
    s = start[order]
    tie = s[1:] == s[:-1]
    if bool(np.isnan(s).any()):
        tie |= np.isnan(s[1:]) & np.isnan(s[:-1])
    del s
    at = np.flatnonzero(tie)
    tie[at] = group[order[at]] == group[order[at + 1]]
    return _longer_first_in_ties(order, tie, end)


def grouped_nesting_order(
    group: np.ndarray, start: np.ndarray, end: np.ndarray
) -> np.ndarray | None:
    """`nesting_order` of rows already grouped (each group's rows together, in input
    order), or None where that is the order they are in: a trace writes most threads'
    slices by start, so the sorts are skipped and only equal starts looked at."""
    same = group[1:] == group[:-1]
    if (same & (start[1:] < start[:-1])).any() or np.isnan(start).any():
        return nesting_order(group, start, end)
    same &= start[1:] == start[:-1]  # ties: equal starts in one group
    if not same.any():
        return None
    return _longer_first_in_ties(np.arange(start.size), same, end)


def _longer_first_in_ties(order: np.ndarray, tie: np.ndarray, end: np.ndarray) -> np.ndarray:
    """`order` (by group, then start) with each run of equal starts (`tie[i]`: positions
    i and i + 1 of the order are in one) put longer first, then in input order."""
    if not tie.any():
        return order
    in_tie = np.zeros(order.size, dtype=bool)
    in_tie[1:] = tie
    in_tie[:-1] |= tie
    run = running_count(np.concatenate([[True], ~tie]))  # one id per run of equal starts
    at = np.flatnonzero(in_tie)
    order[at] = order[at[np.lexsort((-end[order[at]], run[at]))]]
    return order


def previous_at_least(values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each i, the largest j < i with values[j] >= targets[i], or -1.

    Vectorised in blocks: scan back inside the block of i - 1, then find the nearest
    earlier block whose maximum reaches the target with a sparse table over block maxima,
    then scan that block from its end. About 2 * 32 (a block) + log2(n) numpy passes over
    shrinking sets."""
    return last_at_least(values, np.arange(values.size, dtype=np.int64) - 1, targets)


def previous_reaching(
    values: np.ndarray, targets: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """`previous_at_least` where no target is above the float just above its own value
    (the parent search: a range's end, nudged past it for a zero-length range).

    Then whatever lies between a position and its candidate falls short of the
    position's target, so of any later target that the position itself falls short of:
    a position that misses can skip to its candidate's candidate (the stack algorithm's
    step, for all positions at once). One pass per level of nesting, against ~90 for
    the block search, which finishes what pathologically deep nesting leaves after
    _JUMPS passes (and answers inputs outside the contract, NaN included).

    `start`: per position, the first candidate (default i - 1): at most i - 1, with
    nothing between it and i reaching i's target (an answer known from a superset)."""
    n = values.size
    if n == 0 or not bool(np.all(targets <= next_up(values))):
        return previous_at_least(values, targets)
    if _nesting is not None and values.dtype == np.float64 and targets.dtype == np.float64:
        return _previous_reaching_native(values, targets, start)
    return _previous_reaching_passes(values, targets, start)


# Integer types whose every value float64 holds exactly.
_EXACT_IN_FLOAT = frozenset(np.dtype(t) for t in ("i1", "i2", "i4", "u1", "u2", "u4"))


def sorted_search(a: np.ndarray, v: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
    """`np.searchsorted(a, v, side)` (int64), by the compiled search where built and both
    are float64 without a NaN key (`_nesting.c`: doubling steps from the last key's answer,
    as a trace's times mostly ascend). Integers of 4 bytes or fewer: as exact float64s."""
    if _nesting is not None and a.dtype in _EXACT_IN_FLOAT and v.dtype in _EXACT_IN_FLOAT:
        a, v = a.astype(np.float64), v.astype(np.float64)
    if _nesting is None or a.dtype != np.float64 or v.dtype != np.float64 or np.isnan(v).any():
        return np.searchsorted(a, v, side).astype(np.int64, copy=False)
    a = np.ascontiguousarray(a)
    # Bounds a block of queries at a time (for every query: twice the answer's memory).
    return by_query_blocks(lambda keys: _start_bounds(a, keys, side == "right"), v)


def _start_bounds(a: np.ndarray, keys: np.ndarray, right: bool) -> np.ndarray:
    """The compiled search's positions of `keys` in the whole of the sorted `a`."""
    assert _nesting is not None
    out = np.empty(keys.size, dtype=np.int64)
    lo, hi = np.zeros(keys.size, dtype=np.int64), np.full(keys.size, a.size, dtype=np.int64)
    _nesting.start_bound(a, lo, hi, np.ascontiguousarray(keys), right, out)
    return out


def by_query_blocks(answer: Callable[..., np.ndarray], *queries: np.ndarray) -> np.ndarray:
    """`answer(*queries)` (one int64 answer per query, each its own), a block of
    `_QUERY_BLOCK` queries at a time: what a lookup makes per query is made per block."""
    n = queries[0].size
    if n <= _QUERY_BLOCK:
        return answer(*queries)
    out = np.empty(n, dtype=np.int64)
    for at in range(0, n, _QUERY_BLOCK):
        block = slice(at, at + _QUERY_BLOCK)
        out[block] = answer(*(q[block] for q in queries))
    return out


# 16384 queries: a block's ~10 arrays are ~1.3 MB (at 65536, 5 MB beside a trace's largest
# index, the Python frames', was the Python stacks' peak); the blocks cost no measurable time.
_QUERY_BLOCK = 1 << 14


def index_parents(
    first: np.ndarray, start: np.ndarray, end: np.ndarray, start_at: np.ndarray | None
) -> np.ndarray | None:
    """A host-range index's parents in one pass in C (`_nesting.c`), for ranges sorted by
    (thread, start, -end, file order), each thread's first at `first`; None where that is
    not built or the times are not float64 without NaN (numpy's sequence then)."""
    if _nesting is None or not start.dtype == end.dtype == np.float64:
        return None
    if np.isnan(start).any() or np.isnan(end).any():
        return None
    new_thread = np.zeros(start.size, dtype=bool)
    new_thread[first] = True
    parent = np.empty(start.size, dtype=np.int64)
    at = np.empty(0, np.int64) if start_at is None else start_at.astype(np.int64)
    start, end = np.ascontiguousarray(start), np.ascontiguousarray(end)
    _nesting.index_parents(new_thread, start, end, at, parent)
    return parent


def _previous_reaching_native(
    values: np.ndarray, targets: np.ndarray, start: np.ndarray | None
) -> np.ndarray:
    """`previous_reaching` by the compiled stack algorithm (`_nesting.c`): one pass in
    order, a position that falls short jumping to its own answer, as the passes do."""
    assert _nesting is not None
    out = np.empty(values.size, dtype=np.int64)
    first = np.empty(0, np.int64) if start is None else np.ascontiguousarray(start, np.int64)
    _nesting.previous_reaching(
        np.ascontiguousarray(values), np.ascontiguousarray(targets), first, out
    )
    return out


def _previous_reaching_passes(
    values: np.ndarray, targets: np.ndarray, start: np.ndarray | None
) -> np.ndarray:
    """`previous_reaching` in numpy passes, one per level of nesting (then the block
    search)."""
    n = values.size
    if start is None:
        candidate = np.arange(-1, n - 1, dtype=np.int64)
        missed = np.zeros(n, dtype=bool)
        np.less(values[:-1], targets[1:], out=missed[1:])
        todo = np.flatnonzero(missed)
        at = todo - 1
    else:
        candidate = start.astype(np.int64, copy=True)
        todo = np.flatnonzero(candidate >= 0)
        at = candidate[todo]
        missed = values[at] < targets[todo]
        todo, at = todo[missed], at[missed]
    # The positions still looking, their candidates (each missed) and targets, kept
    # compact: one pass per level of nesting touches only them.
    want = targets[todo]
    for _ in range(_JUMPS):
        at = candidate[at]
        candidate[todo] = at
        # Each array filtered and rebound in turn: the old one goes before the next is
        # made (a tuple of all three held both sets at once, the peak of a big build).
        live = at >= 0
        if not live.all():
            todo = todo[live]
            at = at[live]
            want = want[live]
        missed = values[at] < want
        if not missed.all():
            todo = todo[missed]
            at = at[missed]
            want = want[missed]
        if todo.size == 0:
            return candidate
    candidate[todo] = last_at_least(values, at, want)
    return candidate


def segment_union_length(
    group: np.ndarray, starts: np.ndarray, ends: np.ndarray, n_groups: int
) -> np.ndarray:
    """Length of the union of [start, end) per group; input sorted by (group, start)."""
    out = np.zeros(n_groups)
    if group.size == 0:
        return out
    if (
        _nesting is not None
        and starts.dtype == np.float64
        and ends.dtype == np.float64
        and not (np.isnan(starts).any() or np.isnan(ends).any())
    ):
        # The same float operations in one pass (_nesting.c), not a dozen over the rows.
        _nesting.segment_union_length(
            np.ascontiguousarray(group, np.int64),
            np.ascontiguousarray(starts),
            np.ascontiguousarray(ends),
            out,
        )
        return out
    lengths = ends - starts
    # Running max of ends inside each group: shift each group above all earlier ones so
    # one global running max never crosses a group boundary.
    first = np.ones(group.size, dtype=bool)
    first[1:] = group[1:] != group[:-1]
    seg = running_count(first) - 1
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
    """Number of ancestors of each node: one pass where parents come first (compiled),
    else pointer jumping (log2(depth) passes)."""
    if _nesting is not None:
        depth = np.empty(parent.size, dtype=np.int64)
        if _nesting.tree_depths(np.ascontiguousarray(parent, np.int64), depth):
            return depth
    depth = (parent >= 0).astype(np.int64)  # hops from the node to `anc`
    anc = parent.astype(np.int64, copy=True)
    live = np.flatnonzero(anc >= 0)
    while live.size:
        a = anc[live]
        # Both read before either is written: every node jumps from this round's values.
        hops, up = depth[a], anc[a]
        depth[live] += hops
        anc[live] = up
        live = live[up >= 0]
    return depth


def subtree_sum(parent: np.ndarray, levels: list[np.ndarray], values: np.ndarray) -> np.ndarray:
    """values summed over each node's subtree (deepest level first; `levels` as
    `levels_from_roots(parent)` gives them)."""
    total = np.array(values, dtype=np.float64)  # one copy, written into
    for level in reversed(levels[1:]):
        np.add.at(total, parent[level], total[level])
    return total


def subtree_any(parent: np.ndarray, levels: list[np.ndarray], flags: np.ndarray) -> np.ndarray:
    return subtree_sum(parent, levels, flags.astype(np.float64)) > 0


def levels_from_roots(parent: np.ndarray) -> list[np.ndarray]:
    """The nodes by depth, the roots first (each level in node order): a value computed
    from the parent's can be filled one level at a time."""
    if parent.size == 0:
        return []
    depth = depths(parent)
    # Depths fit 16 bits: numpy sorts those by radix (the same stable order, linear time).
    key = depth.astype(np.uint16) if int(depth.max()) < 1 << 16 else depth
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(depth[order])) + 1
    del depth, key
    # Node indices as int32 where they fit: a tree's levels are kept with it (the op tree's
    # through most views); they only index.
    if order.size <= np.iinfo(np.int32).max:
        order = order.astype(np.int32)
    return np.split(order, cuts)


def inherit_missing(parent: np.ndarray, levels: list[np.ndarray], values: np.ndarray) -> np.ndarray:
    """Per node, its own value when it has one (>= 0), else its parent's answer (filled
    from the roots down; `levels` as `levels_from_roots(parent)` gives them)."""
    out = values.copy()
    for level in levels[1:]:  # the roots keep their own
        level = level[out[level] < 0]
        out[level] = out[parent[level]]
    return out


def inherit_missing_by_jumps(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`inherit_missing` without the levels (a tree's depths and a sort to find them):
    each node without a value of its own jumps up its chain of nodes without one,
    doubling the jump each pass, to the first with a value or the root (log2(depth)
    passes over the nodes still looking)."""
    out = values.copy()
    resolved = (values >= 0) | (parent < 0)
    todo = np.flatnonzero(~resolved)
    # Per node looking: an ancestor with no node between them that has a value.
    above = parent.astype(np.int64)
    while todo.size:
        at = above[todo]
        done = resolved[at]
        out[todo[done]] = out[at[done]]
        resolved[todo[done]] = True
        todo, at = todo[~done], at[~done]
        above[todo] = above[at]  # `at` has no value and is no root: jump past it
    return out


_WALK_PASSES = 64  # passes of inherit_missing_at before the pointer jumps finish


def inherit_missing_at(parent: np.ndarray, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """`inherit_missing` of the given nodes only: each walks up one parent per pass until
    a node with a value (or a root), over the nodes still looking. For a few nodes of a
    big forest whose values are a few parents up (the frames around ops, whose module
    call is near), far cheaper than every node's jumps; those still looking after
    `_WALK_PASSES` take the jumps' answer of the node they reached."""
    out = np.empty(nodes.size, dtype=values.dtype)
    todo = np.arange(nodes.size)
    at = np.asarray(nodes)
    for _ in range(_WALK_PASSES):
        if todo.size == 0:
            return out
        own, up = values[at], parent[at]
        done = (own >= 0) | (up < 0)
        out[todo[done]] = own[done]
        looking = ~done
        todo, at = todo[looking], up[looking]
    if todo.size:
        out[todo] = inherit_missing_by_jumps(parent, values)[at]
    return out
