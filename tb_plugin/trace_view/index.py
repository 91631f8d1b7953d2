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
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..store.model import TraceModel
from .tracks import Track, assign_tracks, slice_rows

FANOUT = 4
MIN_T0 = 1e-3  # µs: 1 ns, the resolution traces are written at


@dataclass
class Level:
    """Buckets of one resolution, for the (track, depth) groups where they compress."""

    width: float
    start: np.ndarray  # earliest start of the bucket's events
    end: np.ndarray  # latest (shrunk) end: sorted within a group, like the events
    count: np.ndarray
    busy: np.ndarray  # sum of durations
    name: np.ndarray  # dominant name code (most busy time)
    single: np.ndarray  # position of the bucket's only event, -1 when it has several
    group_lo: np.ndarray  # per group: [lo, hi) into the arrays; lo == hi when not stored
    group_hi: np.ndarray
    stored: np.ndarray  # per group: whether this level is kept (else: read the events)

    @property
    def nbytes(self) -> int:
        return sum(
            a.nbytes for a in (self.start, self.end, self.count, self.busy, self.name, self.single)
        )


@dataclass
class TimelineIndex:
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
    group: np.ndarray
    parent: np.ndarray  # position of the enclosing event (depth - 1), or -1
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
    zero_prefix = np.concatenate([[0], np.cumsum(zero)])
    zeros_after = zero_prefix[group_end] - zero_prefix[idx + 1]
    depth = idx - (closed_all - zero - zeros_after)
    return depth.astype(np.int32), _layout_valid(start, end_s, depth)


def _layout_valid(start: np.ndarray, end_s: np.ndarray, depth: np.ndarray) -> bool:
    if start.shape[0] < 2:
        return True
    order = np.lexsort((np.arange(start.shape[0]), depth))
    d = depth[order]
    same = d[1:] == d[:-1]
    return not bool(np.any(same & (start[order][1:] < end_s[order][:-1])))


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
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    inner = np.flatnonzero(depth > 0)
    pos = np.searchsorted(sorted_key, (depth[inner].astype(np.int64) - 1) * n + idx[inner]) - 1
    out[inner] = order[pos]
    return out


# --- summaries -------------------------------------------------------------------


def _aggregate(
    group: np.ndarray,
    bucket: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    count: np.ndarray,
    busy: np.ndarray,
    dname: np.ndarray,
    dbusy: np.ndarray,
    pos: np.ndarray,
    n_buckets: int,
) -> dict[str, np.ndarray]:
    """Sum records per (group, bucket); the dominant name is the one with the most busy
    time among the records' own dominant names; `pos` stays only for a lone event."""
    key = group.astype(np.int64) * n_buckets + bucket
    order = np.argsort(key, kind="stable")
    key_s = key[order]
    first = np.flatnonzero(np.concatenate([[True], key_s[1:] != key_s[:-1]]))
    out = {
        "group": group[order][first],
        "bucket": bucket[order][first],
        "start": np.minimum.reduceat(start[order], first),
        "end": np.maximum.reduceat(end[order], first),
        "count": np.add.reduceat(count[order], first),
        "busy": np.add.reduceat(busy[order], first),
    }
    out["pos"] = np.where(out["count"] == 1, np.minimum.reduceat(pos[order], first), -1)
    by_name = np.lexsort((dname, key))
    k2, n2 = key[by_name], dname[by_name]
    f2 = np.flatnonzero(np.concatenate([[True], (k2[1:] != k2[:-1]) | (n2[1:] != n2[:-1])]))
    sums = np.add.reduceat(dbusy[by_name], f2)
    kk, nn = k2[f2], n2[f2]
    best = np.lexsort((sums, kk))
    kk_b = kk[best]
    last = np.flatnonzero(np.concatenate([kk_b[1:] != kk_b[:-1], [True]]))
    out["name"] = nn[best][last]
    out["dbusy"] = sums[best][last]
    return out


