"""The `flows` route: the flow arrows (fwdbwd, async launches, user flows) with an end on
the chosen tracks in [t0, t1), each end bound to the event that encloses it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np

from ..model.errors import bounded
from .json_columns import Parts, column_parts, list_parts
from .links import enclosing, flow_pairs, pairs_in_window
from .params import FlowsParams
from .workers import WorkerTrace, kept_json, select_tracks, time_range

DEFAULT_FLOW_LIMIT = 5_000
TEXT_COLUMNS = ("category", "src_track", "dst_track")
NUMBER_COLUMNS = ("id", "src_ts", "src_row", "src_depth", "dst_ts", "dst_row", "dst_depth")


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
    return kept_json(
        workers, "flows", request, lambda: _flows(workers, params, t0, t1, limit, column_parts)
    )


def _flow_request(workers: Sequence[WorkerTrace], params: FlowsParams) -> tuple[float, float, int]:
    """The query's time range and arrow limit, defaults filled in."""
    t0, t1 = time_range(workers, params.get("t0"), params.get("t1"))
    return t0, t1, bounded(params.get("limit"), "limit", DEFAULT_FLOW_LIMIT, 1, 100_000)


def _flows(
    workers: Sequence[WorkerTrace],
    params: FlowsParams,
    t0: float,
    t1: float,
    limit: int,
    parts: Parts = list_parts,
) -> FlowsView:
    """The arrows of the window. `parts` makes each numeric column as the answer holds it:
    a list, or for the route a JSON fragment (`json_columns.column_parts`)."""
    selections = select_tracks(workers, params.get("tracks"))
    texts: dict[str, list[str]] = {k: [] for k in TEXT_COLUMNS}
    numbers: dict[str, list[np.ndarray]] = {k: [] for k in NUMBER_COLUMNS}
    total, chosen_count = 0, 0
    truncated = False
    for worker, sel in zip(workers, selections):
        model, index, off = worker.model, worker.index, worker.offset
        pairs = flow_pairs(model, index)
        room = max(limit - chosen_count, 0)
        n_tracks = len(index.tracks)
        chosen, found = pairs_in_window(pairs, t0 - off, t1 - off, sel.slices, n_tracks, room)
        total += found
        truncated = truncated or found > room
        if chosen.size == 0:
            continue
        chosen_count += int(chosen.size)
        # Names taken by numpy from object arrays: thousands of arrows in a wide window.
        ids = np.array([worker.qualify(t.id) for t in index.tracks], dtype=object)
        categories = np.array(model.categories, dtype=object)
        texts["category"] += categories[pairs.cat[chosen]].tolist()
        numbers["id"].append(pairs.flow_id[chosen])
        for side in ("src", "dst"):
            track = pairs.src_track if side == "src" else pairs.dst_track
            ts = pairs.src_ts if side == "src" else pairs.dst_ts
            bound = enclosing(model, index, track[chosen], ts[chosen])
            texts[f"{side}_track"] += ids[track[chosen]].tolist()
            numbers[f"{side}_ts"].append(ts[chosen] + off)
            numbers[f"{side}_row"].append(np.where(bound >= 0, index.row[np.maximum(bound, 0)], -1))
            numbers[f"{side}_depth"].append(
                np.where(bound >= 0, index.depth[np.maximum(bound, 0)], -1)
            )
    whole = [(0, chosen_count)]
    cols: dict[str, Any] = {}
    for key in FlowColumns.__annotations__:  # the answer's order of columns
        if key in texts:
            cols[key] = texts[key]
        elif len({a.dtype.kind for a in numbers[key]}) > 1:  # ints beside floats: as lists
            cols[key] = [v for a in numbers[key] for v in a.tolist()]
        else:
            column = np.concatenate(numbers[key]) if numbers[key] else np.zeros(0, np.int64)
            cols[key] = parts(column, whole)[0]
    return {
        "t0": t0,
        "t1": t1,
        "flows": cols,  # type: ignore[typeddict-item]
        "count": total,
        "truncated": truncated,
    }
