"""The few names of the floors below that a door names itself: the types it holds (a
listed run, a span file, a loaded model, its categories) and the errors it tells apart
(a bad parameter, a trace that cannot be read, one still loading), the text tables their
reports are printed in and the fields their frames are made of
(`analysis/core/text_tables.py`, `frame_fields.py`, shared with the views' own text and
frames). Doors import them from here, never from `ingest`, `model`, `store` or
`analysis`; everything else they reach through `dispatch` and `session`."""

from __future__ import annotations

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
from ..store.trace_store import LoadFailed, NotReady

__all__ = [
    "Column",
    "DEFAULT_WIDTH",
    "EVENT_COLUMNS",
    "Kind",
    "LoadFailed",
    "NotReady",
    "PART_LABELS",
    "Phase",
    "Run",
    "SpanFile",
    "TraceModel",
    "UNKNOWN",
    "ViewParamError",
    "binary_bytes",
    "env_number",
    "flatten",
    "mib",
    "ms",
    "number",
    "or_dash",
    "plain_fields",
    "report_width",
    "rows_table",
    "short",
    "table",
    "wrap",
]
