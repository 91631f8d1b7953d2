"""The endpoint registry: every HTTP route of the plugin, one entry each (see
`registry.Endpoint`). The plugin's handler, `kinetoscope report`, `status.views`, the
generated TypeScript types and the docs tests all read this one table.

A view's endpoints are declared in its folder of analysis (`analysis/<view>/endpoint.py`,
`ENDPOINTS`), and collected here from the generated list of those folders
(`view_folders.py`): a new view is a folder with an `endpoint.py` (and a section in
docs/http_api.md). Declared here are only the routes above analysis: the listing, the
trace view and the files."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from ..ingest.discovery import Run
from ..model.errors import ViewParamError
from ..model.trace_model import TraceModel
from ..trace_view import params as trace_params
from . import contract
from .listing import run_listing, worker_listing
from .registry import SPAN_STATUS, Answer, Cache, Endpoint, Lazy, Scope
from .requests import Params
from .view_folders import VIEW_FOLDERS

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


def _with_loading(endpoint: Endpoint) -> Endpoint:
    """A view folder's endpoint as the doors read it: the span status marker of its 202
    (`SPAN_STATUS`, below api) made the span views' loading type (the status, and
    `queued` while it waits for memory)."""
    if endpoint.loading_ref is SPAN_STATUS:
        return replace(endpoint, loading_ref=contract.SpanViewLoading)
    return endpoint


# Every view folder's endpoints, in the folders' page order.
_FOLDERS = [_with_loading(e) for folder in VIEW_FOLDERS for e in folder.ENDPOINTS]


def _of(scope: Scope) -> list[Endpoint]:
    return [e for e in _FOLDERS if e.scope is scope]


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
        loading_ref=contract.TraceViewLoading,
        **extra,
    )


def _trace_module_route(
    name: str, module: str, response: str, request: Any, kept: bool = False, **extra: Any
) -> Endpoint:
    """A trace view route answered by `trace_view.<module>.<name>` (imported when first
    asked: a report never does); `kept`: its JSON by `<name>_kept` (`kept_json`)."""
    path = f"kinetoscope.trace_view.{module}"
    kept_ref = Lazy(path, f"{name}_kept") if kept else None
    return _trace_route(
        name, Lazy(path, response), Lazy(path, name), request, kept_ref=kept_ref, **extra
    )


_TRACE_VIEW = [
    _trace_module_route(
        "tracks",
        "track_list",
        "TracksView",
        trace_params.TracksParams,
        kept=True,
        page="trace",
        supports=_has_events,
    ),
    _trace_module_route("trace", "window_query", "WindowView", trace_params.TraceParams, True),
    _trace_module_route("event", "event_details", "EventView", trace_params.EventParams),
    _trace_module_route("flows", "flow_window", "FlowsView", trace_params.FlowsParams, True),
    _trace_module_route("search", "search", "SearchView", trace_params.SearchParams),
    _trace_module_route(
        "range_summary",
        "range_summary",
        "RangeSummaryView",
        trace_params.RangeSummaryParams,
        kept=True,
    ),
    _trace_module_route(
        "source_paths", "source_paths", "SourcePathsView", trace_params.SourcePathsParams
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

_RUN_VIEWS = _of(Scope.RUN)

_FILES = [
    Endpoint("download", Scope.SPAN, None, answer=Answer.FILE),  # the trace file, streamed
    Endpoint("static/*", Scope.STATIC, None, answer=Answer.FILE),  # the built frontend
]

ENDPOINTS: dict[str, Endpoint] = {
    e.name: e
    for e in [
        *_LISTING,
        *_RUN_VIEWS,
        *_of(Scope.LOGDIR),
        *_of(Scope.SPAN),
        *_TRACE_VIEW,
        *_of(Scope.PAIR),
        *_FILES,
    ]
}

# Views of one span (model, params → response), in page order.
VIEWS: dict[str, Endpoint] = {e.name: e for e in _of(Scope.SPAN)}
# Run-level views ((run, span name, cache folder) → response).
RUN_VIEWS: dict[str, Endpoint] = {e.name: e for e in _RUN_VIEWS}
# Logdir-level views ((runs, params, cache folder, ...) → response).
LOGDIR_VIEWS: dict[str, Endpoint] = {e.name: e for e in _of(Scope.LOGDIR)}


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
