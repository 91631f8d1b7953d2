"""The serving view's endpoint: a page for traces with serving-engine markers (listed
only for them, as Modules is for traces with module calls), and part of `kinetoscope
report` for them; a trace without markers answers why there are no iterations. What the
registry reads is named here; the compute is imported when first asked."""

from __future__ import annotations

from ...model.trace_model import TraceModel
from ..core.common import name_flags
from ..core.endpoint import Cache, Endpoint, Lazy, span_view
from ..core.rules import data_version
from .markers import is_marker_name

ORDER = 55  # the folder's place in the page order (`api/view_folders.py`)

VERSION = "5"  # bump when the view's output changes (read here without the view)


def supports(model: TraceModel) -> bool:
    """Offered for traces with an engine marker (an iteration annotation or frame, a graph
    capture, a diffusion request): one pass over the interned names."""
    return bool(name_flags(model, is_marker_name).any())


ENDPOINTS: list[Endpoint] = [
    span_view(
        "serving",
        Lazy("kinetoscope.analysis.serving.types", "ServingView"),
        Lazy("kinetoscope.analysis.serving.view", "serving_view"),
        Lazy("kinetoscope.analysis.serving.types", "ServingParams"),
        # The serving rules' data version keys it too.
        f"{VERSION}s{data_version('serving')}",
        Cache.ALL,
        page="serving",
        supports=supports,
        text=Lazy("kinetoscope.analysis.serving.text", "render_serving"),
        frames={"serving_phases": Lazy("kinetoscope.analysis.serving.frames", "phases_frame")},
    ),
]
