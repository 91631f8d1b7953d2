"""`kinetoscope report`'s work once its first trace is loading: each run's views, as the
routes answer them, through the api (`api/report`; the view registry imports here, not in
`main.py`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..api.endpoints import RUN_VIEWS, VIEWS
from ..api.lower import Run
from ..api.report import Refused, Unreadable
from ..api.report import report_run as run_report
from ..api.resolve import NotFound
from ..api.session import Session
from .errors import ParamRefused, ReportError, RunFailed
from .progress import RankProgress


def unknown_views(asked: list[str] | None) -> str | None:
    """What argparse's `choices` would say of a `--view` that names no view, else None."""
    known = sorted([*VIEWS, *RUN_VIEWS])
    bad = [name for name in asked or [] if name not in known]
    if not bad:
        return None
    return f"argument --view: invalid choice: {bad[0]!r} (choose from {', '.join(known)})"


def report_run(session: Session, run: Run, args: argparse.Namespace) -> dict[str, Any]:
    """The run's views as the routes answer them (`api/report`: down once), printed as
    text or kept for the JSON document."""
    try:
        progress = RankProgress(run.name)
        raw = args.format == "json"  # printed as the routes answered them: not decoded
        report = run_report(
            session, run, args.worker, args.span, args.view, args.param, progress, raw
        )
    except NotFound as exc:
        raise ReportError(str(exc)) from None
    except Unreadable as exc:  # the run-level views answered all the same: printed
        if args.format == "text" and len(exc.status) > 1:
            _print_views(run.name, {k: v for k, v in exc.status.items() if k != "status"})
        raise RunFailed(str(exc), exc.status) from None
    except Refused as exc:
        raise ParamRefused(str(exc)) from None
    views, model = report.views, report.model
    for name, why in report.skipped:  # asked with --view of a trace without its data
        print(f"kinetoscope: run {run.name!r}: {name}: {why}", file=sys.stderr)
    for name, why in report.too_large:  # the route's 413: the other views still print
        print(f"kinetoscope: run {run.name!r}: {name}: {why}", file=sys.stderr)
    if report.too_large:
        args.too_large = True
    if model is None:  # a folder of memory snapshots or compile logs only
        if args.format == "text":
            _print_views(run.name, views)
        return views
    if args.format == "text":
        from .report_text import render_text  # the renderers: text only

        print(render_text(run.name, str(report.worker), str(report.span), model, views))
    elif model.partial:  # the text report says so in its heading
        note = "partial trace (see status.warnings)"
        print(f"kinetoscope: run {run.name!r}: {note}", file=sys.stderr)
    return views


def _print_views(run: str, views: dict[str, Any]) -> None:
    """Run-level views as text, without a span's report (none, or it could not be read)."""
    from ..api.lower import report_width
    from .report_text import renderer_of  # the renderers: text only

    width = report_width()
    renderers = {n: renderer_of(n) for n in views}
    blocks = [render(views[n], width) for n, render in renderers.items() if render]
    print(f"== run {run}\n\n" + "\n\n".join(blocks) + "\n")
