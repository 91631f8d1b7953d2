"""One run's views for a door that reports them all at once (`kinetoscope report`): its
span's views and its run-level views, each as its route answers it (through `dispatch`),
in one call, so the door goes down once per run and comes back with everything it prints.

Raised as the door tells them apart: `NotFound` (a worker or span that names nothing),
`Unreadable` (the span's trace cannot be read: the message, the status route's body and
the run-level views, which answer from the other ranks all the same) and
`Refused` (a query no view takes or one a view refuses: a usage error, as the route's
400). A view asked for by name whose data the trace lacks is `skipped`, not raised."""

from __future__ import annotations

import contextlib
import os
import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec

from ..ingest.build import TRIM_AFTER_BYTES
from ..ingest.discovery import Run
from ..ingest.heap import return_freed_memory
from ..ingest.limits import env_number
from ..model.derived_tables import forget_derived, unrecorded
from ..model.errors import TooLarge, ViewParamError
from ..model.trace_model import TraceModel
from ..store.run_context import Progress
from ..store.trace_store import LoadFailed
from .dispatch import Dispatch, Names, Ready
from .endpoints import RUN_VIEWS, VIEWS, supported_views
from .resolve import resolve
from .session import Session
from .table_uses import TABLE_USES

# Span views computed at once (KINETOSCOPE_VIEW_THREADS; unset: `_view_threads`' rule).
VIEW_THREADS = int(env_number("KINETOSCOPE_VIEW_THREADS", 0))
# Two view threads from this many rows on, one below. Two raise a report's peak RSS by a
# near-fixed part of the views' (glibc keeps each thread's freed pages in its own arena):
# H100 253 MB tile (925k rows) 137-139 -> 157-167 MB, over its bound (0.6x JSON: 152);
# V100 259 MB (606k) 128 -> 146-148 of 155. Trimming the heap first, heap pages by mmap
# above 4-16 MB, one arena, or the heavy views first alone did not bring H100 under 150.
# Nor did a heavy lane (Overview, Memory, Operators, Modules) beside a light one
# (Kernels, GPU idle, Health; or GPU idle and Health alone): H100 141-159 MB (0.57x:
# 144), one thread 139-141 (bench/view_weights.py --schedule): a second thread's
# arena alone costs more than the room left.
# Larger traces have room: 1 GB V100 (2.35M rows) 370 -> 430-450 MB of 604, wall 2.6 ->
# 2.1 s at 2 cores (one core: one thread). Below ~100 MB two threads gain nothing
# (36/65 MB tiles: the same wall).
VIEW_THREADS_MIN_ROWS = 1_500_000


class Refused(ViewParamError):
    """A query the views asked do not take, or that one of them refused."""


class Unreadable(Exception):
    """The span's trace cannot be read: `status` is what the status route says of it
    (under "status"), beside the run-level views' answers."""

    def __init__(self, message: str, status: dict[str, Any]) -> None:
        super().__init__(message)
        self.status = status


class RunReport(msgspec.Struct):
    """`views`: `status` (the span's, as the status route says) and each view's JSON by
    name (decoded, or its text: `report_run`'s `raw`); `worker`/`span`/`model` the span
    reported (None for a run of snapshots only); `skipped`: (view, why) of views asked
    for whose data the trace lacks."""

    views: dict[str, Any]
    worker: str | None = None
    span: str | None = None
    model: TraceModel | None = None
    skipped: list[tuple[str, str]] = msgspec.field(default_factory=list)
    too_large: list[tuple[str, str]] = msgspec.field(default_factory=list)


def report_run(
    session: Session,
    run: Run,
    worker: str | None,
    span: str | None,
    asked: Sequence[str] | None,
    params: Sequence[str],
    progress: Progress | None = None,
    raw: bool = False,
) -> RunReport:
    """The views `asked` (None: every view the span supports, and the run-level views
    the run supports) of `run`'s worker and span (defaults as the resolver's), with the
    parameters `params` (`KEY=VALUE` texts, a route's query); run-level jobs tell
    `progress` of their files. `raw`: each view as the route's JSON text (`msgspec.Raw`,
    encoded into a document as it is), not decoded (a 2,048-rank Distributed view's 14 MB
    took 0.3 s to decode and encode again)."""
    query = _query(params)
    if not run.workers:  # a folder of memory snapshots or compile logs only
        _refuse_unknown_keys(query, _run_view_names(run, asked))
        return RunReport(_run_views(session, run, span, asked, progress, {}, raw, query))
    target = resolve(run, worker, span)
    store, path = session.store, target.span.path
    try:  # the views answer while its disk-cache entry is written (`Session.close` waits)
        model = store.loaded(path)
    except LoadFailed as exc:
        raise Unreadable(
            exc.error["message"],
            _run_views_without(session, run, span, asked, progress, raw, query, path),
        ) from None
    out: dict[str, Any] = {"status": store.status(path)}
    names = list(asked or supported_views(model))
    later = _run_view_names(run, asked)  # run-level views: after the span's, as their uses
    _refuse_unknown_keys(query, [name for name in names if name in VIEWS] + later)
    report = RunReport(out, target.worker.name, target.span.name, model)
    at = {"run": run.name, "worker": target.worker.name, "span": target.span.name}
    span_views = [name for name in names if name in VIEWS]
    # Views to compute (a model just built: a cached one's views are kept), in one thread
    if store.state_for(path).built and _view_threads(model) < 2:
        _build_first(model, span_views)
    _span_views(session, at, query, span_views, report, raw, later)
    _run_views(session, run, span, asked, progress, out, raw, query)
    return report


