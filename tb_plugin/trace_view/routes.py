"""The trace view's routes as pure functions: (workers, request parameters) → TypedDict.

A route handler only finds the workers' models and calls one of `ROUTES`; everything
else (parameter parsing, time alignment, level of detail, JSON shapes) is here. Several
workers of one run share one absolute time axis (epoch µs, `model.time_origin_us` added);
one worker alone keeps the file's own times. docs/http_api.md has the shapes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import msgspec
import numpy as np

from ..analysis.ranks import ORDER, assign_ranks, header_rank
from ..analysis.steps import find_steps
from ..api.requests import ViewParamError, integer, number
from ..ingest.naming import name_rank
from ..store.categories import GPU_ACTIVITY_KINDS, LAUNCH_KINDS, Kind, Phase
from ..store.model import TraceModel
from .counters import Counter, build_counters, counter_series
from .index import TimelineIndex, index_of
from .links import (
    enclosing,
    flow_pairs,
    flows_of_event,
    links,
    pairs_in_window,
    sequence_partner,
    track_lookup,
)
from .tracks import LANE_PYTHON
from .window import SliceWindow, query_slices

Params = Mapping[str, str]

DEFAULT_WIDTH = 1500
MAX_WIDTH = 20_000
DEFAULT_MAX_ITEMS = 20_000
MAX_ITEMS = 200_000
DEFAULT_FLOW_LIMIT = 5_000
DEFAULT_SEARCH_LIMIT = 100

# Bits of `flags` of exact events. (An instant is never exact: it comes as a block of one,
# whose `row` names it.)
FLAG_LINKED = 2  # has a correlation id: a launch and its GPU activity (see `event`)
FLAG_STARTS_BEFORE = 4  # starts before t0
FLAG_ENDS_AFTER = 8  # ends after t1


class TimelineNotFound(LookupError):
    """An unknown track, row or worker (HTTP 404)."""


@dataclass(frozen=True)
class WorkerTrace:
    """One worker's model in a request. `name` is None for a single-worker request
    (plain track ids, file times); with names, ids are `worker:id` and times epoch µs."""

    name: str | None
    model: TraceModel

    @property
    def index(self) -> TimelineIndex:
        return index_of(self.model)

    @property
    def offset(self) -> float:
        return self.model.time_origin_us if self.name is not None else 0.0

    def qualify(self, local: str) -> str:
        return local if self.name is None else f"{self.name}:{local}"


def counters_of(worker: WorkerTrace) -> list[Counter]:
    return worker.model.derived("_timeline_counters", build_counters)


# --- parameters ----------------------------------------------------------------------


def _extent(workers: Sequence[WorkerTrace]) -> tuple[float, float]:
    lo = min((w.index.t_min + w.offset for w in workers if len(w.index)), default=0.0)
    hi = max((w.index.t_max + w.offset for w in workers if len(w.index)), default=0.0)
    return lo, max(hi, lo)


def _range(workers: Sequence[WorkerTrace], params: Params) -> tuple[float, float]:
    lo, hi = _extent(workers)
    t0 = number(params, "t0", lo)
    t1 = number(params, "t1", hi + 1.0)  # + 1: the last instant is inside
    assert t0 is not None and t1 is not None
    if not t1 > t0:
        raise ViewParamError(f"t1 ({t1}) must be after t0 ({t0})")
    return t0, t1


@dataclass
class Selection:
    slices: np.ndarray  # slice track indices
    counters: list[Counter]


def _select(workers: Sequence[WorkerTrace], text: str | None) -> list[Selection]:
    """`tracks`: a comma list of ids (`worker:id` for several workers), or all."""
    if not text or text == "all":
        return [Selection(np.arange(len(w.index.tracks)), counters_of(w)) for w in workers]
    wanted: list[tuple[list[int], list[Counter]]] = [([], []) for _ in workers]
    by_name = {w.name: i for i, w in enumerate(workers)}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        which = 0
        local = item
        if workers[0].name is not None:
            worker_name, sep, local = item.rpartition(":")
            if not sep or worker_name not in by_name:
                raise TimelineNotFound(f"no track {item!r} (ids are worker:track)")
            which = by_name[worker_name]
        worker = workers[which]
        n = len(worker.index.tracks)
        if local.startswith("t") and local[1:].isdigit() and int(local[1:]) < n:
            wanted[which][0].append(int(local[1:]))
            continue
        counter = next((c for c in counters_of(worker) if c.id == local), None)
        if counter is None:
            raise TimelineNotFound(f"no track {item!r}")
        wanted[which][1].append(counter)
    return [Selection(np.array(sorted(set(s)), dtype=np.int64), c) for s, c in wanted]


class _Names:
    """The response's own name table: models of several workers have their own codes."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self.index: dict[str, int] = {}

    def remap(self, model: TraceModel, codes: np.ndarray) -> np.ndarray:
        if codes.size == 0:
            return codes.astype(np.int64)
        uniq, inverse = np.unique(codes, return_inverse=True)
        local = np.empty(uniq.size, dtype=np.int64)
        for i, code in enumerate(uniq.tolist()):
            name = model.names[code] if 0 <= code < len(model.names) else ""
            found = self.index.get(name)
            if found is None:
                found = len(self.table)
                self.index[name] = found
                self.table.append(name)
            local[i] = found
        return local[inverse.reshape(-1)]


