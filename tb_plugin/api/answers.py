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
    targets = _loading(store, answer_targets(endpoint, runs, names))
    if scope is Scope.PAIR:
        return _plain(endpoint.call(*[store.wait(side.span.path) for side in targets], decoded))
    if scope is Scope.SPANS:
        several = bool(worker_names(_text(names.get("workers"))))
        traces = [
            WorkerTrace(t.worker.name if several else None, store.wait(t.span.path))
            for t in targets
        ]
        return _plain(endpoint.call(traces, decoded))
    target = targets[0]
    if endpoint.answer is Answer.STATUS:
        return status_body(store, target)
    store.wait(target.span.path)
    return msgspec.json.decode(endpoint.answer_json(store, target.span.path, decoded))


def answer_targets(endpoint: Endpoint, runs: Sequence[Run], names: Names) -> list[Target]:
    """The trace files a span-level route's answer reads, resolved as the routes resolve
    them: its one span, the trace view's `workers=W1,W2` (each on one time axis) or one
    `worker`, a pair's base then target; none for run- and logdir-level routes."""
    scope = endpoint.scope
    if scope not in (Scope.SPAN, Scope.SPANS, Scope.PAIR):
        return []
    run = find_run(runs, names.get("run"))
    span = names.get("span")
    if scope is Scope.PAIR:
        target_run = find_run(runs, names.get("target_run"), "target_run")
        return [
            resolve(run, names.get("worker"), span),
            resolve(target_run, names.get("target_worker"), names.get("target_span")),
        ]
    several = worker_names(_text(names.get("workers"))) if scope is Scope.SPANS else []
    if several:
        return [resolve(run, name, span) for name in several]
    return [resolve(run, names.get("worker"), span)]


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
