"""The critical path's endpoints: of one span (`critical_path`, `whatif`, `top_gains`) and
of a run's ranks as one job (`run_critical_path`, `run_whatif`, `run_top_gains`: run jobs
of the store, 202 with progress). None is a page or part of the default report: each is
computed only when asked (the Trace, Overview, Operators, Kernels and Distributed pages
ask; `kinetoscope report --view critical_path`, `kinetoscope whatif`)."""

from __future__ import annotations

from ...ingest.discovery import Run
from ..core.endpoint import Answer, Cache, Endpoint, Lazy, Scope, span_view
from .span import critical_path_view, supports, top_gains_view, whatif_view
from .types import (
    CriticalPathLoading,
    CriticalPathParams,
    CriticalPathView,
    RunCriticalPathView,
    RunTopGainsView,
    RunWhatIfView,
    TopGainsParams,
    TopGainsView,
    WhatIfParams,
    WhatIfView,
)
from .view import VERSION

ORDER = 95  # the folder's place in the page order (`api/view_folders.py`)
LEVEL = "comparison"  # matches collectives by the Distributed view's rules: above the views
_RUN = "kinetoscope.analysis.critical_path.run"


def _several_workers(run: Run) -> bool:
    return len(run.workers) >= 2


def _run_view(name: str, response: object, compute: str, request: object) -> Endpoint:
    return Endpoint(
        name,
        Scope.RUN,
        response,
        Lazy(_RUN, compute),
        request=request,
        version=VERSION,
        supports=_several_workers,
        loading=CriticalPathLoading,
        answer=Answer.RUN_JOB,
    )


ENDPOINTS: list[Endpoint] = [
    span_view(
        "critical_path",
        CriticalPathView,
        critical_path_view,
        CriticalPathParams,
        VERSION,
        Cache.ALL,
        supports=supports,
    ),
    span_view(
        "whatif", WhatIfView, whatif_view, WhatIfParams, VERSION, Cache.ALL, supports=supports
    ),
    span_view(
        "top_gains",
        TopGainsView,
        top_gains_view,
        TopGainsParams,
        VERSION,
        Cache.ALL,
        supports=supports,
    ),
    _run_view("run_critical_path", RunCriticalPathView, "run_critical_path", CriticalPathParams),
    _run_view("run_whatif", RunWhatIfView, "run_whatif", WhatIfParams),
    _run_view("run_top_gains", RunTopGainsView, "run_top_gains", TopGainsParams),
]
