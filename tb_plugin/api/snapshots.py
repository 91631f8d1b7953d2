"""The `memory_snapshot` run-level view: every memory snapshot of a run, read safely
(`ingest.snapshot`), summarised per device (`analysis.memory.snapshot`), and placed on
the time axis of the run's first trace when the files allow
(`analysis.memory.snapshot_alignment`).

It runs as the run's background job (the store's `run_view`, 202 while it reads), so a
100 MB snapshot never holds a request; the job is kept per file states. A snapshot that
cannot be read is an `error` of its own entry; the other snapshots still answer.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any, Literal, Optional, TypedDict

from ..analysis.memory.snapshot import SnapshotDevice, device_views, entry_times
from ..analysis.memory.snapshot_alignment import SnapshotAlignment, align, alloc_times, unaligned
from ..ingest.discovery import Run, SnapshotFile, chosen_spans
from ..ingest.snapshot import SnapshotError, collector_paused, read_snapshot
from ..store.trace_store import LoadFailed, TraceStore


class SnapshotFileView(TypedDict):
    file: str
    size: int
    error: Optional[str]  # why the file could not be read; None when it was
    devices: list[SnapshotDevice]
    alignment: Optional[SnapshotAlignment]  # None: the run has no trace, or the file failed


class MemorySnapshotResponse(TypedDict):
    run: str
    state: Literal["ready"]
    snapshots: list[SnapshotFileView]


def memory_snapshot_view(
    run: Run,
    span: str | None = None,
    cache_dir: str | None = None,
    executor: Executor | None = None,
    progress: Any = None,
    store: TraceStore | None = None,
) -> MemorySnapshotResponse:
    """The route's JSON (the CLI and the notebook call it too). `span`: the trace span
    to align with (default "1", of the first worker); no store: no alignment."""
    # `progress` counts ranks (the job's 202 body): snapshots are not ranks, so it is
    # left alone.
    snapshots = [_file_view(run, snapshot, span, store) for snapshot in run.snapshots]
    return {"run": run.name, "state": "ready", "snapshots": snapshots}


def _file_view(
    run: Run, snapshot: SnapshotFile, span: str | None, store: TraceStore | None
) -> SnapshotFileView:
    view: SnapshotFileView = {
        "file": snapshot.file,
        "size": snapshot.size,
        "error": None,
        "devices": [],
        "alignment": None,
    }
    try:
        data = read_snapshot(snapshot.path)
    except SnapshotError as exc:
        return {**view, "error": str(exc)}
    traces = data.get("device_traces")
    times: list[float] = []
    allocs: dict[int, list[float]] = {}
    with collector_paused():  # the replay makes an object per allocation, no cycles
        view["devices"] = device_views(data)
        for history in traces if isinstance(traces, list) else []:
            times.extend(entry_times(history))
            for addr, found in alloc_times(history).items():
                allocs.setdefault(addr, []).extend(found)
    del data, traces  # the decoded file is the job's peak: gone before a trace is read
    view["alignment"] = _alignment(run, span, store, times, allocs)
    return view


def _alignment(
    run: Run,
    span: str | None,
    store: TraceStore | None,
    times: list[float],
    allocs: dict[int, list[float]],
) -> SnapshotAlignment | None:
    """Against the first worker's span `span` (what the Memory page shows first)."""
    picks = chosen_spans(run, span)
    if store is None or not picks:
        return None
    worker, chosen = picks[0]
    try:
        model = store.wait(chosen.path)
    except LoadFailed as exc:
        return unaligned(worker.name, chosen.name, f"the trace failed: {exc.error['message']}")
    return align(worker.name, chosen.name, model, times, allocs)
