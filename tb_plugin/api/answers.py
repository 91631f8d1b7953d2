"""The `status` route's body of one trace file: its load state in the store and, once
loaded, the pages it has views for. The dispatcher answers the route with it, and every
202 of a span that is still loading carries it."""

from __future__ import annotations

from ..store.trace_store import LoadFailed, NotReady, TraceStore
from .contract import StatusResponse
from .endpoints import span_pages
from .resolve import Target


def status_body(store: TraceStore, target: Target) -> StatusResponse:
    """The `status` route's body of one trace file, named as the resolver found it (the
    plugin's 202 answers carry it too)."""
    span = target.span
    status = store.status(span.path)
    views: list[str] = []
    if status["state"] == "ready":
        try:
            views = span_pages(store.model(span.path))
        except (NotReady, LoadFailed):  # dropped from memory, or failed, since
            views = []
    return {
        "run": target.run.name,
        "worker": target.worker.name,
        "span": span.name,
        **status,
        "views": views,
    }