def build_levels(
    t_min: float,
    span: float,
    thresholds: np.ndarray,
    group: np.ndarray,
    start: np.ndarray,
    end_s: np.ndarray,
    dur: np.ndarray,
    name: np.ndarray,
    cls: np.ndarray,
    n_groups: int,
) -> list[Level]:
    """Level k sums, per bucket of width T_k, the events shorter than T_k; it is built from
    level k-1 (4 buckets → 1) plus the events of class k, so each level costs what it
    holds. A level is kept for a group only where it halves the events it stands for."""
    levels: list[Level] = []
    events_le = np.zeros(n_groups, dtype=np.int64)  # events of class <= k per group
    prev: dict[str, np.ndarray] | None = None
    for k, width in enumerate(thresholds.tolist()):
        n_buckets = int(span // width) + 2
        mine = np.flatnonzero(cls == k)
        events_le += np.bincount(group[mine], minlength=n_groups)
        parts: list[dict[str, np.ndarray]] = []
        if mine.size:
            parts.append(
                {
                    "group": group[mine],
                    "bucket": np.floor((start[mine] - t_min) / width).astype(np.int64),
                    "start": start[mine],
                    "end": end_s[mine],
                    "count": np.ones(mine.size, dtype=np.int64),
                    "busy": dur[mine],
                    "dname": name[mine],
                    "dbusy": dur[mine],
                    "pos": mine.astype(np.int64),
                }
            )
        if prev is not None and prev["group"].size:
            parts.append(
                {
                    "group": prev["group"],
                    "bucket": prev["bucket"] // FANOUT,
                    "start": prev["start"],
                    "end": prev["end"],
                    "count": prev["count"],
                    "busy": prev["busy"],
                    "dname": prev["name"],
                    "dbusy": prev["dbusy"],
                    "pos": prev["pos"],
                }
            )
        rec: dict[str, np.ndarray]
        if not parts:
            rec = {
                "group": np.zeros(0, dtype=np.int64),
                "bucket": np.zeros(0, dtype=np.int64),
                "start": np.zeros(0),
                "end": np.zeros(0),
                "count": np.zeros(0, dtype=np.int64),
                "busy": np.zeros(0),
                "name": np.zeros(0, dtype=np.int32),
                "dbusy": np.zeros(0),
                "pos": np.zeros(0, dtype=np.int64),
            }
        else:
            cat = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
            rec = _aggregate(
                cat["group"],
                cat["bucket"],
                cat["start"],
                cat["end"],
                cat["count"],
                cat["busy"],
                cat["dname"],
                cat["dbusy"],
                cat["pos"],
                n_buckets,
            )
        prev = rec
        per_group = np.bincount(rec["group"], minlength=n_groups)
        stored = (per_group > 0) & (per_group * 2 <= events_le)
        keep = stored[rec["group"]]
        kept_group = rec["group"][keep]
        lo = np.searchsorted(kept_group, np.arange(n_groups), side="left")
        hi = np.searchsorted(kept_group, np.arange(n_groups), side="right")
        levels.append(
            Level(
                width=float(width),
                start=rec["start"][keep],
                end=rec["end"][keep],
                count=rec["count"][keep].astype(np.int64),
                busy=rec["busy"][keep],
                name=rec["name"][keep].astype(np.int32),
                single=rec["pos"][keep],
                group_lo=lo,
                group_hi=hi,
                stored=stored,
            )
        )
    return levels


# --- build -----------------------------------------------------------------------


def _changes(key: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts."""
    out = np.ones(key.shape[0], dtype=bool)
    out[1:] = key[1:] != key[:-1]
    return out


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
    rows, track_of, ts, dur, end_s = (
        rows[order],
        track_of[order],
        ts[order],
        dur[order],
        end_s[order],
    )
    n = rows.shape[0]
    n_tracks = len(tracks)
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

    span = float(ts.max() + dur.max() - ts.min()) if n else 0.0
    t_min = float(ts.min()) if n else 0.0
    t_max = float((ts + dur).max()) if n else 0.0
    t0 = max(MIN_T0, span / float(1 << 40))
    n_levels = max(1, int(np.ceil(np.log(max(span, t0) / t0) / np.log(FANOUT))) + 1)
    thresholds = t0 * FANOUT ** np.arange(n_levels, dtype=np.float64)
    cls = np.searchsorted(thresholds, dur, side="right").astype(np.int8)

    # Segment order: (track, depth, class, start).
    seg_order = np.lexsort((ts, cls, depth, track_of))
    inverse = np.empty(n, dtype=np.int64)
    inverse[seg_order] = np.arange(n)
    rows, track_of, ts, dur, end_s = (
        rows[seg_order],
        track_of[seg_order],
        ts[seg_order],
        dur[seg_order],
        end_s[seg_order],
    )
    depth, cls = depth[seg_order], cls[seg_order]
    parent = parent[seg_order]
    parent = np.where(parent >= 0, inverse[np.maximum(parent, 0)], -1)
    names = ev["name"][rows].astype(np.int32)

    max_depth = int(depth.max()) + 1 if n else 1
    gkey = track_of.astype(np.int64) * max_depth + depth
    g_first = _run_starts(gkey)
    group = np.cumsum(_changes(gkey)).astype(np.int64) - 1
    n_groups = int(g_first.shape[0])
    group_track = track_of[g_first].astype(np.int64)
    group_depth = depth[g_first].astype(np.int64)

    s_first = _run_starts(group * (n_levels + 2) + cls)
    seg_lo = s_first.astype(np.int64)
    seg_hi = np.append(s_first[1:], n).astype(np.int64) if n else np.zeros(0, np.int64)
    seg_group = group[s_first]
    seg_class = cls[s_first].astype(np.int64)
    group_seg_lo = np.searchsorted(seg_group, np.arange(n_groups), side="left")
    group_seg_hi = np.searchsorted(seg_group, np.arange(n_groups), side="right")
    track_group_lo = np.searchsorted(group_track, np.arange(n_tracks), side="left")
    track_group_hi = np.searchsorted(group_track, np.arange(n_tracks), side="right")
    track_count = np.bincount(track_of, minlength=n_tracks).astype(np.int64)
    track_max_depth = np.zeros(n_tracks, dtype=np.int64)
    if n_groups:
        np.maximum.at(track_max_depth, group_track, group_depth)

    group_lo = seg_lo[group_seg_lo] if n_groups else np.zeros(0, np.int64)
    group_hi = seg_hi[group_seg_hi - 1] if n_groups else np.zeros(0, np.int64)
    by_group_start = np.lexsort((ts, group))
    gs_start = ts[by_group_start]

    levels = build_levels(t_min, span, thresholds, group, ts, end_s, dur, names, cls, n_groups)

    by_start = np.argsort(ts, kind="stable")
    by_start_ts = ts[by_start]
    by_start_endmax = np.maximum.accumulate((ts + dur)[by_start]) if n else np.zeros(0)
    row_pos = np.full(len(model), -1, dtype=np.int64 if n >= 2**31 else np.int32)
    row_pos[rows] = np.arange(n)

    return TimelineIndex(
        tracks=tracks,
        eps=eps,
        t_min=t_min,
        t_max=t_max,
        thresholds=thresholds,
        row=rows.astype(np.int64),
        start=ts,
        end=ts + dur,
        end_s=end_s,
        name=names,
        depth=depth,
        cls=cls,
        group=group,
        parent=parent,
        group_track=group_track,
        group_depth=group_depth,
        group_seg_lo=group_seg_lo,
        group_seg_hi=group_seg_hi,
        seg_group=seg_group,
        seg_class=seg_class,
        seg_lo=seg_lo,
        seg_hi=seg_hi,
        group_lo=group_lo,
        group_hi=group_hi,
        by_group_start=by_group_start,
        gs_start=gs_start,
        track_group_lo=track_group_lo,
        track_group_hi=track_group_hi,
        track_count=track_count,
        track_max_depth=track_max_depth,
        levels=levels,
        by_start=by_start,
        by_start_ts=by_start_ts,
        by_start_endmax=by_start_endmax,
        row_pos=row_pos,
        build_seconds=time.perf_counter() - began,
        fallback_tracks=fallback,
    )


def index_of(model: TraceModel) -> TimelineIndex:
    """The model's index, built on first use and kept with the model (one build even
    when several requests ask at once)."""
    return model.derived("_timeline_index", build_index)
