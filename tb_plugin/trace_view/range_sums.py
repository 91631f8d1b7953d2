"""Per-name sums of a time range without reading every event in it: the `range_summary`
route's answer for a wide range in time that follows the range's edges, not its length.

Events are bucketed by start time (about EVENTS_PER_BUCKET a bucket), and per (track, name)
the buckets' counts, busy time and children's time (a child's duration counted under its
parent's name) are kept as running sums. The events that start in a range [a, b) are then
the whole buckets inside it (two searches per (track, name)) plus the few events of the
buckets at its edges (read one by one); the events that overlap it without starting in it
(they hold `a`), and those that start in it but end after `b`, are found per (track, depth)
row by one search each, as the window query finds its events, and clipped one by one.

Self time is an event's clipped time less its children's, never below zero. Where every
child lies inside its parent and siblings do not overlap, the children's clipped times
never exceed their parent's, so the per-name sums subtract them whole and no event's self
time needs its own clamp. A track where this does not hold (an event outliving its parent,
overlapping siblings) is `irregular`: a range over it is summed event by event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.core.common import distinct, gather_ranges, unique_inverse
from .index import TimelineIndex
from .window import groups_of_tracks, overlap_bounds

EVENTS_PER_BUCKET = 2048
MAX_BUCKETS = 1 << 16


@dataclass
class RangeSums:
    """Running sums per ((track, name), start bucket); `keys` sorted, sums with a leading 0
    so the sum over entries [lo, hi) is `s[hi] - s[lo]`."""

    t_min: float
    width: float  # µs per bucket
    n_buckets: int
    n_names: int
    pairs: np.ndarray  # distinct track * n_names + name, sorted
    keys: np.ndarray  # pair index * n_buckets + bucket, sorted
    count: np.ndarray  # running sums (int64)
    busy: np.ndarray  # running sums of durations
    child: np.ndarray  # running sums of children's durations, under their parent's name
    irregular: np.ndarray  # per track: a range over it is summed event by event

    def bucket(self, start: np.ndarray | float) -> np.ndarray:
        """Bucket of a start time: monotone in time (the query relies on it)."""
        b = np.floor((np.asarray(start, dtype=np.float64) - self.t_min) / self.width)
        return np.clip(b, 0, self.n_buckets - 1).astype(np.int64)


def event_pairs(index: TimelineIndex, n_names: int) -> np.ndarray:
    """track * n_names + name of every event (index order)."""
    return index.group_track[index.group].astype(np.int64) * n_names + index.name


def irregular_tracks(index: TimelineIndex) -> np.ndarray:
    """Per track: whether some event has a child outside it or children that overlap."""
    out = np.zeros(len(index.tracks), dtype=bool)
    child = np.flatnonzero(index.parent >= 0)
    if child.size == 0:
        return out
    parent = index.parent[child]
    cs, ce = index.start[child], index.end[child]
    ps, pe = index.start[parent], index.end[parent]
    bad = child[(cs < ps) | (cs >= pe) | (ce > pe)]
    order = np.lexsort((cs, parent))
    same = parent[order][1:] == parent[order][:-1]
    overlap = same & (ce[order][:-1] > cs[order][1:])
    bad = np.concatenate([bad, child[order][1:][overlap]])
    out[index.group_track[index.group[bad]]] = True
    return out


def build_range_sums(
    index: TimelineIndex, n_names: int, events_per_bucket: int = EVENTS_PER_BUCKET
) -> RangeSums:
    n = len(index)
    n_buckets = int(np.clip(n // events_per_bucket, 1, MAX_BUCKETS))
    last = float(index.start.max()) if n else 0.0
    width = max((last - index.t_min) / n_buckets, 1e-3)
    bucket_of = RangeSums(index.t_min, width, n_buckets, n_names, *([np.zeros(0)] * 6)).bucket
    pair = event_pairs(index, n_names)
    pairs = distinct(pair)  # np.unique's values, not its sort of every event (~8x)
    bucket = bucket_of(index.start)
    child = np.flatnonzero(index.parent >= 0)
    dur = index.end - index.start
    # Records: each event under its own name, each child's duration under its parent's.
    rec_pair = np.searchsorted(pairs, np.concatenate([pair, pair[index.parent[child]]]))
    rec_key = rec_pair * n_buckets + np.concatenate([bucket, bucket[child]])
    rec_count = np.concatenate([np.ones(n, np.int64), np.zeros(child.size, np.int64)])
    rec_busy = np.concatenate([dur, np.zeros(child.size)])
    rec_child = np.concatenate([np.zeros(n), dur[child]])
    keys, inverse = unique_inverse(rec_key)  # np.unique's, marked not sorted (~7x)

    def running(values: np.ndarray, dtype: type) -> np.ndarray:
        per_key: np.ndarray = np.bincount(inverse, weights=values, minlength=keys.size)
        return np.concatenate([np.zeros(1, dtype), np.cumsum(per_key.astype(dtype))])

    return RangeSums(
        index.t_min,
        width,
        n_buckets,
        n_names,
        pairs=pairs,
        keys=keys,
        count=running(rec_count, np.int64),
        busy=running(rec_busy, np.float64),
        child=running(rec_child, np.float64),
        irregular=irregular_tracks(index),
    )


@dataclass
class PerName:
    """Per name code: events overlapping the range, their clipped time, their self time."""

    code: np.ndarray
    count: np.ndarray
    total: np.ndarray
    self_time: np.ndarray


def _stabbing(index: TimelineIndex, segs: np.ndarray, t: float) -> np.ndarray:
    """Positions, on the segments `segs`, of events that start before `t` and may end
    after it (a superset: the caller tests `end > t`)."""
    lo, hi = overlap_bounds(
        index.end_s, index.start, index.seg_lo[segs], index.seg_hi[segs], t - index.eps, t
    )
    return gather_ranges(lo, hi)


def _explicit_starts(
    sums: RangeSums, index: TimelineIndex, a: float, b: float, first: int, stop: int
) -> np.ndarray:
    """Positions of the events starting in [a, b) whose bucket is outside [first, stop):
    those the running sums do not hold."""
    ts = index.by_start_ts

    def span(t0: float, t1: float) -> np.ndarray:
        i0, i1 = np.searchsorted(ts, [t0, t1], side="left")
        return index.by_start[i0 : max(i0, i1)]

    if stop - first < 3:
        pos = span(a, b)
    else:
        w, t = sums.width, sums.t_min
        left = span(a, min(b, t + (first + 1) * w))
        right = span(max(a, t + (stop - 1) * w), b)
        pos = np.concatenate([left, right])
    bucket = sums.bucket(index.start[pos])
    return pos[(bucket < first) | (bucket >= stop)]


def range_per_name(
    sums: RangeSums, index: TimelineIndex, tracks: np.ndarray, a: float, b: float
) -> PerName:
    """Per name, over the events of `tracks` (none irregular) overlapping [a, b): count,
    time clipped to the range, and self time (clipped time less the children's)."""
    on = np.zeros(len(index.tracks), dtype=bool)
    on[tracks] = True
    first, stop = int(sums.bucket(a)) + 1, int(sums.bucket(b))
    n_pairs = sums.pairs.size
    count = np.zeros(n_pairs, dtype=np.int64)
    busy = np.zeros(n_pairs)
    child = np.zeros(n_pairs)
    if stop > first:
        base = np.arange(n_pairs, dtype=np.int64) * sums.n_buckets
        lo = np.searchsorted(sums.keys, base + first)
        hi = np.searchsorted(sums.keys, base + stop)
        count += sums.count[hi] - sums.count[lo]
        busy += sums.busy[hi] - sums.busy[lo]
        child += sums.child[hi] - sums.child[lo]
    off = ~on[sums.pairs // sums.n_names]  # only the chosen tracks' pairs count
    count[off], busy[off], child[off] = 0, 0.0, 0.0

    def pair_of(pos: np.ndarray) -> np.ndarray:
        return np.searchsorted(sums.pairs, event_pairs_at(index, pos, sums.n_names))

    def add(pos: np.ndarray, n: np.ndarray, own: np.ndarray, kids: np.ndarray) -> None:
        """Events at `pos` add `n` and `own` under their name and `kids` under their
        parent's (when they have one)."""
        nonlocal count, busy, child
        at = pair_of(pos)
        count = count + np.bincount(at, weights=n, minlength=n_pairs).astype(np.int64)
        busy = busy + np.bincount(at, weights=own, minlength=n_pairs)
        has = index.parent[pos] >= 0
        up = pair_of(index.parent[pos[has]])
        child = child + np.bincount(up, weights=kids[has], minlength=n_pairs)

    # Events starting in [a, b) at the edges: whole, as the running sums hold them.
    edge = _explicit_starts(sums, index, a, b, first, stop)
    edge = edge[on[index.group_track[index.group[edge]]]]
    edge_dur = index.end[edge] - index.start[edge]
    add(edge, np.ones(edge.size, np.int64), edge_dur, edge_dur)

    segs = _segments(index, tracks)
    # Events holding `a`: not counted yet; their clipped time.
    held = _stabbing(index, segs, a)
    held = held[(index.start[held] < a) & (index.end[held] > a)]
    clip_held = np.minimum(index.end[held], b) - a
    add(held, np.ones(held.size, np.int64), clip_held, clip_held)
    # Events starting in [a, b) and ending after b: counted whole, less what is after b.
    late = _stabbing(index, segs, b)
    late = late[(index.start[late] >= a) & (index.end[late] > b)]
    after = index.end[late] - b
    add(late, np.zeros(late.size, np.int64), -after, -after)
    return _by_name(sums, count, busy, child)


def event_pairs_at(index: TimelineIndex, pos: np.ndarray, n_names: int) -> np.ndarray:
    return index.group_track[index.group[pos]].astype(np.int64) * n_names + index.name[pos]


def _segments(index: TimelineIndex, tracks: np.ndarray) -> np.ndarray:
    groups = groups_of_tracks(index, np.asarray(tracks, dtype=np.int64))
    return gather_ranges(index.group_seg_lo[groups], index.group_seg_hi[groups])


def _by_name(sums: RangeSums, count: np.ndarray, busy: np.ndarray, child: np.ndarray) -> PerName:
    names = sums.pairs % sums.n_names
    n_count = np.bincount(names, weights=count, minlength=sums.n_names)
    used = np.flatnonzero(n_count > 0)
    total = np.bincount(names, weights=busy, minlength=sums.n_names)[used]
    kids = np.bincount(names, weights=child, minlength=sums.n_names)[used]
    return PerName(used, n_count[used].astype(np.int64), total, np.maximum(total - kids, 0.0))