# --- tracks --------------------------------------------------------------------------


class CounterInfo(TypedDict):
    metric: str
    unit: str
    max: float


class TrackView(TypedDict):
    id: str
    worker: str | None
    kind: str
    label: str
    process: str
    pid: str | None
    tid: str | None
    device: int | None
    stream: int | None
    sort: int
    max_depth: int
    event_count: int
    counter: CounterInfo | None


class WorkerInfo(TypedDict):
    worker: str | None
    rank: int | None
    offset_us: float
    start_us: float
    end_us: float
    index_seconds: float


class StepMarker(TypedDict):
    worker: str | None
    name: str
    start_us: float
    end_us: float


class TracksView(TypedDict):
    time_base: str
    start_us: float
    end_us: float
    workers: list[WorkerInfo]
    tracks: list[TrackView]
    steps: list[StepMarker]


def _ranks(workers: Sequence[WorkerTrace]) -> list[int | None]:
    """Each worker's rank by the rule of the distributed view (none for a single file
    without a stated rank, and none where only worker order would number it)."""
    stated = [
        (header_rank(w.model.header), name_rank(w.name or "", _file_name(w.model))) for w in workers
    ]
    ranks, sources, _ = assign_ranks(stated)
    return [r if source != ORDER else None for r, source in zip(ranks, sources)]


def _file_name(model: TraceModel) -> str:
    return os.path.basename(str(model.source.get("path", "")))


def _prefix(worker: WorkerTrace, rank: int | None) -> str:
    if worker.name is None:
        return ""
    return f"rank {rank} · " if rank is not None else f"{worker.name} · "


