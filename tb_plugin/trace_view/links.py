"""Links between events: flow arrows, launches (correlation), ops (External id), and
forward → backward (`fwdbwd` flows, else `Sequence number` args).

Built lazily, the first time an event's details or a window's arrows are asked for, and
kept with the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analysis.core.common import unique_inverse
from ..analysis.core.host_ranges import HostRanges, build_ranges
from ..model.categories import GPU_ACTIVITY_KINDS, LAUNCH_KINDS, Kind, Phase
from ..model.trace_model import TraceModel
from .index import TimelineIndex
from .index_store import kept_on_disk, pack_fields, unpack_fields
from .tracks import LANE_MAIN, LANE_PYTHON


def _extra(model: TraceModel, name: str, build: Any) -> Any:
    """A part of the trace view's index built on first use and kept with the model (its
    one memo, counted in the store's memory budget)."""
    return model.derived(f"_timeline_{name}", lambda _: build())


# --- tracks of (pid, tid) ----------------------------------------------------------


def track_lookup(model: TraceModel, index: TimelineIndex) -> dict[tuple[str, str, int], int]:
    def build() -> dict[tuple[str, str, int], int]:
        return {(str(t.pid), str(t.tid), t.lane): t.index for t in index.tracks}

    return _extra(model, "track_lookup", build)  # type: ignore[no-any-return]


