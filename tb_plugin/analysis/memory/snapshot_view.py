"""The `memory_snapshot` run-level view: every memory snapshot of a run, read safely
(`ingest.snapshot`), summarised per device (`analysis.memory.snapshot`), and placed on
the time axis of the run's first trace when the files allow
(`analysis.memory.snapshot_alignment`).

It runs as the run's background job (the store's `run_view`, 202 while it reads), so a
100 MB snapshot never holds a request; the job is kept per file states. A snapshot that
cannot be read or summarised is an `error` of its own entry, with its `error_kind`
(`ingest.snapshot_guard.ERROR_KINDS`); the other snapshots still answer. Each file has
KINETOSCOPE_SNAPSHOT_TIMEOUT_S to be read and summarised, and a work budget in
proportion to its size (`limits.snapshot_work_per_byte`): shared references that make a
small file describe millions of items are an error, not minutes of work.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Literal, Optional, TypedDict

import msgspec

from ...ingest.discovery import Run, SnapshotFile, chosen_spans
from ...ingest.limits import snapshot_timeout_s, snapshot_work_per_byte
from ...ingest.snapshot import SnapshotError, collector_paused, read_snapshot
from ...store.run_context import RunContext
from ...store.trace_store import LoadFailed, TraceStore
from .snapshot import (
    SnapshotDevice,
    device_numbers,
    device_views,
    entry_times,
    work_items,
)
from .snapshot_alignment import SnapshotAlignment, align, alloc_times, unaligned

log = logging.getLogger(__name__)
WORK_FLOOR = 100_000  # items any snapshot may make its summary walk
# Bytes of JSON one file's devices may take: 1 MiB plus 20 per byte of the file (an
# honest answer is far smaller: its lists are capped and their points come from entries).
ANSWER_FLOOR = 1 << 20
ANSWER_PER_BYTE = 20


class SnapshotFileView(TypedDict):
    file: str
    size: int
    error: Optional[str]  # why the file could not be read or summarised; None when it was
    # unreadable, too_large, not_pickle, refused, damaged, not_snapshot, too_much_work,
    # timeout (ingest.snapshot_guard.ERROR_KINDS), or internal (a fault of kinetoscope's)
    error_kind: Optional[str]
    devices: list[SnapshotDevice]  # the first MAX_DEVICES devices, by number
    devices_total: int
    alignment: Optional[SnapshotAlignment]  # None: the run has no trace, or the file failed


class MemorySnapshotResponse(TypedDict):
    run: str
    state: Literal["ready"]
    snapshots: list[SnapshotFileView]


def memory_snapshot_view(context: RunContext) -> MemorySnapshotResponse:
    """The route's JSON (the CLI and the notebook call it too). `context.span`: the trace
    span to align with (default "1", of the first worker); no store: no alignment."""
    # `progress` counts ranks (the job's 202 body): snapshots are not ranks, so it is
    # left alone.
    run, span, store = context.run, context.span, context.store
    snapshots = [_file_view(run, snapshot, span, store) for snapshot in run.snapshots]
    return {"run": run.name, "state": "ready", "snapshots": snapshots}


def _file_view(
    run: Run, snapshot: SnapshotFile, span: str | None, store: TraceStore | None
) -> SnapshotFileView:
    view: SnapshotFileView = {
        "file": snapshot.file,
        "size": snapshot.size,
        "error": None,
        "error_kind": None,
        "devices": [],
        "devices_total": 0,
        "alignment": None,
    }
    deadline = time.monotonic() + snapshot_timeout_s()
    try:
        times, allocs = _summarise(snapshot, view, deadline)
    except SnapshotError as exc:
        return {**view, "devices": [], "error": str(exc), "error_kind": exc.kind}
    except RecursionError:
        return {
            **view,
            "devices": [],
            "error": "damaged: nested too deeply",
            "error_kind": "damaged",
        }
    except MemoryError:
        error = "too large to summarise in memory"
        return {**view, "devices": [], "error": error, "error_kind": "too_large"}
    except Exception as exc:  # noqa: BLE001 - one file's fault never fails the run
        log.exception("kinetoscope: memory snapshot %s", snapshot.path)
        error = f"could not summarise it: {type(exc).__name__}: {exc}"
        return {**view, "devices": [], "error": error, "error_kind": "internal"}
    view["alignment"] = _alignment(run, span, store, times, allocs)
    return view


def _summarise(
    snapshot: SnapshotFile, view: SnapshotFileView, deadline: float
) -> tuple[list[float], dict[int, list[float]]]:
    """Fills `view`'s devices; the history's times and alloc times for the alignment."""
    data = read_snapshot(snapshot.path, deadline)
    view["devices"], view["devices_total"], times, allocs = summarise(data, snapshot.size, deadline)
    return times, allocs  # the decoded file is the job's peak: gone before a trace is read


def summarise(
    data: dict[str, Any], size: int, deadline: float
) -> tuple[list[SnapshotDevice], int, list[float], dict[int, list[float]]]:
    """A decoded snapshot of a `size`-byte file: its device views, how many devices it
    has, every history entry's time and the alloc times by address; SnapshotError when
    it describes more than its size allows or runs past `deadline`."""
    budget = WORK_FLOOR + int(snapshot_work_per_byte() * size)
    items = work_items(data, budget)
    if items > budget:
        raise SnapshotError(
            f"its {size} bytes describe at least {items} blocks, history entries and OOM "
            f"frames, over the {budget} its size allows (lists shared among many places; "
            "KINETOSCOPE_SNAPSHOT_WORK_PER_BYTE)",
            "too_much_work",
        )
    traces = data.get("device_traces")
    times: list[float] = []
    allocs: dict[int, list[float]] = {}
    with collector_paused():  # the replay makes an object per allocation, no cycles
        devices = device_views(data)
        _check_deadline(deadline)
        _check_answer(devices, size)
        for history in traces if isinstance(traces, list) else []:
            times.extend(entry_times(history))
            for addr, found in alloc_times(history).items():
                allocs.setdefault(addr, []).extend(found)
    _check_deadline(deadline)
    return devices, len(device_numbers(data)), times, allocs


def _check_answer(devices: list[SnapshotDevice], size: int) -> None:
    answer = len(msgspec.json.encode(devices))
    if answer > ANSWER_FLOOR + ANSWER_PER_BYTE * size:
        raise SnapshotError(
            f"its {size} bytes make a {answer}-byte answer (lists shared among many "
            f"places); at most {ANSWER_FLOOR} plus {ANSWER_PER_BYTE} per byte of the file",
            "too_much_work",
        )


def _check_deadline(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise SnapshotError(
            "summarising it ran past its time limit (KINETOSCOPE_SNAPSHOT_TIMEOUT_S)", "timeout"
        )


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
