"""The GPU-idle view's endpoint: why the GPU is idle, launch delays, queue lengths; a
section of the Overview page."""

from __future__ import annotations

from ..core.endpoint import Endpoint, has_events, overview_section
from . import view

ORDER = 70  # the folder's place in the page order (`api/view_folders.py`)

ENDPOINTS: list[Endpoint] = [overview_section("gpu_idle", view, has_events)]
