"""The Overview's endpoint: a page of its own, cached in every form. What the registry
reads (version, types, compute) is named here; the compute is imported when first asked."""

from __future__ import annotations

from ..core.endpoint import Cache, Endpoint, Lazy, span_view
from ..core.requests import NoParams

ORDER = 10  # the folder's place in the page order (`api/view_folders.py`)

# Bump when the view's output changes (here: the registry reads it without the view).
# 3: kernel taxonomy, step windows over all device work, device identity, advice that fits
# the hardware and the cause. 4: a graph-replayed kernel is eligible by its capturing op.
# 5: events left out (trace health), caveats on recommendations.
VERSION = "7"

ENDPOINTS: list[Endpoint] = [
    span_view(
        "overview",
        Lazy("kinetoscope.analysis.core.overview_types", "OverviewView"),
        Lazy("kinetoscope.analysis.overview.view", "overview_view"),
        NoParams,
        VERSION,
        Cache.ALL,
        page="overview",
        text=Lazy("kinetoscope.analysis.overview.text", "render_overview"),
    ),
]
