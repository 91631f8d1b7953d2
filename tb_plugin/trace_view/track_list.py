"""The `tracks` route: every track of the request's workers (counters first), each
worker's time extent and rank, and the step markers."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypedDict

from ..analysis.core.ranks import ORDER, assign_ranks, header_rank
from ..analysis.core.steps import find_steps
from ..ingest.naming import name_rank
from ..model.trace_model import TraceModel
from .counters import Counter
from .params import TracksParams
from .tracks import Track
from .workers import WorkerTrace, counters_of, kept_json, time_base, time_extent


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


def tracks(workers: Sequence[WorkerTrace], params: TracksParams) -> TracksView:
    """The workers' tracks, steps and time extent (made anew: the route answers the JSON
    kept, `tracks_kept`)."""
    return _tracks(workers)


def tracks_kept(workers: Sequence[WorkerTrace], params: TracksParams) -> bytes:
    """`tracks`'s JSON: the same for every request of these workers, so kept
    (`kept_json`; a 4 GB trace's steps take ~1.5 ms of CPU each time)."""
    return kept_json(workers, "tracks", (), lambda: _tracks(workers))


def _tracks(workers: Sequence[WorkerTrace]) -> TracksView:
    out: list[TrackView] = []
    infos: list[WorkerInfo] = []
    steps: list[StepMarker] = []
    last: list[tuple[WorkerTrace, Counter, str]] = []
    for worker, rank in zip(workers, _ranks(workers)):
        prefix = _prefix(worker, rank)
        for counter in counters_of(worker):
            if counter.listed_last:
                last.append((worker, counter, prefix))
            else:
                out.append(_counter_track(worker, counter, prefix, len(out)))
        for track in worker.index.tracks:
            out.append(_slice_track(worker, track, prefix, len(out)))
        infos.append(_worker_info(worker, rank))
        steps += _step_markers(worker)
    for worker, counter, prefix in last:
        out.append(_counter_track(worker, counter, prefix, len(out)))
    lo, hi = time_extent(workers)
    return {
        "time_base": time_base(workers),
        "start_us": lo,
        "end_us": hi,
        "workers": infos,
        "tracks": out,
        "steps": steps,
    }


def _counter_track(worker: WorkerTrace, counter: Counter, prefix: str, sort: int) -> TrackView:
    return {
        "id": worker.qualify(counter.id),
        "worker": worker.name,
        "kind": "counter",
        "label": prefix + counter.label,
        "process": "",
        "pid": None,
        "tid": None,
        "device": counter.device,
        "stream": counter.stream,
        "sort": sort,
        "max_depth": 0,
        "event_count": 0 if counter.times is None else int(counter.times.size),
        "counter": {
            "metric": counter.metric,
            "unit": counter.unit,
            "max": counter.max_value,
        },
    }


def _slice_track(worker: WorkerTrace, track: Track, prefix: str, sort: int) -> TrackView:
    index = worker.index
    return {
        "id": worker.qualify(track.id),
        "worker": worker.name,
        "kind": track.kind,
        "label": prefix + track.label,
        "process": prefix + track.process,
        "pid": str(track.pid),
        "tid": str(track.tid),
        "device": track.device,
        "stream": track.stream,
        "sort": sort,
        "max_depth": int(index.track_max_depth[track.index]),
        "event_count": int(index.track_count[track.index]),
        "counter": None,
    }


def _worker_info(worker: WorkerTrace, rank: int | None) -> WorkerInfo:
    index = worker.index
    return {
        "worker": worker.name,
        "rank": rank,
        "offset_us": worker.offset,
        "start_us": index.t_min + worker.offset,
        "end_us": index.t_max + worker.offset,
        "index_seconds": round(index.build_seconds, 3),
    }


def _step_markers(worker: WorkerTrace) -> list[StepMarker]:
    try:
        found = find_steps(worker.model)
    except Exception:  # noqa: BLE001 - markers are a nicety; the tracks still load
        return []
    return [
        {
            "worker": worker.name,
            "name": name,
            "start_us": start + worker.offset,
            "end_us": end + worker.offset,
        }
        for name, start, end in zip(found.names, found.starts.tolist(), found.ends.tolist())
    ]
