"""The `trace` route: what of the chosen tracks is visible in [t0, t1) at `width` pixels:
exact events where they are wide enough, merged blocks where they are not (level of
detail), counter series, and a cap on the items in one answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, cast

import numpy as np

from ..analysis.core.health.view import row_checks
from ..model.errors import ViewParamError, bounded
from .counters import Counter, counter_series
from .json_columns import Parts, column_parts, list_parts
from .params import TraceParams
from .window import SliceWindow, query_slices
from .workers import (
    NameTable,
    Selection,
    WorkerTrace,
    kept_json,
    select_tracks,
    time_base,
    time_range,
)

DEFAULT_WIDTH = 1500
MAX_WIDTH = 20_000
DEFAULT_MAX_ITEMS = 20_000
MAX_ITEMS = 200_000

# Bits of `flags` of exact events. (An instant is never exact: it comes as a block of one,
# whose `row` names it.)
FLAG_LINKED = 2  # has a correlation id: a launch and its GPU activity (see `event`)
FLAG_STARTS_BEFORE = 4  # starts before t0
FLAG_ENDS_AFTER = 8  # ends after t1
FLAG_HEALTH = 16  # a `health` check flags it (the `event` route's `health` names which)


class WindowRequest(TypedDict):
    tracks: str | None
    t0: float | None
    t1: float | None
    width: int
    min_px: float
    max_items: int


def window_request(params: TraceParams) -> WindowRequest:
    """The decoded query with its defaults, widths and item counts in range."""
    min_px = params.get("min_px", 1.0)
    if not 0 < min_px <= 1000:
        raise ViewParamError(f"min_px must be in (0, 1000], not {min_px}")
    return {
        "tracks": params.get("tracks"),
        "t0": params.get("t0"),
        "t1": params.get("t1"),
        "width": bounded(params.get("width"), "width", DEFAULT_WIDTH, 1, MAX_WIDTH),
        "min_px": min_px,
        "max_items": bounded(params.get("max_items"), "max_items", DEFAULT_MAX_ITEMS, 1, MAX_ITEMS),
    }


class SliceColumns(TypedDict):
    row: list[int]
    name: list[int]
    start: list[float]
    dur: list[float]
    depth: list[int]
    flags: list[int]


class BlockColumns(TypedDict):
    row: list[int]  # the event's row when the block holds one event, else -1
    depth: list[int]
    start: list[float]
    end: list[float]
    count: list[int]
    busy: list[float]
    name: list[int]


class CounterSeries(TypedDict):
    start: list[float]
    value: list[float]


class TrackWindow(TypedDict):
    id: str
    worker: str | None
    events: SliceColumns | None
    blocks: BlockColumns | None
    counter: CounterSeries | None


class WindowView(TypedDict):
    time_base: str
    t0: float
    t1: float
    width: int
    min_px: float
    us_per_px: float
    exact_min_us: float
    bucket_us: float
    tracks: list[TrackWindow]
    names: list[str]
    item_count: int
    truncated: bool


def window(
    workers: Sequence[WorkerTrace], request: WindowRequest, parts: Parts = list_parts
) -> WindowView:
    """What of the chosen tracks is visible in [t0, t1) at `width` pixels. `parts` makes
    the columns' parts: lists, or for the route's JSON fragments (`column_parts`)."""
    t0, t1 = time_range(workers, request["t0"], request["t1"])
    width, min_px = request["width"], request["min_px"]
    resolution = min_px * (t1 - t0) / width
    selections = select_tracks(workers, request["tracks"])
    results: list[SliceWindow] = [
        query_slices(w.index, sel.slices, t0 - w.offset, t1 - w.offset, resolution)
        for w, sel in zip(workers, selections)
    ]
    keep_exact, keep_blocks, truncated = _cap(workers, results, request["max_items"])
    names = NameTable()
    out: list[TrackWindow] = []
    for worker, sel, res, ke, kb in zip(workers, selections, results, keep_exact, keep_blocks):
        out.extend(_track_windows(worker, sel, res, (ke, kb), names, (t0, t1, width), parts))
    bucket = min((r.bucket for r in results), default=resolution)
    return {
        "time_base": time_base(workers),
        "t0": t0,
        "t1": t1,
        "width": width,
        "min_px": min_px,
        "us_per_px": (t1 - t0) / width,
        "exact_min_us": resolution,
        "bucket_us": bucket,
        "tracks": out,
        "names": names.table,
        "item_count": int(sum(k.sum() for k in keep_exact) + sum(k.sum() for k in keep_blocks)),
        "truncated": truncated,
    }


def _cap(
    workers: Sequence[WorkerTrace], results: list[SliceWindow], max_items: int
) -> tuple[list[np.ndarray], list[np.ndarray], bool]:
    """Masks of the items kept: all of them, or the top rows first (then the longest)."""
    total = sum(r.n_items for r in results)
    keep_e = [np.ones(r.exact.size, dtype=bool) for r in results]
    keep_b = [np.ones(r.block_group.size, dtype=bool) for r in results]
    if total <= max_items:
        return keep_e, keep_b, False
    depth_parts, length_parts = [], []
    for w, r in zip(workers, results):
        idx = w.index
        depth_parts += [idx.depth[r.exact], idx.group_depth[r.block_group]]
        length_parts += [idx.end[r.exact] - idx.start[r.exact], r.block_end - r.block_start]
    depth = np.concatenate(depth_parts)
    length = np.concatenate(length_parts)
    chosen = np.zeros(depth.size, dtype=bool)
    chosen[np.lexsort((-length, depth))[:max_items]] = True
    at = 0
    for i, r in enumerate(results):
        keep_e[i] = chosen[at : at + r.exact.size]
        at += r.exact.size
        keep_b[i] = chosen[at : at + r.block_group.size]
        at += r.block_group.size
    return keep_e, keep_b, True


def _track_windows(
    worker: WorkerTrace,
    sel: Selection,
    res: SliceWindow,
    keep: tuple[np.ndarray, np.ndarray],
    names: NameTable,
    window: tuple[float, float, int],
    parts: Parts,
) -> list[TrackWindow]:
    t0, t1, width = window
    counters = [_counter_window(worker, c, t0, t1, width, parts) for c in sel.counters]
    out = [w for c, w in zip(sel.counters, counters) if not c.listed_last]
    # Exact events first, then blocks: the order in which their names enter the table.
    e_track, events = _exact_columns(worker, res.exact[keep[0]], names, t0, t1)
    b_track, blocks = _block_columns(worker, res, np.flatnonzero(keep[1]), names)
    event_parts = _cut_columns(events, _track_cuts(e_track, sel.slices), parts)
    block_parts = _cut_columns(blocks, _track_cuts(b_track, sel.slices), parts)
    for t, ev, bl in zip(sel.slices.tolist(), event_parts, block_parts):
        out.append(
            {
                "id": worker.qualify(worker.index.tracks[t].id),
                "worker": worker.name,
                "events": cast(SliceColumns, ev),
                "blocks": cast(BlockColumns, bl),
                "counter": None,
            }
        )
    out += [w for c, w in zip(sel.counters, counters) if c.listed_last]
    return out


def _counter_window(
    worker: WorkerTrace, counter: Counter, t0: float, t1: float, width: int, parts: Parts
) -> TrackWindow:
    off = worker.offset
    starts, values = counter_series(counter, t0 - off, t1 - off, width)
    whole = [(0, int(starts.size))]
    return {
        "id": worker.qualify(counter.id),
        "worker": worker.name,
        "events": None,
        "blocks": None,
        "counter": {"start": parts(starts + off, whole)[0], "value": parts(values, whole)[0]},
    }


Columns = dict[str, np.ndarray]


def _exact_columns(
    worker: WorkerTrace, exact: np.ndarray, names: NameTable, t0: float, t1: float
) -> tuple[np.ndarray, Columns]:
    """The exact events' columns (SliceColumns), ordered by track, and their tracks."""
    idx, off = worker.index, worker.offset
    rows, start, end = idx.row[exact], idx.start[exact], idx.end[exact]
    flags = np.where(worker.model.column_at("correlation", rows) >= 0, FLAG_LINKED, 0)
    flags |= np.where(start < t0 - off, FLAG_STARTS_BEFORE, 0)
    flags |= np.where(end > t1 - off, FLAG_ENDS_AFTER, 0)
    flags |= np.where(row_checks(worker.model)[rows] != 0, FLAG_HEALTH, 0)
    columns = {
        "row": rows,
        "name": names.remap(worker.model, idx.name[exact]),
        "start": start + off,
        "dur": end - start,
        "depth": idx.depth[exact],
        "flags": flags,
    }
    return idx.group_track[idx.group[exact]], columns


