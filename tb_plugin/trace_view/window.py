"""Window queries on the index: what of some tracks is visible in [t0, t1] at a resolution.

Events at least `D = min_px * (t1 - t0) / width` µs long come back exactly; shorter ones
are merged, per (track, depth), into density blocks (extent, count, busy time, dominant
name). Every event overlapping the window is either exact or counted in a block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..analysis.core.common import gather_ranges
from ..analysis.core.tree_arrays import running_count
from .index import TimelineIndex
from .levels import Level, aggregate

try:
    from . import _passes  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's sorts give the same blocks
    _passes = None

LOOP_SEGMENTS = 256  # up to this many segments, one np.searchsorted each beats the bisection


def segment_search(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, strict: bool
) -> np.ndarray:
    """For each segment [lo_i, hi_i) of the sorted-within-segment `values`: the first
    position whose value is > target_i (strict) or >= target_i; hi_i when none. One
    bisection over all segments at once, or one search a segment when they are few (each
    step of the bisection is several numpy calls over the segments still open); in C,
    one binary search a segment without the GIL, where the compiled helper is built."""
    compiled = _compiled_segment_search(values, lo, hi, target, strict)
    if compiled is not None:
        return compiled
    if lo.size <= LOOP_SEGMENTS:
        side: Literal["left", "right"] = "right" if strict else "left"
        at = np.broadcast_to(np.asarray(target, dtype=np.float64), lo.shape).tolist()
        found = [
            a + int(values[a:b].searchsorted(t, side)) if a < b else b
            for a, b, t in zip(lo.tolist(), hi.tolist(), at)
        ]
        return np.array(found, dtype=np.int64)
    lo = lo.astype(np.int64, copy=True)
    hi = hi.astype(np.int64, copy=True)
    target = np.broadcast_to(np.asarray(target, dtype=np.float64), lo.shape)
    active = np.flatnonzero(lo < hi)
    while active.size:
        a, b = lo[active], hi[active]
        mid = (a + b) // 2
        v = values[mid]
        right = (v <= target[active]) if strict else (v < target[active])
        lo[active] = np.where(right, mid + 1, a)
        hi[active] = np.where(right, b, mid)
        active = active[lo[active] < hi[active]]
    return lo


def _compiled_segment_search(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, strict: bool
) -> np.ndarray | None:
    if _passes is None or values.dtype != np.float64 or not values.flags.c_contiguous:
        return None
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    hi = np.ascontiguousarray(hi, dtype=np.int64)
    at = np.ascontiguousarray(np.broadcast_to(np.asarray(target, dtype=np.float64), lo.shape))
    out = np.empty(lo.size, dtype=np.int64)
    if _passes.segment_search(values, lo, hi, at, strict, out):
        return out
    return None


def overlap_bounds(
    ends: np.ndarray,
    starts: np.ndarray,
    seg_lo: np.ndarray,
    seg_hi: np.ndarray,
    after: float,
    before: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per segment [seg_lo_i, seg_hi_i), with `starts` and `ends` both sorted within it:
    the positions [lo_i, hi_i) of the items that end after `after` and start before
    `before` (a window's events, or a stored level's buckets)."""
    lo = segment_search(ends, seg_lo, seg_hi, np.full(seg_lo.shape, after), strict=True)
    hi = segment_search(starts, lo, seg_hi, np.full(seg_lo.shape, before), strict=False)
    return lo, hi


def groups_of_tracks(index: TimelineIndex, tracks: np.ndarray) -> np.ndarray:
    return gather_ranges(index.track_group_lo[tracks], index.track_group_hi[tracks])


@dataclass
class SliceWindow:
    """Numpy result of one window query (positions into the index's event arrays)."""

    resolution: float  # D: events at least this long are exact
    bucket: float  # width of the buckets the blocks are made of
    exact: np.ndarray  # positions of exact events, sorted by (track, depth, start)
    block_group: np.ndarray  # blocks, sorted by (group, start)
    block_start: np.ndarray
    block_end: np.ndarray
    block_count: np.ndarray
    block_busy: np.ndarray
    block_name: np.ndarray
    block_single: np.ndarray  # position of a block's only event, else -1

    @property
    def n_items(self) -> int:
        return int(self.exact.size + self.block_group.size)


def _overlapping(index: TimelineIndex, pos: np.ndarray, t0: float) -> np.ndarray:
    """Of candidates already known to start before t1: those reaching into the window."""
    end, start = index.end[pos], index.start[pos]
    return pos[(end > t0) | (start >= t0)]


