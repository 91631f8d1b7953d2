"""The endpoint registry: every HTTP route of the plugin, one entry each (see
`registry.Endpoint`). The plugin's handler, `kinetoscope report`, `status.views`, the
generated TypeScript types and the docs tests all read this one table, so a new route
is one entry here (and a section in docs/http_api.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..analysis.core.health import view as health_analysis
from ..analysis.core.roofline.peaks import peaks_key
from ..analysis.diff import types as diff_types
from ..analysis.flamegraph import view as flamegraph_analysis
from ..analysis.gpu_idle import view as gpu_idle_analysis
from ..analysis.kernels import view as kernels_analysis
from ..analysis.memory import view as memory_analysis
from ..analysis.modules import view as modules_analysis
from ..analysis.operators import view as operators_analysis
from ..analysis.overview import view as overview
from ..analysis.trends import types as trend_types
from ..ingest.discovery import Run
from ..model.errors import ViewParamError
from ..model.trace_model import TraceModel
from ..trace_view import params as trace_params
from . import contract
from .listing import run_listing, worker_listing
from .registry import Answer, Cache, Endpoint, Lazy, Scope
from .requests import Params

__all__ = [
    "ENDPOINTS",
    "VIEWS",
    "RUN_VIEWS",
    "LOGDIR_VIEWS",
    "Endpoint",
    "View",
    "ViewParamError",
    "Params",
    "supported_views",
    "span_pages",
    "run_pages",
]

View = Endpoint  # the name tests and older code use for a per-span view


def _has_events(model: TraceModel) -> bool:
    return len(model) > 0


def _several_workers(run: Run) -> bool:
    return len(run.workers) >= 2


def _has_snapshots(run: Run) -> bool:
    return bool(run.snapshots)


def _overview(model: TraceModel, params: contract.NoParams) -> overview.OverviewView:
    return overview.overview(model)


def _modules(model: TraceModel, params: contract.NoParams) -> modules_analysis.ModulesView:
    return modules_analysis.modules(model)


def _span_view(
    name: str,
    response: Any,
    compute: Any,
    request: Any,
    version: str,
    cache: Cache,
    page: str | None = None,
    supports: Any = None,
) -> Endpoint:
    """A pure function of one span's model; 202 with the span's status while it loads."""
    return Endpoint(
        name,
        Scope.SPAN,
        response,
        compute,
        request,
        version,
        cache,
        page,
        supports or _has_any,
        contract.StatusResponse,
    )


def _memory_view(
    name: str, response: Any, compute: Any, request: Any, page: str | None = None
) -> Endpoint:
    """Memory ranges vary per request: only the default form is cached (the prepared
    events stay on the model)."""
    return _span_view(
        name,
        response,
        compute,
        request,
        memory_analysis.VERSION,
        Cache.DEFAULT_FORM,
        page,
        memory_analysis.has_memory,
    )


def _trace_route(name: str, response: Any, compute: Any, request: Any, **extra: Any) -> Endpoint:
    """The trace view: windows of one worker, or of several on one time axis; never cached
    to disk (its level-of-detail index stays in memory with the model)."""
    return Endpoint(
        name,
        Scope.SPANS,
        response,
        compute,
        request,
        cache=Cache.NONE,
        loading=contract.StatusResponse,
        **extra,
    )


def _has_any(model: TraceModel) -> bool:
    return True


_SPAN_VIEWS = [
    _span_view(
        "overview",
        overview.OverviewView,
        _overview,
        contract.NoParams,
        overview.VERSION,
        Cache.ALL,
        page="overview",
    ),
    _memory_view(
        "memory",
        memory_analysis.MemoryView,
        memory_analysis.memory,
        contract.MemoryParams,
        page="memory",
    ),
    _memory_view(
        "memory_curve",
        memory_analysis.CurveView,
        memory_analysis.memory_curve,
        contract.MemoryCurveParams,
    ),
    _memory_view(
        "memory_events",
        memory_analysis.EventsView,
        memory_analysis.memory_events,
        contract.MemoryEventsParams,
    ),
    _span_view(
        "operators",
        operators_analysis.OperatorsView,
        operators_analysis.operators_view,
        contract.OperatorsParams,
        # Rows carry roofline numbers: the device peaks' data version keys them too.
        f"{operators_analysis.VERSION}p{peaks_key()}",
        Cache.ALL,
        page="operators",
    ),
    # Needs an operator name: not a page of its own.
    _span_view(
        "callstacks",
        operators_analysis.CallStacksView,
        operators_analysis.callstacks_view,
        contract.CallStacksParams,
        operators_analysis.VERSION,
        Cache.ALL,
    ),
    _span_view(
        "kernels",
        kernels_analysis.KernelsView,
        kernels_analysis.kernels_view,
        contract.KernelsParams,
        f"{kernels_analysis.VERSION}p{peaks_key()}",
        Cache.ALL,
        page="kernels",
        supports=kernels_analysis.supports,
    ),
    # Listed only for traces with nn.Module calls, as Kernels and Memory are for theirs;
    # the route itself says why there is no tree (`available: false`, `reason`).
    _span_view(
        "modules",
        modules_analysis.ModulesView,
        _modules,
        contract.NoParams,
        modules_analysis.VERSION,
        Cache.ALL,
        page="modules",
        supports=modules_analysis.has_modules,
    ),
    # Host time (per thread) or kernel time by call path: Python frames, ops, launches.
    # Exported by `kinetoscope flamegraph`, not part of the default report.
    replace(
        _span_view(
            "flamegraph",
            flamegraph_analysis.FlameGraphView,
            flamegraph_analysis.flamegraph_view,
            contract.FlameGraphParams,
            flamegraph_analysis.VERSION,
            Cache.ALL,
            page="flamegraph",
            supports=flamegraph_analysis.supports,
        ),
        report=False,
    ),
]


def _overview_section(name: str, module: Any) -> Endpoint:
    """A section of the Overview page (its `page`, so `kinetoscope report` prints it and
    `status.views` stays as it was): `module.<Name>View`, `module.<name>_view`."""
    response = getattr(module, "".join(p.title() for p in name.split("_")) + "View")
    compute = getattr(module, f"{name}_view")
    return _span_view(
        name,
        response,
        compute,
        contract.NoParams,
        module.VERSION,
        Cache.ALL,
        page="overview",
        supports=_has_events,
    )


# Why the GPU is idle, launch delays, queue lengths.
_GPU_IDLE_VIEWS = [_overview_section("gpu_idle", gpu_idle_analysis)]
# What in the trace cannot be trusted: the Overview's "Trace health" section and the side
# bar's mark; `kinetoscope check` prints it.
_HEALTH_VIEWS = [_overview_section("health", health_analysis)]


def _trace_module_route(name: str, module: str, response: str, request: Any) -> Endpoint:
    """A trace view route answered by `trace_view.<module>.<name>` (imported when first
    asked: a report never does)."""
    path = f"kinetoscope.trace_view.{module}"
    return _trace_route(name, Lazy(path, response), Lazy(path, name), request)


_TRACE_VIEW = [
    _trace_route(
        "tracks",
        Lazy("kinetoscope.trace_view.track_list", "TracksView"),
        Lazy("kinetoscope.trace_view.track_list", "tracks"),
        trace_params.TracksParams,
        page="trace",
        supports=_has_events,
    ),
    _trace_module_route("trace", "window_query", "WindowView", trace_params.TraceParams),
    _trace_module_route("event", "event_details", "EventView", trace_params.EventParams),
    _trace_module_route("flows", "flow_window", "FlowsView", trace_params.FlowsParams),
    _trace_module_route("search", "search", "SearchView", trace_params.SearchParams),
    _trace_module_route(
        "range_summary", "range_summary", "RangeSummaryView", trace_params.RangeSummaryParams
    ),
]


def _runs(runs: tuple[Run, ...]) -> contract.RunsResponse:
    # The logdir-level pages (Trends) are offered with every run of a logdir of several.
    logdir = [e.page for e in LOGDIR_VIEWS.values() if e.page] if _several_runs(runs) else []
    return {"runs": [run_listing(r, run_pages(r) + logdir) for r in runs]}


def _several_runs(runs: tuple[Run, ...]) -> bool:
    return sum(1 for r in runs if r.workers) >= 2


def _workers(run: Run) -> contract.WorkersResponse:
    return {"run": run.name, "workers": [worker_listing(w) for w in run.workers]}


def _spans(run: Run, worker: Any) -> contract.SpansResponse:
    return {"run": run.name, "worker": worker.name, "spans": worker_listing(worker)["spans"]}


_LISTING = [
    Endpoint("runs", Scope.LOGDIR, contract.RunsResponse, _runs),
    Endpoint("workers", Scope.RUN, contract.WorkersResponse, _workers),
    Endpoint("spans", Scope.WORKER, contract.SpansResponse, _spans),
    Endpoint("status", Scope.SPAN, contract.StatusResponse, answer=Answer.STATUS),
]

_RUN_VIEWS = [
    # Run-level: span S of every worker as one job. The plugin computes it in the
    # background (202 with progress); the CLI calls `compute(run, span, cache_dir)`.
    Endpoint(
        "distributed",
        Scope.RUN,
        contract.DistributedResponse,
        Lazy("kinetoscope.analysis.distributed.rank_summaries", "analyze_run"),
        page="distributed",
        supports=_several_workers,
        loading=contract.DistributedLoading,
        answer=Answer.RUN_JOB,
    ),
    # The run's memory snapshots (`*.pickle`), read in the same background job way: a big
    # one never holds a request. `span` picks the trace they are aligned with.
    Endpoint(
        "memory_snapshot",
        Scope.RUN,
        Lazy("kinetoscope.api.snapshots", "MemorySnapshotResponse"),
        Lazy("kinetoscope.api.snapshots", "memory_snapshot_view"),
        page="memory_snapshot",
        supports=_has_snapshots,
        loading=contract.DistributedLoading,
        answer=Answer.RUN_JOB,
    ),
]

_LOGDIR_VIEWS = [
    # Logdir-level: every run's traces (span S of each worker) as one background job, each
    # trace summarised once and cached on disk (analysis/trends). The CLI's `kinetoscope
    # trend` calls `compute(runs, params, cache_dir, executor, progress, store)`.
    Endpoint(
        "trend",
        Scope.LOGDIR,
        trend_types.TrendView,
        Lazy("kinetoscope.analysis.trends.view", "trend_view"),
        request=trend_types.TrendParams,
        page="trends",
        loading=trend_types.TrendLoading,
        answer=Answer.RUN_JOB,
    ),
]

_PAIR_VIEWS = [
    # Two spans, base and target (`Scope.PAIR`), 202 while either loads. Computed per
    # request from the views of both: an answer cached with one file would outlive a
    # change of the other.
    Endpoint(
        "diff",
        Scope.PAIR,
        Lazy("kinetoscope.analysis.diff.view", "DiffView"),
        Lazy("kinetoscope.analysis.diff.view", "diff_view"),
        request=contract.DiffParams,
        version=diff_types.VERSION,
        cache=Cache.NONE,
        page="diff",
        loading=contract.StatusResponse,
    ),
]

_FILES = [
    Endpoint("download", Scope.SPAN, None, answer=Answer.FILE),  # the trace file, streamed
    Endpoint("static/*", Scope.STATIC, None, answer=Answer.FILE),  # the built frontend
]

ENDPOINTS: dict[str, Endpoint] = {
    e.name: e
    for e in [
        *_LISTING,
        *_RUN_VIEWS,
        *_LOGDIR_VIEWS,
        *_SPAN_VIEWS,
        *_GPU_IDLE_VIEWS,
        *_HEALTH_VIEWS,
        *_TRACE_VIEW,
        *_PAIR_VIEWS,
        *_FILES,
    ]
}

# Views of one span (model, params → response), in page order.
VIEWS: dict[str, Endpoint] = {e.name: e for e in [*_SPAN_VIEWS, *_GPU_IDLE_VIEWS, *_HEALTH_VIEWS]}
# Run-level views ((run, span name, cache folder) → response).
RUN_VIEWS: dict[str, Endpoint] = {e.name: e for e in _RUN_VIEWS}
# Logdir-level views ((runs, params, cache folder, ...) → response).
LOGDIR_VIEWS: dict[str, Endpoint] = {e.name: e for e in _LOGDIR_VIEWS}


def supported_views(model: TraceModel) -> list[str]:
    """The per-span views `kinetoscope report` prints for this model."""
    return [name for name, view in VIEWS.items() if view.in_report and view.supports(model)]


def span_pages(model: TraceModel) -> list[str]:
    """`status.views`: the pages this trace's data supports, in page order."""
    pages = [
        e.page
        for e in ENDPOINTS.values()
        if e.page and e.scope in (Scope.SPAN, Scope.SPANS) and e.supports(model)
    ]
    return list(dict.fromkeys(pages))


def run_pages(run: Run) -> list[str]:
    """A run's `views`: the run-level pages it supports."""
    return [e.page for e in RUN_VIEWS.values() if e.page and e.supports(run)]