def tracks(workers: Sequence[WorkerTrace], params: Params) -> TracksView:
    out: list[TrackView] = []
    infos: list[WorkerInfo] = []
    steps: list[StepMarker] = []
    for worker, rank in zip(workers, _ranks(workers)):
        index = worker.index
        prefix = _prefix(worker, rank)
        for counter in counters_of(worker):
            out.append(
                {
                    "id": worker.qualify(counter.id),
                    "worker": worker.name,
                    "kind": "counter",
                    "label": prefix + counter.label,
                    "process": "",
                    "pid": None,
                    "tid": None,
                    "device": counter.device,
                    "stream": None,
                    "sort": len(out),
                    "max_depth": 0,
                    "event_count": 0 if counter.times is None else int(counter.times.size),
                    "counter": {
                        "metric": counter.metric,
                        "unit": counter.unit,
                        "max": counter.max_value,
                    },
                }
            )
        for track in index.tracks:
            out.append(
                {
                    "id": worker.qualify(track.id),
                    "worker": worker.name,
                    "kind": track.kind,
                    "label": prefix + track.label,
                    "process": prefix + track.process,
                    "pid": str(track.pid),
                    "tid": str(track.tid),
                    "device": track.device,
                    "stream": track.stream,
                    "sort": len(out),
                    "max_depth": int(index.track_max_depth[track.index]),
                    "event_count": int(index.track_count[track.index]),
                    "counter": None,
                }
            )
        infos.append(
            {
                "worker": worker.name,
                "rank": rank,
                "offset_us": worker.offset,
                "start_us": index.t_min + worker.offset,
                "end_us": index.t_max + worker.offset,
                "index_seconds": round(index.build_seconds, 3),
            }
        )
        try:
            found = find_steps(worker.model)
        except Exception:  # noqa: BLE001 - markers are a nicety; the tracks still load
            continue
        for name, start, end in zip(found.names, found.starts.tolist(), found.ends.tolist()):
            steps.append(
                {
                    "worker": worker.name,
                    "name": name,
                    "start_us": start + worker.offset,
                    "end_us": end + worker.offset,
                }
            )
    lo, hi = _extent(workers)
    return {
        "time_base": "file" if workers[0].name is None else "epoch",
        "start_us": lo,
        "end_us": hi,
        "workers": infos,
        "tracks": out,
        "steps": steps,
    }


# --- trace window -------------------------------------------------------------------


class WindowRequest(TypedDict):
    tracks: str | None
    t0: float | None
    t1: float | None
    width: int
    min_px: float
    max_items: int


