"""The few names of the floors below that a door names itself: the types it holds (a
listed run, a span file, a loaded model, its categories) and the errors it tells apart
(a bad parameter, a trace that cannot be read, one still loading), the text tables their
reports are printed in and the fields their frames are made of
(`analysis/core/text_tables.py`, `frame_fields.py`, shared with the views' own text and
frames); and the facts of views a door uses when it runs: the health status rule
`kinetoscope check` applies and its text, the memory events' page size the notebook pages
by, and the GPU queue lengths of a loaded model (the notebook's one series read from a
model, not a route). Doors import them from here, never from `ingest`, `model`, `store` or
`analysis` (a view's types they may name under TYPE_CHECKING); everything else they reach
through `dispatch` and `session`."""

from __future__ import annotations

from typing import Any

from ..analysis.core.frame_fields import flatten, plain_fields
from ..analysis.core.text_tables import (
    DEFAULT_WIDTH,
    PART_LABELS,
    UNKNOWN,
    Column,
    binary_bytes,
    mib,
    ms,
    number,
    or_dash,
    report_width,
    rows_table,
    short,
    table,
    wrap,
)
from ..ingest.discovery import Run, SpanFile
from ..ingest.limits import env_number
from ..model.categories import Kind, Phase
from ..model.errors import ViewParamError
from ..model.trace_model import EVENT_COLUMNS, TraceModel
from ..store.load_state import LoadSnapshot
from ..store.trace_store import LoadFailed, NotReady

__all__ = [
    "Column",
    "DEFAULT_WIDTH",
    "EVENT_COLUMNS",
    "Kind",
    "LoadFailed",
    "LoadSnapshot",
    "NotReady",
    "PART_LABELS",
    "Phase",
    "Run",
    "SpanFile",
    "TraceModel",
    "UNKNOWN",
    "ViewParamError",
    "binary_bytes",
    "check_text",
    "env_number",
    "flatten",
    "memory_events_page_max",
    "health_status",
    "mib",
    "ms",
    "number",
    "or_dash",
    "plain_fields",
    "queue_lengths",
    "report_width",
    "rows_table",
    "short",
    "table",
    "wrap",
]


def queue_lengths(model: TraceModel) -> tuple[float, list[Any]]:
    """(origin_us, the queue series of every (device, stream)) of a loaded model: from
    `times[i]` (int64 ns from origin_us) the length is `values[i]`. The GPU-idle view's
    modules are imported when first asked."""
    from ..analysis.core.launches import gpu_work
    from ..analysis.gpu_idle.queue import queue_series

    work = gpu_work(model)
    return work.origin_us, list(queue_series(work))


def health_status(checks: list[Any]) -> str:
    """The status `kinetoscope check` gives a list of checks (the health view's rule)."""
    from ..analysis.core.health.view import status_of

    return status_of(checks)


def check_text(results: dict[str, Any], run_worker: str, width: int | None = None) -> str:
    """`kinetoscope check`'s text of its results (the health view's folder writes it)."""
    from ..analysis.health.text import render_check

    return render_check(results, run_worker, width)


def memory_events_page_max() -> int:
    """The `memory_events` route's largest page (`limit`), from the route's types."""
    from ..analysis.memory.types import EVENTS_PAGE_MAX

    return EVENTS_PAGE_MAX
