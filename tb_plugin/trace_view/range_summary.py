"""The `range_summary` route: per name, the events of the chosen tracks that overlap
[t0, t1): how many, their time clipped to the range, and their self time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from ..analysis.core.common import unique_inverse
from ..model.errors import bounded
from ..model.trace_model import TraceModel
from .index import TimelineIndex
from .index_store import kept_on_disk, pack_fields, unpack_fields
from .params import RangeSummaryParams
from .range_sums import PerName, RangeSums, build_range_sums, range_per_name
from .workers import (
    Selection,
    WorkerTrace,
    kept_json,
    names_unique,
    select_tracks,
    time_range,
)


class RangeRow(TypedDict):
    name: str
    count: int
    total_us: float
    self_us: float


class RangeSummaryView(TypedDict):
    t0: float
    t1: float
    rows: list[RangeRow]
    event_count: int
    truncated: bool


def _children_time(index: TimelineIndex, pos: np.ndarray, clipped: np.ndarray) -> np.ndarray:
    """For each of `pos`: the clipped time of its children among `pos` (every child of a
    selected event overlaps the range too, so all of them are there)."""
    parent = index.parent[pos]
    has = parent >= 0
    if pos.size * 8 > len(index):  # a big selection: dense sums, no sort
        dense = np.bincount(parent[has], weights=clipped[has], minlength=len(index))
        return dense[pos]  # type: ignore[no-any-return]
    order = np.argsort(pos)
    sorted_pos = pos[order]
    at = np.searchsorted(sorted_pos, parent[has])
    at_c = np.minimum(at, pos.size - 1)
    found = sorted_pos[at_c] == parent[has]
    sums = np.bincount(order[at_c[found]], weights=clipped[has][found], minlength=pos.size)
    return sums  # type: ignore[no-any-return]


def range_summary(workers: Sequence[WorkerTrace], params: RangeSummaryParams) -> RangeSummaryView:
    """Per name, over the events of the chosen tracks overlapping [t0, t1): how many, their
    time clipped to the range, and their self time (minus their children's, clipped).
    Made anew: the route answers the JSON kept (`range_summary_kept`)."""
    t0, t1 = time_range(workers, params.get("t0"), params.get("t1"))
    limit = bounded(params.get("limit"), "limit", 500, 1, 100_000)
    return _summary(workers, select_tracks(workers, params.get("tracks")), t0, t1, limit)


def range_summary_kept(workers: Sequence[WorkerTrace], params: RangeSummaryParams) -> bytes:
    """`range_summary`'s JSON, kept (`kept_json`). Its cost follows the range's edges
    (`range_sums`), or on an irregular track the events in the range (a whole 4 GB
    trace: ~0.5 s of CPU)."""
    t0, t1 = time_range(workers, params.get("t0"), params.get("t1"))
    limit = bounded(params.get("limit"), "limit", 500, 1, 100_000)
    selections = select_tracks(workers, params.get("tracks"))
    request = (t0, t1, tuple(tuple(sel.slices.tolist()) for sel in selections), limit)

    def answer() -> RangeSummaryView:
        return _summary(workers, selections, t0, t1, limit)

    return kept_json(workers, "range_summary", request, answer)


def _summary(
    workers: Sequence[WorkerTrace], selections: list[Selection], t0: float, t1: float, limit: int
) -> RangeSummaryView:
    per_worker = [
        _worker_per_name(worker, sel, t0 - worker.offset, t1 - worker.offset)
        for worker, sel in zip(workers, selections)
    ]
    n_events = sum(int(per_name.count.sum()) for per_name in per_worker)
    if len(workers) == 1 and names_unique(workers[0].model):
        rows, n_names = _ranked_rows(workers[0].model, per_worker[0], limit)
    else:  # several models (their own name codes), or one naming two codes alike
        totals: dict[str, list[float]] = {}  # name: [count, total, self]
        for worker, per_name in zip(workers, per_worker):
            _add_totals(worker, per_name, totals)
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))
        rows = [
            {"name": n, "count": int(v[0]), "total_us": float(v[1]), "self_us": float(v[2])}
            for n, v in ranked[:limit]
        ]
        n_names = len(ranked)
    return {
        "t0": t0,
        "t1": t1,
        "rows": rows,
        "event_count": n_events,
        "truncated": n_names > limit,
    }


def _worker_per_name(worker: WorkerTrace, sel: Selection, a: float, b: float) -> PerName:
    """Per name, the events of one worker's chosen tracks overlapping [a, b) (file times)."""
    sums = range_sums(worker.model, worker.index)
    if sums.irregular[sel.slices].any() or _candidates(worker.index, a, b) <= FEW_EVENTS:
        return _per_name(worker, _overlapping(worker.index, sel.slices, a, b), a, b)
    return range_per_name(sums, worker.index, sel.slices, a, b)


def _name_order(model: TraceModel) -> np.ndarray:
    """Per name code, its place among the model's names in string order (kept)."""

    def build(m: TraceModel) -> np.ndarray:
        place = np.empty(len(m.names), dtype=np.int64)
        place[sorted(range(len(m.names)), key=m.names.__getitem__)] = np.arange(len(m.names))
        return place

    return model.derived("_name_order", build)  # type: ignore[no-any-return]


def _ranked_rows(model: TraceModel, per_name: PerName, limit: int) -> tuple[list[RangeRow], int]:
    """The rows of one model's names by most time, then name (as the several workers'
    totals are ranked), only the first `limit` made; and how many names there were. Sums
    start from +0.0, as the totals' accumulators do."""
    order = np.lexsort((_name_order(model)[per_name.code], -per_name.total))[:limit]
    names = model.names
    rows: list[RangeRow] = [
        {"name": names[code], "count": count, "total_us": total, "self_us": own}
        for code, count, total, own in zip(
            per_name.code[order].tolist(),
            per_name.count[order].tolist(),
            (per_name.total[order] + 0.0).tolist(),
            (per_name.self_time[order] + 0.0).tolist(),
        )
    ]
    return rows, int(per_name.code.size)


FEW_EVENTS = 4096  # a range with fewer candidates is summed event by event (cheaper)


def _candidate_span(index: TimelineIndex, a: float, b: float) -> tuple[int, int]:
    """The positions in start order `_overlapping` tests for [a, b): after every event
    ending by a, before the first starting at b."""
    first = int(np.searchsorted(index.by_start_endmax, a, side="right"))
    return first, max(first, int(np.searchsorted(index.by_start_ts, b, side="left")))


def _candidates(index: TimelineIndex, a: float, b: float) -> int:
    """How many events `_overlapping` would test for [a, b)."""
    first, stop = _candidate_span(index, a, b)
    return stop - first


def _overlapping(index: TimelineIndex, slices: np.ndarray, a: float, b: float) -> np.ndarray:
    """Index positions of the events on tracks `slices` that overlap [a, b) (file times)."""
    first, stop = _candidate_span(index, a, b)
    pos = index.by_start[first:stop]
    pos = pos[(index.end[pos] > a) | (index.start[pos] >= a)]
    on = np.zeros(len(index.tracks), dtype=bool)
    on[slices] = True
    return pos[on[index.group_track[index.group[pos]]]]  # type: ignore[no-any-return]


def range_sums(model: TraceModel, index: TimelineIndex) -> RangeSums:
    """The running sums of `range_per_name`, kept with the model and on disk beside it."""

    def kept() -> RangeSums:
        def build() -> RangeSums:
            return build_range_sums(index, len(model.names))

        return kept_on_disk(model, "timeline_range_sums", build, pack_fields, _unpack)

    return model.derived("_timeline_range_sums", lambda _: kept())  # type: ignore[no-any-return]


_unpack = unpack_fields(RangeSums)


def _per_name(worker: WorkerTrace, pos: np.ndarray, a: float, b: float) -> PerName:
    """Per name, event by event: the events at `pos` (those overlapping [a, b))."""
    model, index = worker.model, worker.index
    clipped = np.minimum(index.end[pos], b) - np.maximum(index.start[pos], a)
    clipped = np.maximum(clipped, 0.0)
    self_time = clipped - _children_time(index, pos, clipped)
    self_time = np.maximum(self_time, 0.0)
    codes = index.name[pos]
    if pos.size * 8 > len(index):  # many events: count by code, no sort
        uniq, inverse = np.arange(len(model.names)), codes
    else:
        uniq, inverse = unique_inverse(codes)  # np.unique's, codes marked not sorted
    count = np.bincount(inverse, minlength=uniq.size)
    total = np.bincount(inverse, weights=clipped, minlength=uniq.size)
    own = np.bincount(inverse, weights=self_time, minlength=uniq.size)
    used = np.flatnonzero(count)
    return PerName(uniq[used], count[used], total[used], own[used])


def _add_totals(worker: WorkerTrace, per_name: PerName, totals: dict[str, list[float]]) -> None:
    names = worker.model.names
    for code, c, t, s in zip(
        per_name.code.tolist(),
        per_name.count.tolist(),
        per_name.total.tolist(),
        per_name.self_time.tolist(),
    ):
        acc = totals.setdefault(names[code], [0, 0.0, 0.0])
        acc[0] += c
        acc[1] += t
        acc[2] += s
