"""Which host range encloses a time or an interval: one index per model, one lookup.

The ranges of a thread, sorted by (start, -end, file order), each with its parent: the
latest earlier range that ends no earlier (a zero-length range at t is inside a range
only if that range ends after t). With proper nesting that is the innermost enclosing
range; ranges that overlap without nesting (rounded timestamps, data errors) get the
innermost range that does contain them.

A lookup starts at the last range that sorts before the query and walks up the parents
until a range ends late enough. That finds the *latest* range (in the order above) that
starts no later and ends late enough: a range skipped by a parent step ends before the
range it was skipped for, so it ends too early as well. One vectorised step per level
of nesting.

Three node sets (each memoised on the model):
- `host_ranges`: `cpu_op` and `user_annotation` X events, ProfilerStep#N ranges included
  (the op tree's nodes, optree.py; the comm ops around a launch, comms.py);
- `op_ranges`: `cpu_op` X events of positive duration, ProfilerStep#N aside (the ops
  memory events are attributed to, memory/index.py);
- `python_ranges` (python_ranges.py): `python_function` X events, the Python frames.
The trace view keys the same index by track over its slices (trace_view/links.py:
the slice a flow end binds to).

Times are compared in whole nanoseconds: starts, ends (start + duration) and query times
are snapped to the nanosecond grid of the index's `origin` (`snap_ns`), so a frame that
ends at the nanosecond its parent ends nests in it, whatever the float sum of its start
and duration rounded to (µs floats of 2024-on traces carry ~0.2 ns of noise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, name_flags, thread_keys
from .rules import is_step_name
from .tree_arrays import (
    _nesting,
    by_query_blocks,
    index_parents,
    nesting_order,
    next_up,
    previous_reaching,
    running_count,
)


@dataclass
class HostRanges:
    rows: np.ndarray  # event rows in (thread, start, -end, file order) order
    thread: np.ndarray  # canonical thread key of each range
    start: np.ndarray
    end: np.ndarray
    parent: np.ndarray  # position of the enclosing range, -1 for roots
    threads: np.ndarray  # the distinct thread keys, sorted
    thread_lo: np.ndarray  # per distinct thread: [lo, hi) of its ranges
    thread_hi: np.ndarray
    origin: float = 0.0  # a whole microsecond: times are snapped to ns from it

    def __len__(self) -> int:
        return int(self.rows.size)

    def enclosing(self, thread: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """Per query, the innermost range of its thread containing [t0, t1] (closed; a
        zero-length query only in a range that ends after it), -1 when none. A query
        sorts after ranges with its own start and end."""
        # ~10 arrays made per query (the Operator view's peak): by blocks of queries.
        return by_query_blocks(self._enclosing, thread, t0, t1)

    def _enclosing(self, thread: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        t0, t1 = snap_ns(t0, self.origin), snap_ns(t1, self.origin)
        lo, hi, below = self._start_bound(thread, t0, "left")
        # Where the range at `below` starts after t0, no range of the thread starts at t0
        # (most queries): the bound after those is searched for the others only.
        upto = below.copy()
        at_t0 = np.flatnonzero(below < hi)
        at_t0 = at_t0[self.start[below[at_t0]] == t0[at_t0]]
        if at_t0.size:
            upto[at_t0] = self._start_bound(thread[at_t0], t0[at_t0], "right")[2]
        candidate = below - 1
        # Ranges starting at t0 sort by end, latest first: the query goes after the ones
        # that end no earlier than it (rare: a bisection over those few).
        tie = np.flatnonzero(upto > below)
        if tie.size:
            last = _last_where(lambda mid, q: self.end[mid] >= t1[tie[q]], below[tie], upto[tie])
            found = last >= 0
            candidate[tie[found]] = last[found]
        del below, upto, hi, at_t0
        candidate[candidate < lo] = -1
        del lo
        # Each query's arrays let go before the walk up (the peak of a big lookup).
        zero_length = t1 <= t0
        del t0
        t1[zero_length] = next_up(t1[zero_length])
        del zero_length
        return self._walk(candidate, t1, strict=False)

    def containing(self, thread: np.ndarray, t: np.ndarray, closed: bool = False) -> np.ndarray:
        """Per query, the innermost range of its thread containing t, half-open
        [start, end) (at the boundary of two ranges, the one that starts), or `closed`
        [start, end] (a launch at its op's last tick is still inside it); -1 when none."""
        t = snap_ns(t, self.origin)
        lo, _, upto = self._start_bound(thread, t, "right")
        candidate = np.where(upto > lo, upto - 1, -1)
        return self._walk(candidate, t, strict=not closed)

    def containing_before(
        self, position: np.ndarray, t: np.ndarray, closed: bool = False
    ) -> np.ndarray:
        """Per query, the latest range sorting before `position` (same thread) that
        contains t (half-open, or `closed`), -1 when none: the range around an enclosing
        range."""
        t = snap_ns(t, self.origin)
        candidate = position - 1
        ok = position > 0
        ok[ok] = self.thread[candidate[ok]] == self.thread[position[ok]]
        return self._walk(np.where(ok, candidate, -1), t, strict=not closed)

    def outwards(
        self, inner: np.ndarray, t: np.ndarray, closed: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every range containing t(q), from `inner[q]` (a range containing it, -1 for
        none) outwards: as (query, position) pairs sorted by query, innermost first. Each
        step is `containing_before`, so a range overlapping the chain without nesting is
        listed too when it contains t."""
        queries, positions = [], []
        query = np.flatnonzero(inner >= 0)
        at = inner[query]
        while query.size:
            queries.append(query)
            positions.append(at)
            at = self.containing_before(at, t[query], closed)
            query, at = query[at >= 0], at[at >= 0]
        if not queries:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        query, at = np.concatenate(queries), np.concatenate(positions)
        order = np.argsort(query, kind="stable")
        return query[order], at[order]

    def _thread_bounds(self, thread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per query, [lo, hi) of its thread's ranges (empty for a thread with none)."""
        if self.threads.size == 0:
            return np.zeros(thread.size, dtype=np.int64), np.zeros(thread.size, dtype=np.int64)
        k = np.minimum(np.searchsorted(self.threads, thread), self.threads.size - 1)
        # Gathered for all, then the few unknown threads cleared: masks over millions of
        # pieces' queries were most of a 1 GB trace's lookup.
        lo = self.thread_lo[k].astype(np.int64, copy=False)
        hi = self.thread_hi[k].astype(np.int64, copy=False)
        unknown = self.threads[k] != thread
        if unknown.any():
            lo[unknown] = 0
            hi[unknown] = 0
        return lo, hi

    def _start_bound(
        self, thread: np.ndarray, t: np.ndarray, side: Literal["left", "right"]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per query, its thread's ranges [`lo`, `hi`) and the position after the thread's
        ranges starting before t ("left") or at t at the latest ("right"): one binary
        search per thread over its sorted starts (traces have few threads). A NaN time
        comes after no range."""
        lo, hi = self._thread_bounds(thread)
        if _nesting is not None and self.start.dtype == np.float64 and t.dtype == np.float64:
            bound = np.empty(lo.size, dtype=np.int64)  # each query's search in C
            _nesting.start_bound(
                np.ascontiguousarray(self.start), lo, hi, np.ascontiguousarray(t),
                side == "right", bound,
            )  # fmt: skip
            return lo, hi, bound
        bound = lo.copy()
        live = np.flatnonzero((hi > lo) & ~np.isnan(t))
        order = live[np.argsort(lo[live], kind="stable")]  # the queries thread by thread
        cuts = np.flatnonzero(np.diff(lo[order], prepend=-1, append=-1))
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            queries = order[a:b]
            first, end = int(lo[queries[0]]), int(hi[queries[0]])
            bound[queries] = first + np.searchsorted(self.start[first:end], t[queries], side)
        return lo, hi, bound

    def _walk(self, candidate: np.ndarray, target: np.ndarray, strict: bool) -> np.ndarray:
        """Up the parents from each candidate to the first range whose end reaches the
        target (passes it, when `strict`)."""
        if _nesting is not None and candidate.dtype == np.int64 and target.dtype == np.float64:
            out = np.empty(candidate.size, dtype=np.int64)  # one pass per query, in C
            _nesting.walk_up(
                np.ascontiguousarray(self.end, np.float64),
                np.ascontiguousarray(self.parent, np.int64),
                np.ascontiguousarray(candidate),
                np.ascontiguousarray(target),
                strict,
                out,
            )
            return out
        cur = candidate.copy()
        todo = np.flatnonzero(cur >= 0)
        while todo.size:
            ends = self.end[cur[todo]]
            short = ends <= target[todo] if strict else ends < target[todo]
            todo = todo[short]
            cur[todo] = self.parent[cur[todo]]
            todo = todo[cur[todo] >= 0]
        return cur


def snap_ns(t: np.ndarray, origin: float) -> np.ndarray:
    """Microsecond times rounded to whole nanoseconds from `origin` (a whole microsecond
    near them, so the differences are exact): equal nanoseconds give equal floats, and
    the order of distinct ones is kept (or, past float64's resolution, made equal)."""
    if _nesting is not None and isinstance(t, np.ndarray) and t.dtype == np.float64:
        out = np.empty(t.shape)  # the same steps per time in one pass (_nesting.c)
        _nesting.snap_ns(np.ascontiguousarray(t), float(origin), out)
        return out
    out = np.array(t, dtype=np.float64)  # one array made, the steps in place in it
    out -= origin
    out *= 1000.0
    np.rint(out, out=out)
    out /= 1000.0
    out += origin
    return out


def time_origin(start: np.ndarray) -> float:
    """The whole microsecond at or before the earliest finite start (0.0 for none)."""
    if start.size:
        least = float(start.min())  # finite: the least finite start (no NaN, no -inf)
        if np.isfinite(least):
            return float(np.floor(least))
    finite = start[np.isfinite(start)]
    return float(np.floor(finite.min())) if finite.size else 0.0


def _last_where(
    pred: Callable[[np.ndarray, np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Per query q, the last position in [lo[q], hi[q]) where `pred(position, q)` holds,
    for a predicate true then false along the range; -1 when none (vectorised bisection)."""
    lo, hi = lo.copy(), hi.copy()
    start = lo.copy()
    live = np.flatnonzero(lo < hi)
    while live.size:
        mid = (lo[live] + hi[live]) // 2
        go = pred(mid, live)
        lo[live] = np.where(go, mid + 1, lo[live])
        hi[live] = np.where(go, hi[live], mid)
        live = live[lo[live] < hi[live]]
    return np.where(lo > start, lo - 1, -1)


def host_ranges(model: TraceModel) -> HostRanges:
    """`cpu_op` and `user_annotation` ranges, ProfilerStep#N included."""
    return model.derived("_host_ranges", _build_host_ranges)


def op_ranges(model: TraceModel) -> HostRanges:
    """`cpu_op` ranges of positive duration, ProfilerStep#N aside."""
    return model.derived("_op_ranges", _build_op_ranges)


def _build_host_ranges(model: TraceModel) -> HostRanges:
    # Thread keys as int32 where they fit (as the rows are): the index, and the op tree
    # that shares them, are held through most views.
    rows = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    if rows.size == 0:
        return build_ranges(model, rows)
    return build_ranges(model, rows, narrow_ints(thread_keys(model, rows)))


def narrow_ints(values: np.ndarray, bound: int | None = None) -> np.ndarray:
    """Non-negative `values` (below `bound`, when known) as int32 where they fit."""
    if bound is None:
        bound = int(values.max()) + 1 if values.size else 0
    return values.astype(np.int32) if bound <= np.iinfo(np.int32).max else values


def _build_op_ranges(model: TraceModel) -> HostRanges:
    # A subset of the host ranges, sorted by the same keys: their order, filtered, is its
    # order (no second sort); only the parents change.
    host = host_ranges(model)
    ev = model.events
    is_step = name_flags(model, is_step_name)
    keep = (
        (ev["kind"][host.rows] == Kind.CPU_OP)
        & ~is_step[ev["name"][host.rows]]
        & (ev["dur"][host.rows] > 0)
    )
    # Nothing between a range and its host parent reaches it: the search starts at the
    # last op range at or before that parent.
    last_kept = running_count(keep) - 1  # host position → last op range at or before it
    host_parent = host.parent[keep]
    start_at = np.where(host_parent >= 0, last_kept[np.maximum(host_parent, 0)], -1)
    del last_kept, host_parent  # not held through the parent search (the build's peak)
    return _index_sorted(
        host.rows[keep], host.thread[keep], host.start[keep], host.end[keep], start_at, host.origin
    )


def build_ranges(
    model: TraceModel, rows: np.ndarray, thread: np.ndarray | None = None
) -> HostRanges:
    """The index of the given X-event rows (in file order), per thread (or per the given
    key of each row: the trace view's tracks)."""
    ev = model.events
    if thread is None:
        thread = thread_keys(model, rows) if rows.size else np.empty(0, np.int64)
    raw = ev["ts"][rows].astype(np.float64, copy=False)  # a gather: its own copy
    origin = time_origin(raw)
    start = snap_ns(raw, origin)
    raw += ev["dur"][rows]
    end = snap_ns(raw, origin)
    del raw
    order = nesting_order(thread, start, end)  # file order breaks ties
    # Each column sorted in turn, the unsorted one let go before the next is made, and
    # the order let go before the parents are searched (that search is the build's peak).
    thread = thread[order]
    start = start[order]
    end = end[order]
    rows = rows[order]
    del order
    return _index_sorted(rows, thread, start, end, origin=origin)


def _index_sorted(
    rows: np.ndarray,
    thread: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    start_at: np.ndarray | None = None,
    origin: float = 0.0,
) -> HostRanges:
    """The index of ranges already in (thread, start, -end, file order) order. `start_at`:
    per range, where its parent search may start (a range before it with none between
    reaching it; -1 or one of another thread: the thread's first)."""
    first = np.flatnonzero(np.concatenate([[True], thread[1:] != thread[:-1]])[: rows.size])
    threads = thread[first]
    thread_hi = np.append(first[1:], rows.size).astype(np.int64)
    parent = index_parents(first, start, end, start_at)  # compiled, where built
    if parent is not None:
        return HostRanges(rows, thread, start, end, parent, threads, first, thread_hi, origin)
    # Parents: per thread a sentinel (+inf end) before its ranges stops the search there.
    # Each range's sequence position: its place plus the sentinels up to its thread's.
    # (As int32 where the sequence fits: it is held through the search, the build's peak.)
    index = np.int32 if rows.size + threads.size <= np.iinfo(np.int32).max else np.int64
    sentinel_before: np.ndarray = np.arange(rows.size, dtype=index)
    sentinel_before += np.repeat(
        np.arange(1, first.size + 1, dtype=index), thread_hi[: first.size] - first
    )
    values = np.full(rows.size + threads.size, np.inf)
    values[sentinel_before] = end
    targets = values  # the same array unless some range has zero length (read, not written)
    zero_length = np.flatnonzero(end <= start)  # reached by ending after their end
    if zero_length.size:
        targets = values.copy()
        targets[sentinel_before[zero_length]] = next_up(end[zero_length])
    del zero_length
    search_from = None
    if start_at is not None:
        search_from = np.arange(values.size, dtype=np.int64) - 1
        own = (start_at >= 0) & (thread[np.maximum(start_at, 0)] == thread)
        thread_sentinel = np.repeat(first + np.arange(first.size), thread_hi - first)
        search_from[sentinel_before] = np.where(
            own, sentinel_before[np.maximum(start_at, 0)], thread_sentinel
        )
        del own, thread_sentinel
    found = previous_reaching(values, targets, search_from)[sentinel_before]
    del values, targets, search_from
    is_range = np.zeros(found.size + threads.size, dtype=bool)
    is_range[sentinel_before] = True
    del sentinel_before
    position = running_count(is_range) - 1  # sequence position → range position
    parent = np.where((found >= 0) & is_range[np.maximum(found, 0)], position[found], -1)
    return HostRanges(
        rows=rows,
        thread=thread,
        start=start,
        end=end,
        parent=parent.astype(np.int64, copy=False),
        threads=threads,
        thread_lo=first.astype(np.int64),
        thread_hi=thread_hi,
        origin=origin,
    )
