"""The GPU-idle view's endpoint: why the GPU is idle, launch delays, queue lengths; a
section of the Overview page. What the registry reads is named here; the compute is
imported when first asked."""

from __future__ import annotations

from ..core.endpoint import Endpoint, Lazy, has_events, overview_section
from ..core.rules import data_version

ORDER = 70  # the folder's place in the page order (`api/view_folders.py`)

# Bump when the view's output changes (here: the registry reads it without the view).
# 2: interpolated percentiles; 3: ties by content; 4: a late launch told by `queued` where
# recorded (`queued_times`). The launch APIs' data keys it too.
VERSION = f"4l{data_version('launch_apis')}"

ENDPOINTS: list[Endpoint] = [
    overview_section(
        "gpu_idle",
        "kinetoscope.analysis.gpu_idle.view",
        VERSION,
        has_events,
        text=Lazy("kinetoscope.analysis.gpu_idle.text", "render_gpu_idle"),
        frames={"gpu_idle_lanes": Lazy("kinetoscope.analysis.gpu_idle.frames", "idle_frame")},
    )
]
