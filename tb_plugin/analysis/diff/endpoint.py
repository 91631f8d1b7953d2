"""The Diff's endpoint: two spans, base and target (`Scope.PAIR`), 202 while either loads.
Computed per request from the views of both: an answer cached with one file would outlive
a change of the other. Its compute is imported when first asked."""

from __future__ import annotations

from ..core.endpoint import SPAN_STATUS, Cache, Endpoint, Lazy, Scope

# Its types are named by path, as its compute is: `kinetoscope report` never answers it.
_TYPES = "kinetoscope.analysis.diff.types"
VERSION = "3"  # bump when the diff's output changes (keys the cache; read without the types)

ORDER = 110  # the folder's place in the page order (`api/view_folders.py`)
LEVEL = "comparison"  # reads other views: walled in above them (pyproject's `views`)

ENDPOINTS: list[Endpoint] = [
    Endpoint(
        "diff",
        Scope.PAIR,
        Lazy("kinetoscope.analysis.diff.view", "DiffView"),
        Lazy("kinetoscope.analysis.diff.view", "diff_view"),
        request_ref=Lazy(_TYPES, "DiffParams"),
        version=VERSION,
        cache=Cache.NONE,
        page="diff",
        loading_ref=SPAN_STATUS,
        text_ref=Lazy("kinetoscope.analysis.diff.text", "render_diff"),
    ),
]