def tracks_of_rows(model: TraceModel, index: TimelineIndex, rows: np.ndarray) -> np.ndarray:
    """Slice track (operators' lane, else Python's) of each row's pid/tid; -1 if none."""
    lookup = track_lookup(model, index)
    ev = model.events
    pid, tid = ev["pid"][rows].astype(np.int64), ev["tid"][rows].astype(np.int64)
    n_tids = max(len(model.tids), 1)
    uniq, inverse = unique_inverse(pid * n_tids + tid)
    table = np.full(uniq.size, -1, dtype=np.int64)
    for i, k in enumerate(uniq.tolist()):
        p, t = str(model.pids[k // n_tids]), str(model.tids[k % n_tids])
        table[i] = lookup.get((p, t, LANE_MAIN), lookup.get((p, t, LANE_PYTHON), -1))
    return table[inverse]


def track_ranges(model: TraceModel, index: TimelineIndex) -> HostRanges:
    """The trace view's slices as host ranges keyed by their track (host_ranges.py); kept
    on disk beside the index."""

    def build() -> HostRanges:
        rows = np.sort(index.row)  # file order breaks ties, as the depth sweep's
        track = index.group_track[index.group[index.row_pos[rows]]]
        return build_ranges(model, rows, thread=track)

    def kept() -> HostRanges:
        return kept_on_disk(
            model, "timeline_track_ranges", build, pack_fields, unpack_fields(HostRanges)
        )

    return _extra(model, "track_ranges", kept)  # type: ignore[no-any-return]


def enclosing(
    model: TraceModel, index: TimelineIndex, tracks: np.ndarray, ts: np.ndarray
) -> np.ndarray:
    """Position of the innermost event of `tracks[i]` whose span contains `ts[i]`, closed
    (the slice a flow end binds to), or -1: the host-range rule, on the track's slices."""
    ranges = track_ranges(model, index)
    found = ranges.containing(
        np.asarray(tracks, dtype=np.int64), np.asarray(ts, dtype=np.float64), closed=True
    )
    return np.where(found >= 0, index.row_pos[ranges.rows[np.maximum(found, 0)]], -1)


# --- flow arrows ---------------------------------------------------------------------


@dataclass
class FlowPairs:
    """One arrow per flow end matched to its start (same category and id), sorted by
    the earlier of the two times."""

    cat: np.ndarray
    flow_id: np.ndarray
    src_track: np.ndarray
    src_ts: np.ndarray
    dst_track: np.ndarray
    dst_ts: np.ndarray
    lo: np.ndarray
    hi_max: np.ndarray  # running max of the later time (window search)
    hi: np.ndarray
    # Endpoints per track, sorted by (track, ts): for an event's own flows.
    point_track: np.ndarray
    point_ts: np.ndarray
    point_pair: np.ndarray
    point_is_src: np.ndarray

    def __len__(self) -> int:
        return int(self.cat.size)


def flow_pairs(model: TraceModel, index: TimelineIndex) -> FlowPairs:
    """The flow arrows, kept on disk beside the index."""

    def build() -> FlowPairs:
        return _build_flow_pairs(model, index)

    def kept() -> FlowPairs:
        return kept_on_disk(
            model, "timeline_flow_pairs", build, pack_fields, unpack_fields(FlowPairs)
        )

    return _extra(model, "flow_pairs", kept)  # type: ignore[no-any-return]


def _build_flow_pairs(model: TraceModel, index: TimelineIndex) -> FlowPairs:
    ev = model.events
    flows = np.flatnonzero((ev["kind"] == Kind.FLOW) & np.isfinite(ev["ts"]))
    ph = ev["ph"][flows]
    starts = flows[(ph == Phase.FLOW_START)]
    ends = flows[(ph == Phase.FLOW_END) | (ph == Phase.FLOW_STEP)]
    cat_bits = max(len(model.categories), 1)

    def key(rows: np.ndarray) -> np.ndarray:
        return model.column_at("flow_id", rows).astype(np.int64) * cat_bits + ev["cat"][rows]

    s_key = key(starts)
    order = np.argsort(s_key, kind="stable")
    starts, s_key = starts[order], s_key[order]
    e_key = key(ends)
    at = np.searchsorted(s_key, e_key)
    at_c = np.minimum(at, max(s_key.size - 1, 0))
    matched = (s_key.size > 0) & (at < s_key.size)
    if s_key.size:
        matched &= s_key[at_c] == e_key
    src, dst = starts[at_c[matched]], ends[matched]
    src_track = tracks_of_rows(model, index, src)
    dst_track = tracks_of_rows(model, index, dst)
    ok = (src_track >= 0) & (dst_track >= 0)
    src, dst, src_track, dst_track = src[ok], dst[ok], src_track[ok], dst_track[ok]
    src_ts, dst_ts = ev["ts"][src].astype(np.float64), ev["ts"][dst].astype(np.float64)
    lo, hi = np.minimum(src_ts, dst_ts), np.maximum(src_ts, dst_ts)
    order = np.argsort(lo, kind="stable")
    cat = ev["cat"][src][order].astype(np.int64)
    pairs = np.arange(order.size)
    p_track = np.concatenate([src_track[order], dst_track[order]])
    p_ts = np.concatenate([src_ts[order], dst_ts[order]])
    p_pair = np.concatenate([pairs, pairs])
    p_src = np.concatenate([np.ones(pairs.size, bool), np.zeros(pairs.size, bool)])
    p_order = np.lexsort((p_ts, p_track))
    return FlowPairs(
        cat=cat,
        flow_id=model.column_at("flow_id", src[order]).astype(np.int64),
        src_track=src_track[order],
        src_ts=src_ts[order],
        dst_track=dst_track[order],
        dst_ts=dst_ts[order],
        lo=lo[order],
        hi=hi[order],
        hi_max=np.maximum.accumulate(hi[order]) if order.size else hi,
        point_track=p_track[p_order],
        point_ts=p_ts[p_order],
        point_pair=p_pair[p_order],
        point_is_src=p_src[p_order],
    )


def pairs_in_window(
    pairs: FlowPairs, t0: float, t1: float, tracks: np.ndarray, n_tracks: int, limit: int
) -> tuple[np.ndarray, int]:
    """The first `limit` arrows (by start time) with a part in [t0, t1] and an end on one
    of `tracks` (of `n_tracks`), and how many there are in all. An arrow starting at or
    after t0 reaches into the window, so only those starting before it are tested, and
    with every track chosen none is tested for its tracks (a whole 4 GB trace's window
    holds millions of arrows)."""
    first = int(np.searchsorted(pairs.hi_max, t0, side="left"))
    inside = int(np.searchsorted(pairs.lo, t0, side="left"))
    last = max(first, int(np.searchsorted(pairs.lo, t1, side="right")))
    inside = min(max(inside, first), last)
    early = np.arange(first, inside)
    early = early[pairs.hi[early] >= t0]
    on = np.zeros(n_tracks, dtype=bool)
    on[tracks] = True
    if on.all():
        chosen = np.concatenate([early, np.arange(inside, min(last, inside + limit))])
        return chosen[:limit], int(early.size + last - inside)
    cand = np.concatenate([early, np.arange(inside, last)])
    cand = cand[on[pairs.src_track[cand]] | on[pairs.dst_track[cand]]]
    return cand[:limit], int(cand.size)


def flows_of_event(model: TraceModel, index: TimelineIndex, pos: int) -> list[tuple[int, bool]]:
    """(pair, event is the arrow's source) of the flow ends bound to the event at `pos`."""
    pairs = flow_pairs(model, index)
    track = int(index.group_track[index.group[pos]])
    start, end = float(index.start[pos]), float(index.end[pos])
    lo = int(np.searchsorted(pairs.point_track, track, side="left"))
    hi = int(np.searchsorted(pairs.point_track, track, side="right"))
    a = lo + int(np.searchsorted(pairs.point_ts[lo:hi], start, side="left"))
    b = lo + int(np.searchsorted(pairs.point_ts[lo:hi], end, side="right"))
    if b <= a:
        return []
    bound = enclosing(model, index, np.full(b - a, track), pairs.point_ts[a:b])
    mine = np.flatnonzero(bound == pos) + a
    return [(int(pairs.point_pair[i]), bool(pairs.point_is_src[i])) for i in mine.tolist()]


# --- correlation and External id ------------------------------------------------------


@dataclass
class Lookup:
    """Rows sorted by a key column, for `rows_with(key)`."""

    keys: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray, rows: np.ndarray) -> Lookup:
        """`rows` by their `keys` (a key per row), those with none (-1) left out."""
        keep = keys >= 0
        rows, keys = rows[keep], keys[keep]
        order = np.argsort(keys, kind="stable")
        return cls(keys[order], rows[order])

    def rows_with(self, key: int, limit: int = 1000) -> np.ndarray:
        if key < 0:
            return self.rows[:0]
        lo = int(np.searchsorted(self.keys, key, side="left"))
        hi = int(np.searchsorted(self.keys, key, side="right"))
        return self.rows[lo : min(hi, lo + limit)]


@dataclass
class Links:
    gpu_by_correlation: Lookup
    gpu_by_external: Lookup
    launch_by_correlation: Lookup
    op_by_external: Lookup


def links(model: TraceModel, index: TimelineIndex) -> Links:
    def build() -> Links:
        gpu = model.complete_rows(*GPU_ACTIVITY_KINDS)
        launches = model.complete_rows(*LAUNCH_KINDS)
        ops = model.complete_rows(Kind.CPU_OP, Kind.USER_ANNOTATION)
        return Links(
            Lookup.of(model.column_at("correlation", gpu), gpu),
            Lookup.of(model.column_at("external_id", gpu), gpu),
            Lookup.of(model.column_at("correlation", launches), launches),
            Lookup.of(model.column_at("external_id", ops), ops),
        )

    return _extra(model, "links", build)  # type: ignore[no-any-return]


# --- Sequence number (forward ↔ backward without fwdbwd flows) ------------------------


_SEQUENCE = re.compile(rb'"Sequence number"\s*:\s*(-?\d+)')
_FWD_THREAD = re.compile(rb'"Fwd thread id"\s*:\s*(\d+)')


@dataclass
class Sequences:
    rows: np.ndarray  # CPU op rows with a sequence number, sorted by (number, ts)
    numbers: np.ndarray
    backward: np.ndarray  # `Fwd thread id` > 0: runs in the backward pass (2021 traces
    # write `Fwd thread id: 0` on forward ops)
    ts: np.ndarray


def _rows_at(model: TraceModel, offsets: list[int]) -> np.ndarray:
    """Rows whose raw args hold these byte offsets of the args blob."""
    ends = model.events["args_end"]
    return np.searchsorted(ends, np.array(offsets, dtype=np.int64), side="right")


def sequences(model: TraceModel, index: TimelineIndex) -> Sequences:
    def build() -> Sequences:
        # One regex pass over the raw args (memory-mapped) instead of decoding the args
        # of every operator: 0.7 s instead of 2.3 s on a 1 GB trace.
        offsets, numbers = [], []
        for offset, match in model.scan_args(_SEQUENCE):
            offsets.append(offset)
            numbers.append(int(match.group(1)))
        rows = _rows_at(model, offsets)
        backward_rows = _rows_at(
            model, [offset for offset, m in model.scan_args(_FWD_THREAD) if int(m.group(1)) > 0]
        )
        nums = np.array(numbers, dtype=np.int64)
        keep = (rows < len(model)) & (nums >= 0)
        rows, nums = rows[keep], nums[keep]
        keep = model.events["kind"][rows] == Kind.CPU_OP
        rows, nums = rows[keep], nums[keep]
        backward = np.isin(rows, backward_rows)
        ts = model.events["ts"][rows]
        order = np.lexsort((ts, nums))
        return Sequences(rows[order], nums[order], backward[order], ts[order])

    return _extra(model, "sequences", build)  # type: ignore[no-any-return]


def sequence_partner(
    model: TraceModel, index: TimelineIndex, number: int, backward: bool, ts: float
) -> int:
    """Forward op ↔ its backward op, matched by `Sequence number`: for a forward op the
    first backward op after it, for a backward op the last forward op before it; -1."""
    seq = sequences(model, index)
    lo = int(np.searchsorted(seq.numbers, number, side="left"))
    hi = int(np.searchsorted(seq.numbers, number, side="right"))
    same = np.arange(lo, hi)
    other = same[seq.backward[same] != backward]
    if backward:
        other = other[seq.ts[other] <= ts]
        return int(seq.rows[other[-1]]) if other.size else -1
    other = other[seq.ts[other] >= ts]
    return int(seq.rows[other[0]]) if other.size else -1
