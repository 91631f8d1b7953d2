"""The Trends view's endpoint, logdir-level: every run's traces (span S of each worker) as
one background job, each trace summarised once and cached on disk. Its compute is imported
when first asked (`kinetoscope report` never does)."""

from __future__ import annotations

from ..core.endpoint import Answer, Endpoint, Lazy, Scope

_TYPES = "kinetoscope.analysis.trends.types"  # named by path too: a report never asks

ORDER = 100  # the folder's place in the page order (`api/view_folders.py`)
LEVEL = "comparison"  # reads other views: walled in above them (pyproject's `views`)

ENDPOINTS: list[Endpoint] = [
    Endpoint(
        "trend",
        Scope.LOGDIR,
        Lazy(_TYPES, "TrendView"),
        Lazy("kinetoscope.analysis.trends.view", "trend_view"),
        request_ref=Lazy(_TYPES, "TrendParams"),
        page="trends",
        loading_ref=Lazy(_TYPES, "TrendLoading"),
        answer=Answer.RUN_JOB,
        text_ref=Lazy("kinetoscope.analysis.trends.text", "render_trend"),
    ),
]