def _run_views_without(
    session: Session,
    run: Run,
    span: str | None,
    asked: Sequence[str] | None,
    progress: Progress | None,
    raw: bool,
    query: dict[str, str],
    path: str,
) -> dict[str, Any]:
    """The span's trace could not be read: its status, and the run-level views all the
    same (one broken file never hides the other ranks: each view lists it in `errors`)."""
    out: dict[str, Any] = {"status": session.store.status(path)}
    _run_views(session, run, span, asked, progress, out, raw, query)
    return out


def _span_views(
    session: Session,
    at: Names,
    query: dict[str, str],
    names: list[str],
    report: RunReport,
    raw: bool,
    later: list[str],
) -> None:
    """The span's views, each as a route answers the query (none: the default form),
    computed side by side (`VIEW_THREADS`); answered, refused or skipped in `names`'
    order, as one after another would be. The views `later` are computed after them."""
    calls = []
    for name in names:
        call = Dispatch(VIEWS[name], session, at, query)
        try:
            call.prepare()  # the query decoded as the route decodes it
        except ViewParamError as exc:
            raise Refused(f"view {name!r}: {exc}") from None
        calls.append((name, call))
    answers = _answers([call for _, call in calls], names, later, report.model)
    for (name, call), answer in zip(calls, answers):
        if isinstance(answer, ViewParamError):
            if call.params:  # the view refused its parameters: a usage error, as the 400
                raise Refused(f"view {name!r}: {answer}") from None
            report.skipped.append((name, str(answer)))  # asked of a trace without its data
        elif isinstance(answer, TooLarge):  # the route's 413: said in its place
            report.too_large.append((name, str(answer)))
            report.views[name] = {"error": {"kind": "too_large", "message": str(answer)}}
        elif isinstance(answer, BaseException):
            raise answer
        else:
            report.views[name] = msgspec.Raw(answer.body) if raw else answer.json()


def _answers(
    calls: list[Dispatch], names: list[str], later: list[str], model: TraceModel | None
) -> list[Ready | BaseException]:
    """Each call's answer (`names[i]`'s), or what it raised, in `calls`' order: one after
    another, or in threads (numpy lets the GIL go in its passes over columns, and the
    model's derived tables are built once, the first thread to need one building it
    while another waits). Either way, after each answer the model's derived tables that
    no view left (the calls not yet answered, then the `later` views) reads are let go:
    the report's peak memory is then what the views left need, not all the tables built
    so far (in two threads, without it, the 253 MB H100 tile peaked ~45 MB higher)."""
    answered: set[int] = set()
    lock = threading.Lock()

    def answer(i: int) -> Ready | BaseException:
        try:
            result: Ready | BaseException = calls[i].ready()
        except Exception as exc:  # noqa: BLE001 - raised in the caller, in order
            result = exc
        with lock:
            answered.add(i)
            left = [name for j, name in enumerate(names) if j not in answered]
        if model is not None:
            _let_go_of_tables(model, [*left, *later])
        return result

    threads = _view_threads(model)
    if len(calls) < 2 or threads < 2:
        return [answer(i) for i in range(len(calls))]
    for call in calls:  # their modules imported here, in turn, not by two threads at once
        _ = call.endpoint.compute
    with ThreadPoolExecutor(threads, thread_name_prefix="kinetoscope-view") as pool:
        return list(pool.map(answer, range(len(calls))))


# Built beside the first views, in a thread of its own, where one thread computes the views
# of a model just built: the Overview's health checks (numpy passes and compiled walks
# that let the GIL go; 0.03-0.045 s of CPU on the 250 MB tiles) while its op tree is built,
# on the core the views leave idle, then the Memory view's index. Cold CLI report, 2 cores
# (busy: load ~11), 12 runs each, median wall: V100 259 MB 0.735 -> 0.70 s, H100 253 MB
# 0.82 -> 0.765 s (quieter, the checks alone: 0.68 -> 0.64, 0.74 -> 0.705). Peak RSS: the
# checks' temporaries come early, below the peak (Memory, Operators), the thread's arena is
# trimmed once it is done, and the memory index made there is freed there, not into the
# views' heap: median (max) H100 0.57 -> 0.56x the JSON (0.58x; the checks alone: 0.57x,
# max 0.59x), V100 0.52 -> 0.54x (0.55x). The op tree there too gained nothing; the GPU
# idle work or the roofline costs there took H100 to 0.59-0.60x. Below AHEAD_MIN_ROWS
# (36/65 MB tiles: 132k/151k rows) the wall is the same and the CPU 0.015-0.02 s more.
AHEAD_MIN_ROWS = 300_000
AHEAD_TABLES = ("_health_findings", "_memory_index")


