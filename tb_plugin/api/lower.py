"""The few names of the floors below that a door names itself: the types it holds (a
listed run, a span file, a loaded model, its categories) and the errors it tells apart
(a bad parameter, a trace that cannot be read, one still loading). Doors import them from
here, never from `ingest`, `model` or `store`; everything else they reach through
`dispatch` and `session`."""

from __future__ import annotations

from ..ingest.discovery import Run, SpanFile
from ..ingest.limits import env_number
from ..model.categories import Kind, Phase
from ..model.errors import ViewParamError
from ..model.trace_model import EVENT_COLUMNS, TraceModel
from ..store.trace_store import LoadFailed, NotReady

__all__ = [
    "EVENT_COLUMNS",
    "Kind",
    "LoadFailed",
    "NotReady",
    "Phase",
    "Run",
    "SpanFile",
    "TraceModel",
    "ViewParamError",
    "env_number",
]