def parse_window_request(params: Params) -> WindowRequest:
    min_px = number(params, "min_px", 1.0)
    assert min_px is not None
    if not 0 < min_px <= 1000:
        raise ViewParamError(f"min_px must be in (0, 1000], not {min_px}")
    return {
        "tracks": params.get("tracks"),
        "t0": number(params, "t0"),
        "t1": number(params, "t1"),
        "width": integer(params, "width", DEFAULT_WIDTH, 1, MAX_WIDTH),
        "min_px": min_px,
        "max_items": integer(params, "max_items", DEFAULT_MAX_ITEMS, 1, MAX_ITEMS),
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


def window(workers: Sequence[WorkerTrace], request: WindowRequest) -> WindowView:
    """What of the chosen tracks is visible in [t0, t1) at `width` pixels."""
    lo, hi = _extent(workers)
    t0 = request["t0"] if request["t0"] is not None else lo
    t1 = request["t1"] if request["t1"] is not None else hi + 1.0
    if not t1 > t0:
        raise ViewParamError(f"t1 ({t1}) must be after t0 ({t0})")
    width, min_px = request["width"], request["min_px"]
    resolution = min_px * (t1 - t0) / width
    selections = _select(workers, request["tracks"])
    results: list[SliceWindow] = [
        query_slices(w.index, sel.slices, t0 - w.offset, t1 - w.offset, resolution)
        for w, sel in zip(workers, selections)
    ]
    keep_exact, keep_blocks, truncated = _cap(workers, results, request["max_items"])
    names = _Names()
    out: list[TrackWindow] = []
    for worker, sel, res, ke, kb in zip(workers, selections, results, keep_exact, keep_blocks):
        out.extend(_track_windows(worker, sel, res, ke, kb, names, t0, t1, width))
    bucket = min((r.bucket for r in results), default=resolution)
    return {
        "time_base": "file" if workers[0].name is None else "epoch",
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
    keep_e: np.ndarray,
    keep_b: np.ndarray,
    names: _Names,
    t0: float,
    t1: float,
    width: int,
) -> list[TrackWindow]:
    idx, model, off = worker.index, worker.model, worker.offset
    out: list[TrackWindow] = []
    for counter in sel.counters:
        starts, values = counter_series(counter, t0 - off, t1 - off, width)
        out.append(
            {
                "id": worker.qualify(counter.id),
                "worker": worker.name,
                "events": None,
                "blocks": None,
                "counter": {"start": (starts + off).tolist(), "value": values.tolist()},
            }
        )
    exact = res.exact[keep_e]
    e_track = idx.group_track[idx.group[exact]]
    rows = idx.row[exact]
    start = idx.start[exact]
    end = idx.end[exact]
    ev = model.events
    flags = np.where(ev["correlation"][rows] >= 0, FLAG_LINKED, 0)
    flags |= np.where(start < t0 - off, FLAG_STARTS_BEFORE, 0)
    flags |= np.where(end > t1 - off, FLAG_ENDS_AFTER, 0)
    e_names = names.remap(model, idx.name[exact])
    b_sel = np.flatnonzero(keep_b)
    b_group = res.block_group[b_sel]
    b_track = idx.group_track[b_group]
    b_names = names.remap(model, res.block_name[b_sel])
    b_single = res.block_single[b_sel]
    b_rows = np.where(b_single >= 0, idx.row[np.maximum(b_single, 0)], -1)
    for t in sel.slices.tolist():
        ea, eb = np.searchsorted(e_track, t, "left"), np.searchsorted(e_track, t, "right")
        ba, bb = np.searchsorted(b_track, t, "left"), np.searchsorted(b_track, t, "right")
        out.append(
            {
                "id": worker.qualify(idx.tracks[t].id),
                "worker": worker.name,
                "events": {
                    "row": rows[ea:eb].tolist(),
                    "name": e_names[ea:eb].tolist(),
                    "start": (start[ea:eb] + off).tolist(),
                    "dur": (end[ea:eb] - start[ea:eb]).tolist(),
                    "depth": idx.depth[exact[ea:eb]].tolist(),
                    "flags": flags[ea:eb].tolist(),
                },
                "blocks": {
                    "row": b_rows[ba:bb].tolist(),
                    "depth": idx.group_depth[b_group[ba:bb]].tolist(),
                    "start": (res.block_start[b_sel[ba:bb]] + off).tolist(),
                    "end": (res.block_end[b_sel[ba:bb]] + off).tolist(),
                    "count": res.block_count[b_sel[ba:bb]].tolist(),
                    "busy": res.block_busy[b_sel[ba:bb]].tolist(),
                    "name": b_names[ba:bb].tolist(),
                },
                "counter": None,
            }
        )
    return out


def trace(workers: Sequence[WorkerTrace], params: Params) -> WindowView:
    return window(workers, parse_window_request(params))


# --- one event -----------------------------------------------------------------------


class Frame(TypedDict):
    name: str
    row: int | None


class Link(TypedDict):
    relation: str  # gpu_activity, launcher, cpu_op, backward, forward, flow_out, flow_in
    category: str
    row: int
    name: str
    ts: float
    dur: float
    track: str | None


class EventView(TypedDict):
    row: int
    name: str
    category: str
    kind: str
    phase: str
    ts: float
    dur: float
    pid: str
    tid: str
    process: str
    thread: str
    track: str | None
    depth: int | None
    args: dict[str, Any]
    input_shapes: list[Any] | None
    call_stack: list[Frame]
    call_stack_source: str | None
    ancestors: list[Frame]
    flows: list[Link]


def _one(workers: Sequence[WorkerTrace]) -> WorkerTrace:
    if len(workers) != 1:
        raise ViewParamError("this route takes one worker")
    return workers[0]


def _row(params: Params, model: TraceModel) -> int:
    text = params.get("row")
    if text is None or text == "":
        raise ViewParamError("missing parameter: row")
    try:
        row = int(text)
    except ValueError:
        raise ViewParamError(f"row must be an integer, not {text!r}") from None
    if not 0 <= row < len(model):
        raise TimelineNotFound(f"no event row {row} (the trace has {len(model)})")
    return row


def _decode_args(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return {"(unparsed)": raw.decode("utf-8", "replace")}
    return value if isinstance(value, dict) else {"(value)": value}


def event(workers: Sequence[WorkerTrace], params: Params) -> EventView:
    worker = _one(workers)
    model, index = worker.model, worker.index
    row = _row(params, model)
    ev = model.events
    pos = index.position(row)
    pid, tid = model.pids[ev["pid"][row]], model.tids[ev["tid"][row]]
    args = _decode_args(model.raw_args(row))
    stack, source = _call_stack(worker, args, row, pos)
    track = None
    depth = None
    ancestors: list[Frame] = []
    if pos >= 0:
        track = worker.qualify(index.tracks[int(index.group_track[index.group[pos]])].id)
        depth = int(index.depth[pos])
        ancestors = _ancestors(model, index, pos)
    shapes = args.get("Input Dims", args.get("Input dims"))
    return {
        "row": row,
        "name": model.names[ev["name"][row]],
        "category": model.categories[ev["cat"][row]],
        "kind": Kind(int(ev["kind"][row])).name.lower(),
        "phase": Phase(int(ev["ph"][row])).name.lower(),
        "ts": float(ev["ts"][row]) + worker.offset,
        "dur": float(ev["dur"][row]),
        "pid": str(pid),
        "tid": str(tid),
        "process": model.process_names.get(str(pid), ""),
        "thread": model.thread_names.get(f"{pid}/{tid}", ""),
        "track": track,
        "depth": depth,
        "args": args,
        "input_shapes": shapes if isinstance(shapes, list) else None,
        "call_stack": stack,
        "call_stack_source": source,
        "ancestors": ancestors,
        "flows": _event_links(worker, row, pos, args),
    }


def _ancestors(model: TraceModel, index: TimelineIndex, pos: int) -> list[Frame]:
    chain: list[Frame] = []
    at = int(index.parent[pos])
    while at >= 0 and len(chain) < 1000:
        row = int(index.row[at])
        chain.append({"name": model.names[index.name[at]], "row": row})
        at = int(index.parent[at])
    return chain[::-1]


def _call_stack(
    worker: WorkerTrace, args: dict[str, Any], row: int, pos: int
) -> tuple[list[Frame], str | None]:
    """Innermost frame first: the `Call stack` arg, else the Python frames running on the
    event's thread at its start."""
    text = args.get("Call stack")
    if isinstance(text, str) and text:
        return [{"name": f, "row": None} for f in text.split(";") if f], "args"
    model, index = worker.model, worker.index
    ev = model.events
    key = (str(model.pids[ev["pid"][row]]), str(model.tids[ev["tid"][row]]), LANE_PYTHON)
    python = track_lookup(model, index).get(key)
    if python is None:
        return [], None
    at = int(enclosing(index, np.array([python]), np.array([float(ev["ts"][row])]))[0])
    if at == pos:
        at = int(index.parent[at])
    frames: list[Frame] = []
    while at >= 0 and len(frames) < 1000:
        frames.append({"name": model.names[index.name[at]], "row": int(index.row[at])})
        at = int(index.parent[at])
    return frames, ("python" if frames else None)


def _event_links(worker: WorkerTrace, row: int, pos: int, args: dict[str, Any]) -> list[Link]:
    model, index = worker.model, worker.index
    ev = model.events
    kind = int(ev["kind"][row])
    found: list[tuple[str, int, str]] = []  # (relation, row, category)
    table = links(model, index)
    if kind in LAUNCH_KINDS:
        found += [
            ("gpu_activity", r, "")
            for r in table.gpu_by_correlation.rows_with(int(ev["correlation"][row])).tolist()
        ]
    elif kind in (Kind.CPU_OP, Kind.USER_ANNOTATION):
        found += [
            ("gpu_activity", r, "")
            for r in table.gpu_by_external.rows_with(int(ev["external_id"][row])).tolist()
        ]
    elif kind in GPU_ACTIVITY_KINDS:
        found += [
            ("launcher", r, "")
            for r in table.launch_by_correlation.rows_with(int(ev["correlation"][row])).tolist()
        ]
        found += [
            ("cpu_op", r, "")
            for r in table.op_by_external.rows_with(int(ev["external_id"][row])).tolist()
        ]
    has_fwdbwd = False
    if pos >= 0:
        pairs = flow_pairs(model, index)
        for pair, is_src in flows_of_event(model, index, pos):
            other_track = pairs.dst_track[pair] if is_src else pairs.src_track[pair]
            other_ts = pairs.dst_ts[pair] if is_src else pairs.src_ts[pair]
            other = int(enclosing(index, np.array([other_track]), np.array([other_ts]))[0])
            if other < 0:
                continue
            category = model.categories[int(pairs.cat[pair])]
            if category.lower() == "fwdbwd":
                has_fwdbwd = True
                relation = "backward" if is_src else "forward"
            else:
                relation = "flow_out" if is_src else "flow_in"
            found.append((relation, int(index.row[other]), category))
    number = args.get("Sequence number")
    if not has_fwdbwd and kind == Kind.CPU_OP and isinstance(number, int):
        backward = args.get("Fwd thread id") not in (None, 0)  # 2021: 0 on forward ops
        partner = sequence_partner(model, index, number, backward, float(ev["ts"][row]))
        if partner >= 0:
            found.append(("forward" if backward else "backward", partner, "Sequence number"))
    out: list[Link] = []
    seen: set[int] = set()
    for relation, other_row, category in found:
        if other_row in seen or other_row == row:
            continue
        seen.add(other_row)
        other_pos = index.position(other_row)
        track = (
            worker.qualify(index.tracks[int(index.group_track[index.group[other_pos]])].id)
            if other_pos >= 0
            else None
        )
        out.append(
            {
                "relation": relation,
                "category": category or model.categories[ev["cat"][other_row]],
                "row": other_row,
                "name": model.names[ev["name"][other_row]],
                "ts": float(ev["ts"][other_row]) + worker.offset,
                "dur": float(ev["dur"][other_row]),
                "track": track,
            }
        )
    return out


# --- flows in a window -----------------------------------------------------------------


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


def flows(workers: Sequence[WorkerTrace], params: Params) -> FlowsView:
    t0, t1 = _range(workers, params)
    limit = integer(params, "limit", DEFAULT_FLOW_LIMIT, 1, 100_000)
    selections = _select(workers, params.get("tracks"))
    cols: dict[str, list[Any]] = {k: [] for k in FlowColumns.__annotations__}
    total = 0
    truncated = False
    for worker, sel in zip(workers, selections):
        model, index, off = worker.model, worker.index, worker.offset
        pairs = flow_pairs(model, index)
        chosen = pairs_in_window(pairs, t0 - off, t1 - off, sel.slices)
        total += int(chosen.size)
        room = limit - len(cols["id"])
        if chosen.size > room:
            chosen, truncated = chosen[: max(room, 0)], True
        if chosen.size == 0:
            continue
        src = enclosing(index, pairs.src_track[chosen], pairs.src_ts[chosen])
        dst = enclosing(index, pairs.dst_track[chosen], pairs.dst_ts[chosen])
        ids = [worker.qualify(t.id) for t in index.tracks]
        cols["category"] += [model.categories[c] for c in pairs.cat[chosen].tolist()]
        cols["id"] += pairs.flow_id[chosen].tolist()
        for side, bound in (("src", src), ("dst", dst)):
            track = pairs.src_track if side == "src" else pairs.dst_track
            ts = pairs.src_ts if side == "src" else pairs.dst_ts
            cols[f"{side}_track"] += [ids[t] for t in track[chosen].tolist()]
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


# --- search ---------------------------------------------------------------------------


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


def search(workers: Sequence[WorkerTrace], params: Params) -> SearchView:
    """Events whose name contains `q` (any case), by time; counts per matching name."""
    query = (params.get("q") or "").strip()
    if not query:
        raise ViewParamError("missing parameter: q")
    limit = integer(params, "limit", DEFAULT_SEARCH_LIMIT, 1, 10_000)
    t0, t1 = _range(workers, params)
    needle = query.lower()
    counts: dict[str, int] = {}
    hits: list[tuple[float, int, float, str, int, str]] = []
    total = 0
    for worker in workers:
        model, index, off = worker.model, worker.index, worker.offset
        lower = _lower_names(model)
        codes = np.array([i for i, n in enumerate(lower) if needle in n], dtype=np.int64)
        if codes.size == 0:
            continue
        lo = int(np.searchsorted(index.by_start_ts, t0 - off, side="left"))
        hi = int(np.searchsorted(index.by_start_ts, t1 - off, side="left"))
        window_pos = index.by_start[lo:hi]
        match = window_pos[np.isin(index.name[window_pos], codes)]
        total += int(match.size)
        per_name = np.bincount(index.name[match], minlength=len(model.names))
        for code in np.flatnonzero(per_name).tolist():
            name = model.names[code]
            counts[name] = counts.get(name, 0) + int(per_name[code])
        first = match[:limit]
        for p in first.tolist():
            hits.append(
                (
                    float(index.start[p]) + off,
                    int(index.row[p]),
                    float(index.end[p] - index.start[p]),
                    worker.qualify(index.tracks[int(index.group_track[index.group[p]])].id),
                    int(index.depth[p]),
                    model.names[index.name[p]],
                )
            )
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


# --- range summary ------------------------------------------------------------------------


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


def range_summary(workers: Sequence[WorkerTrace], params: Params) -> RangeSummaryView:
    """Per name, over the events of the chosen tracks overlapping [t0, t1): how many, their
    time clipped to the range, and their self time (minus their children's, clipped)."""
    t0, t1 = _range(workers, params)
    limit = integer(params, "limit", 500, 1, 100_000)
    selections = _select(workers, params.get("tracks"))
    totals: dict[str, list[float]] = {}
    n_events = 0
    for worker, sel in zip(workers, selections):
        model, index, off = worker.model, worker.index, worker.offset
        a, b = t0 - off, t1 - off
        first = int(np.searchsorted(index.by_start_endmax, a, side="right"))
        last = int(np.searchsorted(index.by_start_ts, b, side="left"))
        pos = index.by_start[first : max(first, last)]
        pos = pos[(index.end[pos] > a) | (index.start[pos] >= a)]
        on = np.zeros(len(index.tracks), dtype=bool)
        on[sel.slices] = True
        pos = pos[on[index.group_track[index.group[pos]]]]
        if pos.size == 0:
            continue
        n_events += int(pos.size)
        clipped = np.minimum(index.end[pos], b) - np.maximum(index.start[pos], a)
        clipped = np.maximum(clipped, 0.0)
        self_time = clipped - _children_time(index, pos, clipped)
        self_time = np.maximum(self_time, 0.0)
        codes = index.name[pos]
        if pos.size * 8 > len(index):  # many events: count by code, no sort
            uniq, inverse = np.arange(len(model.names)), codes
        else:
            uniq, inverse = np.unique(codes, return_inverse=True)
            inverse = inverse.reshape(-1)
        count = np.bincount(inverse, minlength=uniq.size)
        total = np.bincount(inverse, weights=clipped, minlength=uniq.size)
        own = np.bincount(inverse, weights=self_time, minlength=uniq.size)
        used = np.flatnonzero(count)
        for code, c, t, s in zip(
            uniq[used].tolist(), count[used].tolist(), total[used].tolist(), own[used].tolist()
        ):
            acc = totals.setdefault(model.names[code], [0, 0.0, 0.0])
            acc[0] += c
            acc[1] += t
            acc[2] += s
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))
    rows: list[RangeRow] = [
        {"name": n, "count": int(v[0]), "total_us": float(v[1]), "self_us": float(v[2])}
        for n, v in ranked[:limit]
    ]
    return {
        "t0": t0,
        "t1": t1,
        "rows": rows,
        "event_count": n_events,
        "truncated": len(ranked) > limit,
    }


ROUTES: dict[str, Callable[[Sequence[WorkerTrace], Params], Any]] = {
    "tracks": tracks,
    "trace": trace,
    "event": event,
    "flows": flows,
    "search": search,
    "range_summary": range_summary,
}
