"""JSON shapes of the run/worker/span listing (docs/http_api.md: runs, workers, spans)."""

from __future__ import annotations

from typing import TypedDict

from ..ingest.discovery import Run, SpanFile, Worker
from ..ingest.naming import name_rank


class SpanListing(TypedDict):
    name: str
    timestamp: int | None
    file: str
    size: int


class WorkerListing(TypedDict):
    name: str
    rank: int | None
    spans: list[SpanListing]


class SnapshotListing(TypedDict):
    file: str
    size: int


class RunListing(TypedDict):
    name: str
    workers: list[WorkerListing]
    # run-level views: "distributed" when the run has >= 2 workers, "memory_snapshot"
    # when it has memory snapshots
    views: list[str]
    snapshots: list[SnapshotListing]  # memory snapshots (`*.pickle`, `*.pkl`) in the folder


def span_listing(span: SpanFile) -> SpanListing:
    return {"name": span.name, "timestamp": span.timestamp, "file": span.file, "size": span.size}


def worker_listing(worker: Worker) -> WorkerListing:
    return {
        "name": worker.name,
        "rank": name_rank(worker.name, worker.spans[0].file if worker.spans else None),
        "spans": [span_listing(s) for s in worker.spans],
    }


def run_listing(run: Run, views: list[str]) -> RunListing:
    """`views`: the run-level pages it supports (`endpoints.run_pages`)."""
    return {
        "name": run.name,
        "workers": [worker_listing(w) for w in run.workers],
        "views": views,
        "snapshots": [{"file": s.file, "size": s.size} for s in run.snapshots],
    }
