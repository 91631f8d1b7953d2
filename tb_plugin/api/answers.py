"""A route's JSON for a door that waits (the MCP server; a script): the same names through
`resolve`, the same parameters through the request type, the same compute function and
cache as the TensorBoard route, only blocking where the route answers 202."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..ingest.discovery import Run
from ..store.trace_store import LoadFailed, NotReady, TraceStore
from ..trace_view.workers import WorkerTrace
from .endpoints import span_pages
from .registry import Answer, Endpoint, Scope
from .resolve import Target, find_run, resolve, worker_names

Names = Mapping[str, Any]  # run, worker, workers, span, target_run, target_worker, target_span


def answer(
    endpoint: Endpoint,
    store: TraceStore,
    runs: Sequence[Run],
    names: Names,
    params: Mapping[str, str],
) -> Any:
    """The route's JSON body, decoded (what `kinetoscope report --format json` prints for
    the view). Raises the resolver's errors, `ViewParamError` and the store's `LoadFailed`."""
    if endpoint.response is None:
        raise ValueError(f"{endpoint.name} answers a file, not JSON")
    scope = endpoint.scope
    if scope is Scope.LOGDIR:
        if endpoint.answer is Answer.RUN_JOB:  # the trend: every run's traces, waited for
            cache_dir = str(store.cache.root) if store.cache else None
            decoded = endpoint.decode(params)
            return _plain(endpoint.call(tuple(runs), decoded, cache_dir, None, None, store))
        return _plain(endpoint.call(tuple(runs)))
    run = find_run(runs, names.get("run"))
    if scope is Scope.RUN:
        endpoint.decode(params)
        if endpoint.answer is Answer.RUN_JOB:
            cache_dir = str(store.cache.root) if store.cache else None
            view = endpoint.call(run, _text(names.get("span")), cache_dir, None, None, store)
            return _plain(view)
        return _plain(endpoint.call(run))
    if scope is Scope.WORKER:
        return _plain(endpoint.call(run, resolve(run, names.get("worker")).worker))
    decoded = endpoint.decode(params)
    if scope is Scope.PAIR:
        target_run = find_run(runs, names.get("target_run"), "target_run")
        sides = [
            resolve(run, names.get("worker"), names.get("span")),
            resolve(target_run, names.get("target_worker"), names.get("target_span")),
        ]
        models = [store.wait(side.span.path) for side in _loading(store, sides)]
        return _plain(endpoint.call(*models, decoded))
    if scope is Scope.SPANS:
        return _plain(endpoint.call(_worker_traces(store, run, names), decoded))
    target = resolve(run, names.get("worker"), names.get("span"))
    if endpoint.answer is Answer.STATUS:
        return status_body(store, target)
    store.wait(target.span.path)
    return msgspec.json.decode(endpoint.answer_json(store, target.span.path, decoded))


def status_body(store: TraceStore, target: Target) -> dict[str, Any]:
    """The `status` route's body of one trace file, named as the resolver found it (the
    plugin's 202 answers carry it too)."""
    span = target.span
    status = store.status(span.path)
    views: list[str] = []
    if status["state"] == "ready":
        try:
            views = span_pages(store.model(span.path))
        except (NotReady, LoadFailed):  # dropped from memory, or failed, since
            views = []
    name = {"run": target.run.name, "worker": target.worker.name, "span": span.name}
    return {**name, **status, "views": views}


def _worker_traces(store: TraceStore, run: Run, names: Names) -> list[WorkerTrace]:
    """The trace view's workers: `workers=W1,W2` on one time axis, else one `worker`."""
    several = worker_names(_text(names.get("workers")))
    span = names.get("span")
    if not several:
        target = resolve(run, names.get("worker"), span)
        return [WorkerTrace(None, store.wait(target.span.path))]
    targets = _loading(store, [resolve(run, name, span) for name in several])
    return [WorkerTrace(t.worker.name, store.wait(t.span.path)) for t in targets]


def _loading(store: TraceStore, targets: list[Target]) -> list[Target]:
    """Every load started before waiting on one."""
    for target in targets:
        store.state_for(target.span.path)
    return targets


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _plain(value: Any) -> Any:
    """What the route's JSON decodes to (dataclasses, numpy scalars and tuples made plain)."""
    return msgspec.json.decode(msgspec.json.encode(value))
