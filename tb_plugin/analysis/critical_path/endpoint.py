"""The critical path's endpoints: of one span (`critical_path`, `whatif`, `top_gains`) and
of a run's ranks as one job (`run_critical_path`, `run_whatif`, `run_top_gains`: run jobs
of the store, 202 with progress). None is a page or part of the default report: each is
computed only when asked (the Trace, Overview, Operators, Kernels and Distributed pages
ask; `kinetoscope report --view critical_path`, `kinetoscope whatif`)."""

from __future__ import annotations

from ...ingest.discovery import Run
from ..core.endpoint import Answer, Cache, Endpoint, Lazy, Scope, has_events, span_view

ORDER = 95  # the folder's place in the page order (`api/view_folders.py`)
LEVEL = "comparison"  # matches collectives by the Distributed view's rules: above the views
# Imported when first asked (`kinetoscope report` never does): the default report's cold
# time does not pay for the graph's modules.
_SPAN = "kinetoscope.analysis.critical_path.span"
_RUN = "kinetoscope.analysis.critical_path.run"
_RUN_GAINS = "kinetoscope.analysis.critical_path.run_gains"
# The wire types are named by path too: they import the Distributed view's types, which
# import its summary (listing the routes imports no view's compute).
_TYPES = "kinetoscope.analysis.critical_path.types"
_TEXT = "kinetoscope.analysis.critical_path.text"
# bump when an output changes (keys the cache); 3: an op's change scales the replayed
# kernels its CUDA-graph annotations name; 4: a launch delay's part after the work was
# queued on the GPU (CUPTI's `queued`) said apart
VERSION = "4"


def _several_workers(run: Run) -> bool:
    return len(run.workers) >= 2


def _span_view(
    name: str, response: str, compute: str, request: str, text: str | None = None
) -> Endpoint:
    return span_view(
        name,
        Lazy(_TYPES, response),
        Lazy(_SPAN, compute),
        Lazy(_TYPES, request),
        VERSION,
        Cache.ALL,
        supports=has_events,
        text=Lazy(_TEXT, text) if text else None,
    )


def _run_view(
    name: str, response: str, compute: str, request: str, text: str, module: str = _RUN
) -> Endpoint:
    return Endpoint(
        name,
        Scope.RUN,
        Lazy(_TYPES, response),
        Lazy(module, compute),
        request_ref=Lazy(_TYPES, request),
        version=VERSION,
        supports=_several_workers,
        loading_ref=Lazy(_TYPES, "CriticalPathLoading"),
        answer=Answer.RUN_JOB,
        text_ref=Lazy(_TEXT, text),
    )


PATH_TEXT, GAINS_TEXT, WHATIF_TEXT = "render_critical_path", "render_top_gains", "render_whatif"
ENDPOINTS: list[Endpoint] = [
    _span_view(
        "critical_path", "CriticalPathView", "critical_path_view", "CriticalPathParams", PATH_TEXT
    ),
    _span_view("whatif", "WhatIfView", "whatif_view", "WhatIfParams", WHATIF_TEXT),
    _span_view("top_gains", "TopGainsView", "top_gains_view", "TopGainsParams", GAINS_TEXT),
    _run_view(
        "run_critical_path",
        "RunCriticalPathView",
        "run_critical_path",
        "CriticalPathParams",
        PATH_TEXT,
    ),
    _run_view("run_whatif", "RunWhatIfView", "run_whatif", "WhatIfParams", WHATIF_TEXT),
    _run_view(
        "run_top_gains",
        "RunTopGainsView",
        "run_top_gains",
        "TopGainsParams",
        GAINS_TEXT,
        _RUN_GAINS,
    ),
]
