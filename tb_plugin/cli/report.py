"""`kinetoscope report`'s work once its first trace is loading: each run's views, as the
routes answer them, through the api's dispatcher (the view registry imports here, not in
`main.py`)."""

from __future__ import annotations

import argparse
import sys
import typing
from typing import Any

from ..api.dispatch import Dispatch
from ..api.endpoints import RUN_VIEWS, VIEWS, supported_views
from ..api.lower import LoadFailed, Run, ViewParamError
from ..api.resolve import NotFound, resolve
from ..api.session import Session
from .errors import ParamRefused, ReportError, RunFailed
from .progress import RankProgress
from .report_snapshot import render_memory_snapshot
from .report_text import render_text


def unknown_views(asked: list[str] | None) -> str | None:
    """What argparse's `choices` would say of a `--view` that names no view, else None."""
    known = sorted([*VIEWS, *RUN_VIEWS])
    bad = [name for name in asked or [] if name not in known]
    if not bad:
        return None
    return f"argument --view: invalid choice: {bad[0]!r} (choose from {', '.join(known)})"


def report_run(session: Session, run: Run, args: argparse.Namespace) -> dict[str, Any]:
    store = session.store
    if not run.workers and run.snapshots:  # a folder of memory snapshots only
        views = _run_views(session, run, args, {})
        if args.format == "text" and "memory_snapshot" in views:
            print(f"== run {run.name}\n\n{render_memory_snapshot(views['memory_snapshot'])}\n")
        return views
    try:
        target = resolve(run, args.worker, args.span)
    except NotFound as exc:
        raise ReportError(str(exc)) from None
    worker, span = target.worker, target.span
    try:
        model = store.wait(span.path)
    except LoadFailed as exc:
        raise RunFailed(exc.error["message"], {"status": store.status(span.path)}) from None
    # What the status route says of this trace: state, partial, warnings, error.
    out: dict[str, Any] = {"status": store.status(span.path)}
    names = args.view or supported_views(model)
    query = _params(args.param)
    _refuse_unknown_keys(query, [name for name in names if name in VIEWS])
    asked = {"run": run.name, "worker": worker.name, "span": span.name}
    for name in names:
        if name not in VIEWS:
            continue  # run-level views, below
        call = Dispatch(VIEWS[name], session, asked, query)
        try:
            call.prepare()  # the query decoded as the route decodes it
        except ViewParamError as exc:
            raise ParamRefused(f"view {name!r}: {exc}") from None
        try:  # as a route answers the query of --param (none: the default form)
            out[name] = call.ready().json()
        except ViewParamError as exc:
            if call.params:  # the view refused its parameters: a usage error, as the 400
                raise ParamRefused(f"view {name!r}: {exc}") from None
            # asked with --view of a trace without its data: said, the others still print
            print(f"kinetoscope: run {run.name!r}: {name}: {exc}", file=sys.stderr)
            continue
    _run_views(session, run, args, out)
    if args.format == "text":
        print(render_text(run.name, worker.name, span.name, model, out))
    elif model.partial:  # the text report says so in its heading
        note = "partial trace (see status.warnings)"
        print(f"kinetoscope: run {run.name!r}: {note}", file=sys.stderr)
    return out


def _run_views(
    session: Session, run: Run, args: argparse.Namespace, out: dict[str, Any]
) -> dict[str, Any]:
    for name, run_view in RUN_VIEWS.items():
        if run_view.supports(run) and (not args.view or name in args.view):
            # Run-level: every worker's span as one job; the same job as the route's.
            # Progress ("ranks summarised 57/256") goes to stderr as the summaries come in.
            names = {"run": run.name, "span": args.span}
            call = Dispatch(run_view, session, names, {}, RankProgress(run.name))
            out[name] = call.ready().json()
    return out


def _refuse_unknown_keys(query: dict[str, str], names: list[str]) -> None:
    """Every `--param` key is one that a view asked for takes (its request type's)."""
    takes = {name: list(typing.get_type_hints(VIEWS[name].request)) for name in names}
    known = {key for keys in takes.values() for key in keys}
    unknown = sorted(set(query) - known)
    if unknown:
        said = "; ".join(f"{n}: {', '.join(keys) or 'none'}" for n, keys in takes.items())
        raise ParamRefused(f"--param {unknown[0]!r} is not a parameter of the views asked ({said})")


def _params(items: list[str]) -> dict[str, str]:
    """`--param KEY=VALUE` options as a query."""
    bad = [item for item in items if "=" not in item]
    if bad:
        raise ParamRefused(f"--param wants KEY=VALUE, not {bad[0]!r}")
    return dict(item.split("=", 1) for item in items)
