"""The level-of-detail summaries of the trace view's index: at level k, per bucket of
`T_k` µs and per (track, depth) group, the count, busy time, extent and dominant name of
the events shorter than `T_k`. Level k is built from level k-1 (FANOUT buckets → 1) plus
the events of class k, so each level costs what it holds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.core.common import lexsort_ints

FANOUT = 4
_FIELDS = ("group", "bucket", "start", "end", "count", "busy", "dname", "dbusy", "pos")


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


def aggregate(
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
    by_name = lexsort_ints((dname, key))  # by key, then name
    k2, n2 = key[by_name], dname[by_name]
    f2 = np.flatnonzero(np.concatenate([[True], (k2[1:] != k2[:-1]) | (n2[1:] != n2[:-1])]))
    sums = np.add.reduceat(dbusy[by_name], f2)
    kk, nn = k2[f2], n2[f2]
    best = most_busy(kk, sums)
    out["name"] = nn[best]
    out["dbusy"] = sums[best]
    return out


def most_busy(key: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Per run of equal `key` (sorted), the position of its largest sum, the last of equal
    ones, a NaN before any number: the last of each run of `np.lexsort((sums, key))`,
    found without sorting (that sort took ~0.17 s of a 1 GB trace's index)."""
    if key.size == 0:
        return np.zeros(0, dtype=np.intp)
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    run = np.repeat(np.arange(first.size), np.diff(np.append(first, key.size)))
    top = np.maximum.reduceat(sums, first)[run]  # NaN where the run has one, as the sort
    is_top = (sums == top) | (np.isnan(sums) & np.isnan(top))
    at = np.where(is_top, np.arange(key.size), -1)
    return np.maximum.reduceat(at, first)


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
    """Level k sums, per bucket of width T_k, the events shorter than T_k. A level is kept
    for a group only where it halves the events it stands for."""
    levels: list[Level] = []
    events_le = np.zeros(n_groups, dtype=np.int64)  # events of class <= k per group
    prev: dict[str, np.ndarray] | None = None
    for k, width in enumerate(thresholds.tolist()):
        n_buckets = int(span // width) + 2
        mine = np.flatnonzero(cls == k)
        events_le += np.bincount(group[mine], minlength=n_groups)
        parts: list[dict[str, np.ndarray]] = []
        if mine.size:
            bucket = np.floor((start[mine] - t_min) / width).astype(np.int64)
            parts.append(_event_records(mine, group, bucket, start, end_s, dur, name))
        if prev is not None and prev["group"].size:
            parts.append(_coarsened(prev))
        if parts:
            cat = {key: np.concatenate([p[key] for p in parts]) for key in _FIELDS}
            rec = aggregate(
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
        else:
            rec = _no_records()
        prev = rec
        levels.append(_stored_level(float(width), rec, events_le, n_groups))
    return levels


def _event_records(
    mine: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    start: np.ndarray,
    end_s: np.ndarray,
    dur: np.ndarray,
    name: np.ndarray,
) -> dict[str, np.ndarray]:
    """One record per event of the level's own class."""
    return {
        "group": group[mine],
        "bucket": bucket,
        "start": start[mine],
        "end": end_s[mine],
        "count": np.ones(mine.size, dtype=np.int64),
        "busy": dur[mine],
        "dname": name[mine],
        "dbusy": dur[mine],
        "pos": mine.astype(np.int64),
    }


def _coarsened(prev: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The previous level's buckets as records of this level's (FANOUT times wider)."""
    return {
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


def _no_records() -> dict[str, np.ndarray]:
    return {
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


def _stored_level(
    width: float, rec: dict[str, np.ndarray], events_le: np.ndarray, n_groups: int
) -> Level:
    """The level's buckets of the groups where it halves the events it stands for."""
    per_group = np.bincount(rec["group"], minlength=n_groups)
    stored = (per_group > 0) & (per_group * 2 <= events_le)
    keep = stored[rec["group"]]
    kept_group = rec["group"][keep]
    lo = np.searchsorted(kept_group, np.arange(n_groups), side="left")
    hi = np.searchsorted(kept_group, np.arange(n_groups), side="right")
    return Level(
        width=width,
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
