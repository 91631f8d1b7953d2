"""The Diff's endpoint: two spans, base and target (`Scope.PAIR`), 202 while either loads.
Computed per request from the views of both: an answer cached with one file would outlive
a change of the other. Its compute is imported when first asked."""

from __future__ import annotations

from ..core.endpoint import SPAN_STATUS, Cache, Endpoint, Lazy, Scope
from .types import VERSION, DiffParams

ORDER = 110  # the folder's place in the page order (`api/view_folders.py`)
LEVEL = "comparison"  # reads other views: walled in above them (pyproject's `views`)

ENDPOINTS: list[Endpoint] = [
    Endpoint(
        "diff",
        Scope.PAIR,
        Lazy("kinetoscope.analysis.diff.view", "DiffView"),
        Lazy("kinetoscope.analysis.diff.view", "diff_view"),
        request_ref=DiffParams,
        version=VERSION,
        cache=Cache.NONE,
        page="diff",
        loading_ref=SPAN_STATUS,
    ),
]
