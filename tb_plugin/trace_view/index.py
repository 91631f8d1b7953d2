"""The level-of-detail index of the trace view, built once per model.

Per track, events are laid out in rows (depth = nesting level, from a stack sweep), so
events of one (track, depth) never overlap: sorted by start, their ends are sorted too and
one binary search finds the events of any window. Each (track, depth) is split further by
duration class (`[T_k-1, T_k)`, `T_k = T_0 * 4^k`), so the events at least `D` µs long are
found without touching shorter ones. Shorter events are answered from precomputed
summaries: at level k, per bucket of `T_k` µs, the count, busy time, extent and dominant
name of the events shorter than `T_k`. A window query at resolution `D` µs reads level
`K` (largest `T_K <= D`) and the classes above it, so its cost follows what it returns,
not the size of the trace.

Depth is a layout rule, not the host-range index's nesting (analysis/core/host_ranges.py, which
the trace view uses for "which slice encloses t"): a slice that starts inside another and
ends after it has no parent there, so it would share its row and overlap it, breaking the
sorted ends of a (track, depth) that a window query searches; the sweep puts it below.
And an end within `eps` of the next start counts as before it (rounded timestamps), so
back-to-back slices share a row.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.core.common import lexsort_ints
from ..analysis.core.tree_arrays import running_count
from ..model.trace_model import TraceModel
from .index_store import kept_on_disk
from .levels import FANOUT, Level, build_levels
from .tracks import Track, assign_tracks, slice_rows

MIN_T0 = 1e-3  # µs: 1 ns, the resolution traces are written at


@dataclass
class GroupLayout:
    """Where the events of each (track, depth) group and (group, class) segment lie."""

    group: np.ndarray  # per event, in segment order
    # Groups (track, depth), in order:
    group_track: np.ndarray
    group_depth: np.ndarray
    group_seg_lo: np.ndarray
    group_seg_hi: np.ndarray
    # Segments (group, class):
    seg_group: np.ndarray
    seg_class: np.ndarray
    seg_lo: np.ndarray
    seg_hi: np.ndarray
    group_lo: np.ndarray  # [lo, hi) of each group's events (segments are contiguous)
    group_hi: np.ndarray
    by_group_start: np.ndarray  # positions sorted by (group, start), across classes
    gs_start: np.ndarray  # start[by_group_start]
    # Per track:
    track_group_lo: np.ndarray
    track_group_hi: np.ndarray
    track_count: np.ndarray
    track_max_depth: np.ndarray


@dataclass
class TimelineIndex(GroupLayout):
    tracks: list[Track]
    eps: float  # overlap tolerance of the depth sweep (timestamps are rounded in files)
    t_min: float
    t_max: float
    thresholds: np.ndarray  # T_k
    # Per event, in segment order (track, depth, class, start):
    row: np.ndarray
    start: np.ndarray
    end: np.ndarray  # start + dur
    end_s: np.ndarray  # end shrunk by eps: never overlaps the next start of its depth
    name: np.ndarray
    depth: np.ndarray
    cls: np.ndarray
    parent: np.ndarray  # position of the enclosing event (depth - 1), or -1
    levels: list[Level]
    # Global time order (search, range summaries):
    by_start: np.ndarray
    by_start_ts: np.ndarray
    by_start_endmax: np.ndarray
    row_pos: np.ndarray  # model row → position, -1 when not on a slice track
    build_seconds: float = 0.0
    fallback_tracks: list[int] = field(default_factory=list)  # tracks needing the slow sweep

    def __len__(self) -> int:
        return int(self.row.shape[0])

    @property
    def nbytes(self) -> int:
        arrays = [v for v in vars(self).values() if isinstance(v, np.ndarray)]
        return int(sum(a.nbytes for a in arrays) + sum(lv.nbytes for lv in self.levels))

    def track_of_group(self, group: np.ndarray) -> np.ndarray:
        return self.group_track[group]

    def position(self, row: int) -> int:
        if row < 0 or row >= self.row_pos.shape[0]:
            return -1
        return int(self.row_pos[row])


# --- depth -----------------------------------------------------------------------


def nesting_depth(start: np.ndarray, end_s: np.ndarray) -> tuple[np.ndarray, bool]:
    """Depth of each event of one track, events sorted by (start, -end_s).

    Vectorised: with proper nesting, an event's depth is the number of earlier events
    still open at its start. Returns (depth, valid); `valid` is False when the file's
    events overlap without nesting, where this count would put two overlapping events
    on one row (then `stack_depth` is used)."""
    n = start.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int32), True
    idx = np.arange(n)
    closed_all = np.searchsorted(np.sort(end_s), start, side="right")  # ends <= start
    zero = end_s <= start
    group_end = np.searchsorted(start, start, side="right")  # equal starts end here
    zero_prefix = np.concatenate([[0], running_count(zero)])
    zeros_after = zero_prefix[group_end] - zero_prefix[idx + 1]
    depth = idx - (closed_all - zero - zeros_after)
    return depth.astype(np.int32), _layout_valid(start, end_s, depth)


def _layout_valid(start: np.ndarray, end_s: np.ndarray, depth: np.ndarray) -> bool:
    if start.shape[0] < 2:
        return True
    order = by_depth(depth)
    d = depth[order]
    same = d[1:] == d[:-1]
    return not bool(np.any(same & (start[order][1:] < end_s[order][:-1])))


def by_depth(depth: np.ndarray) -> np.ndarray:
    """`np.argsort(depth, kind="stable")` (by depth, then index): depths below 2**15 are
    sorted as int16, which numpy's stable sort takes by radix (~3x faster than int32)."""
    if depth.size and int(depth.min()) >= 0 and int(depth.max()) < 1 << 15:
        depth = depth.astype(np.int16)
    return np.argsort(depth, kind="stable")


