"""The `flows` route: the flow arrows (fwdbwd, async launches, user flows) with an end on
the chosen tracks in [t0, t1), each end bound to the event that encloses it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np

from ..model.errors import bounded
from .links import enclosing, flow_pairs, pairs_in_window
from .params import FlowsParams
from .workers import WorkerTrace, kept_json, select_tracks, time_range

DEFAULT_FLOW_LIMIT = 5_000


class FlowColumns(TypedDict):
    category: list[str]
    id: list[int]
    src_track: list[str]
    src_ts: list[float]
    src_row: list[int]
    src_depth: list[int]
    dst_track: list[str]
    dst_ts: list[float]
    dst_row: list[int]
    dst_depth: list[int]


class FlowsView(TypedDict):
    t0: float
    t1: float
    flows: FlowColumns
    count: int
    truncated: bool


def flows(workers: Sequence[WorkerTrace], params: FlowsParams) -> FlowsView:
    """The flows of the window asked (made anew: the route answers the JSON kept,
    `flows_kept`)."""
    t0, t1, limit = _flow_request(workers, params)
    return _flows(workers, params, t0, t1, limit)


def flows_kept(workers: Sequence[WorkerTrace], params: FlowsParams) -> bytes:
    """`flows`'s JSON (`kept_json`: the same window again is answered at once)."""
    t0, t1, limit = _flow_request(workers, params)
    request = (t0, t1, params.get("tracks") or "all", limit)
    return kept_json(workers, "flows", request, lambda: _flows(workers, params, t0, t1, limit))


def _flow_request(workers: Sequence[WorkerTrace], params: FlowsParams) -> tuple[float, float, int]:
    """The query's time range and arrow limit, defaults filled in."""
    t0, t1 = time_range(workers, params.get("t0"), params.get("t1"))
    return t0, t1, bounded(params.get("limit"), "limit", DEFAULT_FLOW_LIMIT, 1, 100_000)


def _flows(
    workers: Sequence[WorkerTrace], params: FlowsParams, t0: float, t1: float, limit: int
) -> FlowsView:
    selections = select_tracks(workers, params.get("tracks"))
    cols: dict[str, list[Any]] = {k: [] for k in FlowColumns.__annotations__}
    total = 0
    truncated = False
    for worker, sel in zip(workers, selections):
        model, index, off = worker.model, worker.index, worker.offset
        pairs = flow_pairs(model, index)
        room = max(limit - len(cols["id"]), 0)
        n_tracks = len(index.tracks)
        chosen, found = pairs_in_window(pairs, t0 - off, t1 - off, sel.slices, n_tracks, room)
        total += found
        truncated = truncated or found > room
        if chosen.size == 0:
            continue
        src = enclosing(model, index, pairs.src_track[chosen], pairs.src_ts[chosen])
        dst = enclosing(model, index, pairs.dst_track[chosen], pairs.dst_ts[chosen])
        # Names taken by numpy from object arrays: thousands of arrows in a wide window.
        ids = np.array([worker.qualify(t.id) for t in index.tracks], dtype=object)
        categories = np.array(model.categories, dtype=object)
        cols["category"] += categories[pairs.cat[chosen]].tolist()
        cols["id"] += pairs.flow_id[chosen].tolist()
        for side, bound in (("src", src), ("dst", dst)):
            track = pairs.src_track if side == "src" else pairs.dst_track
            ts = pairs.src_ts if side == "src" else pairs.dst_ts
            cols[f"{side}_track"] += ids[track[chosen]].tolist()
            cols[f"{side}_ts"] += (ts[chosen] + off).tolist()
            cols[f"{side}_row"] += np.where(
                bound >= 0, index.row[np.maximum(bound, 0)], -1
            ).tolist()
            cols[f"{side}_depth"] += np.where(
                bound >= 0, index.depth[np.maximum(bound, 0)], -1
            ).tolist()
    return {
        "t0": t0,
        "t1": t1,
        "flows": cols,  # type: ignore[typeddict-item]
        "count": total,
        "truncated": truncated,
    }
