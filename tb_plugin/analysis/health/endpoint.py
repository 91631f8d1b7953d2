"""The health view's endpoint: the Overview's "Trace health" section and the side bar's
mark; `kinetoscope check` prints it."""

from __future__ import annotations

from ..core.endpoint import Endpoint, has_events, overview_section
from ..core.health import view

ORDER = 80  # the folder's place in the page order (`api/view_folders.py`)

ENDPOINTS: list[Endpoint] = [overview_section("health", view, has_events)]
