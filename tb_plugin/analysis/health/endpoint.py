"""The health view's endpoint: the Overview's "Trace health" section and the side bar's
mark; `kinetoscope check` prints it (`text.render_check`). What the registry reads is
named here; the checks are imported when first asked."""

from __future__ import annotations

from ..core.endpoint import Endpoint, Lazy, has_events, overview_section

ORDER = 80  # the folder's place in the page order (`api/view_folders.py`)

# Bump when the view's output changes (read here without the view). 3: trace_start_us;
# kernel_before_launch is 0 on a trace with no GPU activity. 4: torch's validator's rules
# (`torch_rule`) and the producer bugs of 2026. 5: unread_categories.
# 6: stream_ids_are_hsa_queues
VERSION = "6"

ENDPOINTS: list[Endpoint] = [
    overview_section(
        "health",
        "kinetoscope.analysis.core.health.view",
        VERSION,
        has_events,
        text=Lazy("kinetoscope.analysis.health.text", "render_health"),
    )
]
