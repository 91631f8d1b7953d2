"""The flame graph's endpoint: host time (per thread) or kernel time by call path. Exported
by `kinetoscope flamegraph`, not part of the default report."""

from __future__ import annotations

from ..core.endpoint import Cache, Endpoint, span_view
from .types import FlameGraphParams, FlameGraphView
from .view import VERSION, flamegraph_view, supports

ORDER = 60  # the folder's place in the page order (`api/view_folders.py`)

ENDPOINTS: list[Endpoint] = [
    span_view(
        "flamegraph",
        FlameGraphView,
        flamegraph_view,
        FlameGraphParams,
        VERSION,
        Cache.ALL,
        page="flamegraph",
        supports=supports,
        report=False,
    ),
]
