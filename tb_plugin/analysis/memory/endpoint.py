"""The Memory view's endpoints: the page, its curve and its events. Ranges vary per request:
only the default form is cached (the prepared events stay on the model); and the run's
memory snapshots, a run-level route (`snapshot_view.py` answers it, `snapshot_text.py`
prints it). What the registry reads is named here; the compute is imported when first
asked."""

from __future__ import annotations

from ...ingest.discovery import Run
from ...model.trace_model import TraceModel
from ..core.endpoint import Answer, Cache, Endpoint, Lazy, Scope, span_view

ORDER = 20  # the folder's place in the page order (`api/view_folders.py`)

# Bump when the view's output changes (here: the registry reads it without the view).
# 3: device label from the one device identity; nested same-name ops count an event once,
# calls as the Operator view. 4: levels by the rule the trace counters share (series.py).
# 5: attribution by the host-range index (ops that overlap without nesting). 6: notes name
# the device by its label.
VERSION = "7"


_SNAPSHOTS = "kinetoscope.analysis.memory.snapshot_view"


def has_snapshots(run: Run) -> bool:
    """Offered for runs with memory snapshots beside their traces."""
    return bool(run.snapshots)


def has_memory(model: TraceModel) -> bool:
    """Offered for traces with memory events."""
    return int(model.memory["row"].size) > 0


def _memory_view(
    name: str,
    response: str,
    compute: str,
    request: str,
    page: str | None = None,
    text: Lazy | None = None,
) -> Endpoint:
    view, types = "kinetoscope.analysis.memory.view", "kinetoscope.analysis.memory.types"
    return span_view(
        name,
        Lazy(view, response),
        Lazy(view, compute),
        Lazy(types, request),
        VERSION,
        Cache.DEFAULT_FORM,
        page,
        has_memory,
        text=text,
    )


ENDPOINTS: list[Endpoint] = [
    _memory_view(
        "memory",
        "MemoryView",
        "memory",
        "MemoryParams",
        page="memory",
        text=Lazy("kinetoscope.analysis.memory.text", "render_memory"),
    ),
    _memory_view("memory_curve", "CurveView", "memory_curve", "MemoryCurveParams"),
    _memory_view("memory_events", "EventsView", "memory_events", "MemoryEventsParams"),
    # The run's memory snapshots (`*.pickle`), read in the background job way of run views:
    # a big one never holds a request. `span` picks the trace they are aligned with.
    Endpoint(
        "memory_snapshot",
        Scope.RUN,
        Lazy(_SNAPSHOTS, "MemorySnapshotResponse"),
        Lazy(_SNAPSHOTS, "memory_snapshot_view"),
        page="memory_snapshot",
        supports=has_snapshots,
        loading_ref=Lazy("kinetoscope.analysis.core.run_job_types", "DistributedLoading"),
        answer=Answer.RUN_JOB,
        text_ref=Lazy("kinetoscope.analysis.memory.snapshot_text", "render_memory_snapshot"),
    ),
]
