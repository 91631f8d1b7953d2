"""The serving view's endpoint: a page for traces with serving-engine markers (listed
only for them, as Modules is for traces with module calls), and part of `kinetoscope
report` for them; a trace without markers answers why there are no iterations."""

from __future__ import annotations

from ..core.endpoint import Cache, Endpoint, span_view
from ..core.requests import NoParams
from .hints import serving_rules_version
from .view import VERSION, ServingView, serving_view, supports

ORDER = 55  # the folder's place in the page order (`api/view_folders.py`)

ENDPOINTS: list[Endpoint] = [
    span_view(
        "serving",
        ServingView,
        serving_view,
        NoParams,
        # The serving rules' data version keys it too.
        f"{VERSION}s{serving_rules_version()}",
        Cache.ALL,
        page="serving",
        supports=supports,
    ),
]
