"""The Memory view's endpoints: the page, its curve and its events. Ranges vary per request:
only the default form is cached (the prepared events stay on the model). The run's memory
snapshots are a run-level route declared in `api` (`api/snapshots.py` answers it)."""

from __future__ import annotations

from typing import Any

from ..core.endpoint import Cache, Endpoint, span_view
from .types import MemoryCurveParams, MemoryEventsParams, MemoryParams
from .view import (
    VERSION,
    CurveView,
    EventsView,
    MemoryView,
    has_memory,
    memory,
    memory_curve,
    memory_events,
)

ORDER = 20  # the folder's place in the page order (`api/view_folders.py`)


def _memory_view(
    name: str, response: Any, compute: Any, request: Any, page: str | None = None
) -> Endpoint:
    return span_view(
        name, response, compute, request, VERSION, Cache.DEFAULT_FORM, page, has_memory
    )


ENDPOINTS: list[Endpoint] = [
    _memory_view("memory", MemoryView, memory, MemoryParams, page="memory"),
    _memory_view("memory_curve", CurveView, memory_curve, MemoryCurveParams),
    _memory_view("memory_events", EventsView, memory_events, MemoryEventsParams),
]
