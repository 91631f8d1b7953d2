"""The `search` route: events whose name contains the query (any case), by time, and
how many of each matching name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from ..model.errors import ViewParamError, bounded
from ..model.trace_model import TraceModel
from .params import SearchParams
from .workers import WorkerTrace, time_range

DEFAULT_SEARCH_LIMIT = 100


class NameCount(TypedDict):
    name: str
    count: int


class SearchHits(TypedDict):
    row: list[int]
    ts: list[float]
    dur: list[float]
    track: list[str]
    depth: list[int]
    name: list[int]  # index into `names`


class SearchView(TypedDict):
    query: str
    names: list[NameCount]
    hits: SearchHits
    total: int
    truncated: bool


def _lower_names(model: TraceModel) -> list[str]:
    return model.derived("_lower_names", lambda m: [n.lower() for n in m.names])


# (ts, row, dur, track, depth, name) of one hit
Hit = tuple[float, int, float, str, int, str]


def search(workers: Sequence[WorkerTrace], params: SearchParams) -> SearchView:
    """Events whose name contains `q` (any case), by time; counts per matching name."""
    query = (params.get("q") or "").strip()
    if not query:
        raise ViewParamError("missing parameter: q")
    limit = bounded(params.get("limit"), "limit", DEFAULT_SEARCH_LIMIT, 1, 10_000)
    t0, t1 = time_range(workers, params.get("t0"), params.get("t1"))
    counts: dict[str, int] = {}
    hits: list[Hit] = []
    total = 0
    for worker in workers:
        match = _matches(worker, query.lower(), t0, t1)
        total += int(match.size)
        _count_names(worker.model, worker.index.name[match], counts)
        hits += [_hit(worker, p) for p in match[:limit].tolist()]
    hits.sort(key=lambda h: h[0])
    hits = hits[:limit]
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    name_index = {name: i for i, (name, _) in enumerate(ranked)}
    return {
        "query": query,
        "names": [{"name": n, "count": c} for n, c in ranked],
        "hits": {
            "row": [h[1] for h in hits],
            "ts": [h[0] for h in hits],
            "dur": [h[2] for h in hits],
            "track": [h[3] for h in hits],
            "depth": [h[4] for h in hits],
            "name": [name_index[h[5]] for h in hits],
        },
        "total": total,
        "truncated": total > len(hits),
    }


def _matches(worker: WorkerTrace, needle: str, t0: float, t1: float) -> np.ndarray:
    """Index positions of the worker's events named with `needle` starting in [t0, t1)."""
    index, off = worker.index, worker.offset
    lower = _lower_names(worker.model)
    codes = np.array([i for i, n in enumerate(lower) if needle in n], dtype=np.int64)
    if codes.size == 0:
        return codes
    lo = int(np.searchsorted(index.by_start_ts, t0 - off, side="left"))
    hi = int(np.searchsorted(index.by_start_ts, t1 - off, side="left"))
    window_pos = index.by_start[lo:hi]
    return window_pos[np.isin(index.name[window_pos], codes)]  # type: ignore[no-any-return]


def _count_names(model: TraceModel, codes: np.ndarray, counts: dict[str, int]) -> None:
    per_name = np.bincount(codes, minlength=len(model.names))
    for code in np.flatnonzero(per_name).tolist():
        name = model.names[code]
        counts[name] = counts.get(name, 0) + int(per_name[code])


def _hit(worker: WorkerTrace, pos: int) -> Hit:
    index = worker.index
    return (
        float(index.start[pos]) + worker.offset,
        int(index.row[pos]),
        float(index.end[pos] - index.start[pos]),
        worker.track_of(pos),
        int(index.depth[pos]),
        worker.model.names[index.name[pos]],
    )