def stack_depth(start: np.ndarray, end_s: np.ndarray) -> np.ndarray:
    """The same rows by an explicit stack sweep; an event that outlives its parent is put
    below it instead of overlapping a sibling. Used only for tracks that need it."""
    depth = np.empty(start.shape[0], dtype=np.int32)
    stack: list[float] = []
    for i, (s, e) in enumerate(zip(start.tolist(), end_s.tolist())):
        while stack and stack[-1] <= s:
            stack.pop()
        depth[i] = len(stack)
        stack.append(e)
    return depth


def parents(depth: np.ndarray) -> np.ndarray:
    """For events of one track in sweep order: index of the enclosing event (the last
    earlier event one level up), or -1."""
    n = depth.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out
    idx = np.arange(n, dtype=np.int64)
    key = depth.astype(np.int64) * n + idx
    order = by_depth(depth)  # the keys' order: by depth, then index
    sorted_key = key[order]
    inner = np.flatnonzero(depth > 0)
    pos = np.searchsorted(sorted_key, (depth[inner].astype(np.int64) - 1) * n + idx[inner]) - 1
    out[inner] = order[pos]
    return out


# --- build -----------------------------------------------------------------------


def _changes(key: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts."""
    out = np.ones(key.shape[0], dtype=bool)
    out[1:] = key[1:] != key[:-1]
    return out


def _segment_order(track_of: np.ndarray, depth: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """`np.lexsort((ts, cls, depth, track_of))` of events in sweep order (by track, then
    start `ts`): a stable sort by (track, depth, class) keeps each group's events by start,
    ties as they were, as the lexsort does, without a pass over the starts."""
    return lexsort_ints((cls, depth, track_of))


def _run_starts(key: np.ndarray) -> np.ndarray:
    return np.flatnonzero(_changes(key)).astype(np.int64)


def tolerance(ts: np.ndarray) -> float:
    """Timestamps are written to the ns and float64 epoch µs only keep 0.25 µs near 2021:
    an end within this of a start counts as before it."""
    if ts.size == 0:
        return MIN_T0
    biggest = float(np.max(np.abs(ts)))
    return max(MIN_T0, 2.0 * float(np.spacing(biggest)))


def build_index(model: TraceModel) -> TimelineIndex:
    began = time.perf_counter()
    ev = model.events
    rows = slice_rows(model)
    track_of, tracks = assign_tracks(model, rows)
    ts = ev["ts"][rows].astype(np.float64)
    dur = ev["dur"][rows].astype(np.float64)
    eps = tolerance(ts)
    end_s = np.maximum(ts, ts + dur - eps)

    # Sweep order: (track, start, longest first).
    order = np.lexsort((-end_s, ts, track_of))
    rows, track_of, ts, dur, end_s = (a[order] for a in (rows, track_of, ts, dur, end_s))
    n, n_tracks = rows.shape[0], len(tracks)
    depth, parent, fallback = _nest_tracks(track_of, ts, end_s, n_tracks)
    t_min = float(ts.min()) if n else 0.0
    span = float(ts.max() + dur.max() - ts.min()) if n else 0.0
    thresholds = _thresholds(span)
    cls = np.searchsorted(thresholds, dur, side="right").astype(np.int8)

    # Segment order: (track, depth, class, start).
    seg_order = _segment_order(track_of, depth, cls)
    inverse = np.empty(n, dtype=np.int64)
    inverse[seg_order] = np.arange(n)
    rows, track_of, ts, dur, end_s = (a[seg_order] for a in (rows, track_of, ts, dur, end_s))
    depth, cls, parent = depth[seg_order], cls[seg_order], parent[seg_order]
    parent = np.where(parent >= 0, inverse[np.maximum(parent, 0)], -1)
    names = ev["name"][rows].astype(np.int32)
    layout = _group_layout(track_of, depth, cls, ts, n_tracks, thresholds.size)
    levels = build_levels(
        t_min, span, thresholds, layout.group, ts, end_s, dur, names, cls, layout.group_track.size
    )

    by_start = np.argsort(ts, kind="stable")
    row_pos = np.full(len(model), -1, dtype=np.int64 if n >= 2**31 else np.int32)
    row_pos[rows] = np.arange(n)  # after the segment reorder: positions are final
    return TimelineIndex(
        tracks=tracks,
        eps=eps,
        t_min=t_min,
        t_max=float((ts + dur).max()) if n else 0.0,
        thresholds=thresholds,
        row=rows.astype(np.int64),
        start=ts,
        end=ts + dur,
        end_s=end_s,
        name=names,
        depth=depth,
        cls=cls,
        parent=parent,
        **vars(layout),
        levels=levels,
        by_start=by_start,
        by_start_ts=ts[by_start],
        by_start_endmax=np.maximum.accumulate((ts + dur)[by_start]) if n else np.zeros(0),
        row_pos=row_pos,
        build_seconds=time.perf_counter() - began,
        fallback_tracks=fallback,
    )


def _thresholds(span: float) -> np.ndarray:
    """T_k = T_0 * FANOUT^k, from about the resolution traces are written at up to the
    whole span."""
    t0 = max(MIN_T0, span / float(1 << 40))
    n_levels = max(1, int(np.ceil(np.log(max(span, t0) / t0) / np.log(FANOUT))) + 1)
    return t0 * FANOUT ** np.arange(n_levels, dtype=np.float64)


def _nest_tracks(
    track_of: np.ndarray, ts: np.ndarray, end_s: np.ndarray, n_tracks: int
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Depth and enclosing event (position, -1) of each event in sweep order, and the
    tracks whose events overlap without nesting (laid out by the slow sweep)."""
    n = ts.shape[0]
    bounds = np.searchsorted(track_of, np.arange(n_tracks + 1))
    depth = np.zeros(n, dtype=np.int32)
    parent = np.full(n, -1, dtype=np.int64)
    fallback: list[int] = []
    for t in range(n_tracks):
        lo, hi = int(bounds[t]), int(bounds[t + 1])
        d, valid = nesting_depth(ts[lo:hi], end_s[lo:hi])
        if not valid:
            d = stack_depth(ts[lo:hi], end_s[lo:hi])
            fallback.append(t)
        depth[lo:hi] = d
        p = parents(d)
        parent[lo:hi] = np.where(p >= 0, p + lo, -1)
    return depth, parent, fallback


def _group_layout(
    track_of: np.ndarray,
    depth: np.ndarray,
    cls: np.ndarray,
    ts: np.ndarray,
    n_tracks: int,
    n_levels: int,
) -> GroupLayout:
    """Groups (track, depth) and segments (group, class) of events in segment order."""
    n = ts.shape[0]
    max_depth = int(depth.max()) + 1 if n else 1
    gkey = track_of.astype(np.int64) * max_depth + depth
    g_first = _run_starts(gkey)
    group = running_count(_changes(gkey)) - 1
    n_groups = int(g_first.shape[0])
    group_track = track_of[g_first].astype(np.int64)
    group_depth = depth[g_first].astype(np.int64)

    s_first = _run_starts(group * (n_levels + 2) + cls)
    seg_lo = s_first.astype(np.int64)
    seg_hi = np.append(s_first[1:], n).astype(np.int64) if n else np.zeros(0, np.int64)
    seg_group = group[s_first]
    group_seg_lo = np.searchsorted(seg_group, np.arange(n_groups), side="left")
    group_seg_hi = np.searchsorted(seg_group, np.arange(n_groups), side="right")
    track_max_depth = np.zeros(n_tracks, dtype=np.int64)
    if n_groups:
        np.maximum.at(track_max_depth, group_track, group_depth)
    by_group_start = np.lexsort((ts, group))
    return GroupLayout(
        group=group,
        group_track=group_track,
        group_depth=group_depth,
        group_seg_lo=group_seg_lo,
        group_seg_hi=group_seg_hi,
        seg_group=seg_group,
        seg_class=cls[s_first].astype(np.int64),
        seg_lo=seg_lo,
        seg_hi=seg_hi,
        group_lo=seg_lo[group_seg_lo] if n_groups else np.zeros(0, np.int64),
        group_hi=seg_hi[group_seg_hi - 1] if n_groups else np.zeros(0, np.int64),
        by_group_start=by_group_start,
        gs_start=ts[by_group_start],
        track_group_lo=np.searchsorted(group_track, np.arange(n_tracks), side="left"),
        track_group_hi=np.searchsorted(group_track, np.arange(n_tracks), side="right"),
        track_count=np.bincount(track_of, minlength=n_tracks).astype(np.int64),
        track_max_depth=track_max_depth,
    )


def index_of(model: TraceModel) -> TimelineIndex:
    """The model's index, built on first use and kept with the model (one build even
    when several requests ask at once), and on disk beside the model's cache entry (read
    back instead of built again when there)."""
    return model.derived(
        "_timeline_index",
        lambda m: kept_on_disk(m, "timeline_index", lambda: build_index(m), _pack, _unpack),
    )


_NOT_ARRAYS = ("tracks", "levels", "eps", "t_min", "t_max", "build_seconds", "fallback_tracks")
_LEVEL_ARRAYS = [f.name for f in dataclasses.fields(Level) if f.name != "width"]


def _pack(index: TimelineIndex) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    arrays = {f.name: getattr(index, f.name) for f in dataclasses.fields(index)}
    arrays = {k: v for k, v in arrays.items() if k not in _NOT_ARRAYS}
    for k, level in enumerate(index.levels):
        arrays.update({f"level{k}_{n}": getattr(level, n) for n in _LEVEL_ARRAYS})
    meta = {n: getattr(index, n) for n in _NOT_ARRAYS if n not in ("tracks", "levels")}
    meta["tracks"] = [dataclasses.asdict(t) for t in index.tracks]
    meta["level_widths"] = [level.width for level in index.levels]
    return arrays, meta


def _unpack(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> TimelineIndex:
    widths = meta.pop("level_widths")
    levels = [
        Level(width, **{n: arrays.pop(f"level{k}_{n}") for n in _LEVEL_ARRAYS})
        for k, width in enumerate(widths)
    ]
    tracks = [Track(**{**t, "sort_key": tuple(t["sort_key"])}) for t in meta.pop("tracks")]
    fields: dict[str, Any] = {**meta, **arrays}
    return TimelineIndex(tracks=tracks, levels=levels, **fields)
