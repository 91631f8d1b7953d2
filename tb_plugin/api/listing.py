"""JSON shapes of the run/worker/span listing (docs/http_api.md: runs, workers, spans)."""

from __future__ import annotations

import re
from typing import TypedDict

from ..ingest.discovery import Run, SpanFile, Worker

_RANK_IN_NAME = re.compile(r"(?:^|[^a-z])(?:rank|worker)[-_]?(\d+)(?:$|[^0-9])", re.IGNORECASE)


class SpanListing(TypedDict):
    name: str
    timestamp: int | None
    file: str
    size: int


class WorkerListing(TypedDict):
    name: str
    rank: int | None
    spans: list[SpanListing]


class RunListing(TypedDict):
    name: str
    workers: list[WorkerListing]
    views: list[str]  # run-level views: "distributed" when the run has >= 2 workers


def rank_from_name(name: str) -> int | None:
    """`rank3`, `worker1`, `rank-0.Apr_03...`: the rank the file name states, if any."""
    m = _RANK_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def span_listing(span: SpanFile) -> SpanListing:
    return {"name": span.name, "timestamp": span.timestamp, "file": span.file, "size": span.size}


def worker_listing(worker: Worker) -> WorkerListing:
    return {
        "name": worker.name,
        "rank": rank_from_name(worker.name),
        "spans": [span_listing(s) for s in worker.spans],
    }


def run_listing(run: Run, views: list[str]) -> RunListing:
    """`views`: the run-level pages it supports (`endpoints.run_pages`)."""
    return {"name": run.name, "workers": [worker_listing(w) for w in run.workers], "views": views}