def _block_columns(
    worker: WorkerTrace, res: SliceWindow, chosen: np.ndarray, names: NameTable
) -> tuple[np.ndarray, Columns]:
    """The kept blocks' columns (BlockColumns), ordered by track, and their tracks."""
    idx, off = worker.index, worker.offset
    group = res.block_group[chosen]
    single = res.block_single[chosen]
    columns = {
        "row": np.where(single >= 0, idx.row[np.maximum(single, 0)], -1),
        "depth": idx.group_depth[group],
        "start": res.block_start[chosen] + off,
        "end": res.block_end[chosen] + off,
        "count": res.block_count[chosen],
        "busy": res.block_busy[chosen],
        "name": names.remap(worker.model, res.block_name[chosen]),
    }
    return idx.group_track[group], columns


def _track_cuts(item_track: np.ndarray, tracks: np.ndarray) -> list[tuple[int, int]]:
    """Per track of `tracks`, where its items begin and end (`item_track` sorted)."""
    lo = np.searchsorted(item_track, tracks, "left").tolist()
    return list(zip(lo, np.searchsorted(item_track, tracks, "right").tolist()))


def _cut_columns(
    columns: Columns, cuts: list[tuple[int, int]], parts: Parts
) -> list[dict[str, Any]]:
    """Per cut (a track), its part of every column."""
    per_column = {key: parts(values, cuts) for key, values in columns.items()}
    return [{key: cut[i] for key, cut in per_column.items()} for i in range(len(cuts))]


def trace(workers: Sequence[WorkerTrace], params: TraceParams) -> WindowView:
    """The window asked (made anew: the route answers the JSON kept, `trace_kept`)."""
    return window(workers, window_request(params))


def trace_kept(workers: Sequence[WorkerTrace], params: TraceParams) -> bytes:
    """`trace`'s JSON (`kept_json`: the same window again is answered at once)."""
    request = window_request(params)
    t0, t1 = time_range(workers, request["t0"], request["t1"])
    key = (*sorted({**request, "t0": t0, "t1": t1}.items()),)
    return kept_json(workers, "trace", key, lambda: window(workers, request, column_parts))