# Built before the views, in one view thread, where one of them reads it: the Overview of a
# trace without a communication op no longer builds it (`kernel_classes`), and built by the
# next view that reads it (Memory, its own index held) the H100 253 MB tile's peak RSS rose
# from a median 141 to 146 MB (0.6x its JSON: 152); built first, 143.
OP_TREE = "_op_tree"


def _build_first(model: TraceModel, names: list[str]) -> None:
    """Before the views `names` of a model just built, computed one after another: the
    `AHEAD_TABLES` for a big model, in a thread of their own beside this one, and here
    the op tree where one of the views reads it."""
    if len(model) >= AHEAD_MIN_ROWS:
        _build_ahead(model, names)
    if OP_TREE in _reads(names):
        from ..analysis.core.optree import op_tree

        op_tree(model)


def _reads(names: list[str]) -> set[str]:
    """The derived structures any of the views `names` reads (`TABLE_USES`)."""
    return set().union(*(TABLE_USES.get(name, ()) for name in names))


def _build_ahead(model: TraceModel, names: list[str]) -> None:
    """Start building, in a thread, the `AHEAD_TABLES` that one of the views `names`
    reads; a view that asks for one meanwhile waits for that build (`TraceModel.derived`)."""
    read = _reads(names)
    builds: list[Callable[[TraceModel], object]] = []
    if AHEAD_TABLES[0] in read:  # the views' modules: imported here, by this thread
        from ..analysis.core.health.view import findings_of

        builds.append(findings_of)
    if AHEAD_TABLES[1] in read:
        from ..analysis.memory.index import memory_index

        builds.append(memory_index)
    if not builds:
        return

    def build() -> None:
        for make in builds:
            with contextlib.suppress(Exception):  # the view that reads it builds it, raises
                make(model)
        return_freed_memory()  # its arena's free pages: no view thread reuses them

    threading.Thread(target=unrecorded(build), name="kinetoscope-ahead", daemon=True).start()


def _view_threads(model: TraceModel | None) -> int:
    """`VIEW_THREADS` where set, else two for a model of `VIEW_THREADS_MIN_ROWS` rows on
    a machine of two cores or more."""
    if VIEW_THREADS:
        return VIEW_THREADS
    big = model is not None and len(model) >= VIEW_THREADS_MIN_ROWS
    return 2 if big and (os.cpu_count() or 1) >= 2 else 1


def _let_go_of_tables(model: TraceModel, left: list[str]) -> None:
    """Drop the model's derived tables that none of the views `left` asks for (as
    `table_uses` recorded); give the heap's pages back when that let go of much."""
    keep = _reads(left)
    if forget_derived(model, keep) >= TRIM_AFTER_BYTES:
        return_freed_memory()


def _run_view_names(run: Run, asked: Sequence[str] | None) -> list[str]:
    """The run-level views the report computes (`asked`, else those in the report)."""
    return [
        name
        for name, run_view in RUN_VIEWS.items()
        if (name in asked if asked else run_view.in_report) and run_view.supports(run)
    ]


def _run_views(
    session: Session,
    run: Run,
    span: str | None,
    asked: Sequence[str] | None,
    progress: Progress | None,
    out: dict[str, Any],
    raw: bool,
    query: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run-level: every worker's span as one job, the same job as the route's, each with
    the query's keys its request type takes (a value it refuses: `Refused`, as the 400)."""
    for name in _run_view_names(run, asked):
        endpoint = RUN_VIEWS[name]
        mine = _taken(query or {}, endpoint)
        call = Dispatch(endpoint, session, {"run": run.name, "span": span}, mine, progress)
        try:
            answer = call.ready()
        except ViewParamError as exc:
            raise Refused(f"view {name!r}: {exc}") from None
        out[name] = msgspec.Raw(answer.body) if raw else answer.json()
    return out


def _taken(query: Mapping[str, str], endpoint: Any) -> dict[str, str]:
    if not query:
        return {}
    keys = typing.get_type_hints(endpoint.request) if endpoint.request is not None else {}
    return {k: v for k, v in query.items() if k in keys}


def _refuse_unknown_keys(query: Mapping[str, str], names: list[str]) -> None:
    """Every query key is one that a view asked for takes (its request type's)."""
    if not query:
        return  # nothing to check: no request type imported
    endpoints = {name: VIEWS.get(name) or RUN_VIEWS[name] for name in names}
    takes = {
        name: list(typing.get_type_hints(e.request)) if e.request is not None else []
        for name, e in endpoints.items()
    }
    known = {key for keys in takes.values() for key in keys}
    unknown = sorted(set(query) - known)
    if unknown:
        said = "; ".join(f"{n}: {', '.join(keys) or 'none'}" for n, keys in takes.items())
        raise Refused(f"--param {unknown[0]!r} is not a parameter of the views asked ({said})")


def _query(items: Sequence[str]) -> dict[str, str]:
    """`KEY=VALUE` texts (`--param`) as a query."""
    bad = [item for item in items if "=" not in item]
    if bad:
        raise Refused(f"--param wants KEY=VALUE, not {bad[0]!r}")
    return dict(item.split("=", 1) for item in items)
