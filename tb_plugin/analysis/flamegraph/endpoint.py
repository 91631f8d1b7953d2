"""The flame graph's endpoint: host time (per thread) or kernel time by call path. Exported
by `kinetoscope flamegraph`, not part of the default report. What the registry reads is
named here; the compute is imported when first asked."""

from __future__ import annotations

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.endpoint import Cache, Endpoint, Lazy, span_view

ORDER = 60  # the folder's place in the page order (`api/view_folders.py`)

VERSION = "4"  # bump when the view's output changes (read here without the view)


def supports(model: TraceModel) -> bool:
    """Offered for traces with host ranges (the op tree's nodes)."""
    return model.has_complete(Kind.CPU_OP) or model.has_complete(Kind.USER_ANNOTATION)


ENDPOINTS: list[Endpoint] = [
    span_view(
        "flamegraph",
        Lazy("kinetoscope.analysis.flamegraph.types", "FlameGraphView"),
        Lazy("kinetoscope.analysis.flamegraph.view", "flamegraph_view"),
        Lazy("kinetoscope.analysis.flamegraph.types", "FlameGraphParams"),
        VERSION,
        Cache.ALL,
        page="flamegraph",
        supports=supports,
        report=False,
        frames={"flamegraph_nodes": Lazy("kinetoscope.analysis.flamegraph.frames", "flame_frame")},
    ),
]