def query_slices(
    index: TimelineIndex, tracks: np.ndarray, t0: float, t1: float, resolution: float
) -> SliceWindow:
    """Exact events and density blocks of `tracks` in [t0, t1) where events shorter than
    `resolution` µs are merged."""
    thresholds = index.thresholds
    level_k = int(np.searchsorted(thresholds, resolution, side="right")) - 1
    bucket = float(thresholds[level_k]) if level_k >= 0 else resolution
    groups = groups_of_tracks(index, np.asarray(tracks, dtype=np.int64))
    segs = gather_ranges(index.group_seg_lo[groups], index.group_seg_hi[groups])
    seg_class = index.seg_class[segs]
    level = index.levels[level_k] if level_k >= 0 else None
    stored = level.stored[index.seg_group[segs]] if level is not None else np.zeros(0, bool)

    # Segments read event by event: long classes, and short ones without a stored level.
    read = seg_class > level_k
    if level is not None:
        read |= ~stored
    read_segs = segs[read]
    lo, hi = overlap_bounds(
        index.end_s,
        index.start,
        index.seg_lo[read_segs],
        index.seg_hi[read_segs],
        t0 - index.eps,
        t1,
    )
    cand = _overlapping(index, gather_ranges(lo, hi), t0)
    long_enough = (index.end[cand] - index.start[cand]) >= resolution
    exact = cand[long_enough]
    short = cand[~long_enough]

    records = []
    if short.size:
        records.append(_short_event_records(index, short, bucket))
    if level is not None:
        stored_groups = groups[level.stored[groups]]
        if stored_groups.size:
            records.append(_level_records(index, level, stored_groups, t0, t1))
    blocks = _merge_blocks(records, bucket)
    exact = exact[np.lexsort((index.start[exact], index.group[exact]))]
    return SliceWindow(resolution, bucket, exact, *blocks)


def _short_event_records(
    index: TimelineIndex, short: np.ndarray, bucket: float
) -> dict[str, np.ndarray]:
    """Events read one by one but shorter than the resolution, summed per bucket."""
    start = index.start[short]
    dur = index.end[short] - start
    return aggregate(
        index.group[short],
        np.floor((start - index.t_min) / bucket).astype(np.int64),
        start,
        index.end_s[short],
        np.ones(short.size, dtype=np.int64),
        dur,
        index.name[short],
        dur,
        short,
        int((index.t_max - index.t_min) // bucket) + 2,
    )


def _level_records(
    index: TimelineIndex, level: Level, groups: np.ndarray, t0: float, t1: float
) -> dict[str, np.ndarray]:
    """The stored level's buckets of `groups` overlapping [t0, t1)."""
    b_lo, b_hi = overlap_bounds(
        level.end, level.start, level.group_lo[groups], level.group_hi[groups], t0 - index.eps, t1
    )
    sel = gather_ranges(b_lo, b_hi)
    return {
        "group": np.repeat(groups, b_hi - b_lo),
        "start": level.start[sel],
        "end": level.end[sel],
        "count": level.count[sel],
        "busy": level.busy[sel],
        "name": level.name[sel],
        "dbusy": level.busy[sel],
        "pos": level.single[sel],
    }


def _merge_blocks(
    records: list[dict[str, np.ndarray]], bucket: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Join bucket records of one group whose gap is under a bucket: no event long enough
    to be exact fits in such a gap, so a block never hides one."""
    if not records:
        z = np.zeros(0)
        zi = np.zeros(0, dtype=np.int64)
        return zi, z, z, zi, z, zi.astype(np.int32), zi
    cat = {k: np.concatenate([r[k] for r in records]) for k in ("group", "start", "end")}
    cat.update(
        {
            k: np.concatenate([r[k] for r in records])
            for k in ("count", "busy", "name", "dbusy", "pos")
        }
    )
    order = _block_order(cat["group"], cat["start"], records[0]["group"].size)
    group, start, end = cat["group"][order], cat["start"][order], cat["end"][order]
    if group.size == 0:
        zi = np.zeros(0, dtype=np.int64)
        return zi, start, end, zi, start, zi.astype(np.int32), zi
    new = np.ones(group.size, dtype=bool)
    new[1:] = (group[1:] != group[:-1]) | (start[1:] - end[:-1] >= bucket)
    first = np.flatnonzero(new)
    heaviest = _heaviest(new, first, cat["dbusy"][order])
    count = np.add.reduceat(cat["count"][order], first)
    single = np.where(count == 1, np.maximum.reduceat(cat["pos"][order], first), -1)
    return (
        group[first],
        np.minimum.reduceat(start, first),
        np.maximum.reduceat(end, first),
        count,
        np.add.reduceat(cat["busy"][order], first),
        cat["name"][order][heaviest].astype(np.int32),
        single,
    )


def _block_order(group: np.ndarray, start: np.ndarray, split: int) -> np.ndarray:
    """np.lexsort((start, group)) of the records: each of the two parts (short events
    summed, a stored level's buckets) comes sorted so, so in C one merge of them; the sort
    where a part is not (or without the compiled helper)."""
    if _passes is not None and start.dtype == np.float64 and group.size:
        order = np.empty(group.size, dtype=np.int64)
        ordered = _passes.merge_order(
            np.ascontiguousarray(group, dtype=np.int64), np.ascontiguousarray(start), split, order
        )
        if ordered:
            return order
    return np.lexsort((start, group))


def _heaviest(new: np.ndarray, first: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Per block (starting where `new`, at `first`): the position of its greatest weight,
    the last of equal ones (np.lexsort's order); one pass in C, else the sort."""
    if _passes is not None and weight.dtype == np.float64:
        out = np.empty(first.size, dtype=np.int64)
        _passes.heaviest(first, np.ascontiguousarray(weight), out)
        return out
    block_id = running_count(new) - 1
    best = np.lexsort((weight, block_id))
    last = np.flatnonzero(np.concatenate([block_id[best][1:] != block_id[best][:-1], [True]]))
    return np.asarray(best[last])
