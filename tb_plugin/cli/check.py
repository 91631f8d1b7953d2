"""`kinetoscope check LOGDIR [--run R] [--strict]`: the `health` route of every worker's
span of the chosen runs, as text (or `--format json`: {run: {worker: {span: health}}}).
A gate before traces are uploaded: exit 0 when every trace is healthy, 2 when one has an
error (or cannot be read at all), 1 when one has warnings and `--strict` is given.
A run of several workers (ranks) adds the run-level checks of the `distributed` view
(`rank_clock_skew`) under the worker name `RUN_WORKER`."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

import msgspec

from ..api.dispatch import Dispatch
from ..api.endpoints import ENDPOINTS
from ..api.lower import LoadFailed, Run, check_text, health_status
from ..api.session import FixedListing, Session
from .errors import EXIT_LOAD, ReportError
from .targets import targets

EXIT_ERRORS, EXIT_WARNINGS = 2, 1
RUN_WORKER = "all ranks"  # the key of a run's run-level checks among its workers


def run_check(args: argparse.Namespace) -> int:
    with contextlib.closing(Session(FixedListing(()), cache=not args.no_cache)) as session:
        try:
            results = _check_runs(session, args)
        except ReportError as exc:
            print(f"kinetoscope: {exc}", file=sys.stderr)
            return EXIT_LOAD
    if args.format == "json":
        sys.stdout.buffer.write(msgspec.json.encode(results) + b"\n")
    else:
        print(check_text(results, RUN_WORKER))
    states = {h["status"] for w in results.values() for s in w.values() for h in s.values()}
    if "errors" in states or "unreadable" in states:
        return EXIT_ERRORS
    return EXIT_WARNINGS if args.strict and "warnings" in states else 0


def _check_runs(session: Session, args: argparse.Namespace) -> dict[str, Any]:
    """{run: {worker: {span: health}}} of the chosen runs' spans."""
    results: dict[str, Any] = {}
    runs = targets(args, session)[1]
    for run in runs:
        for worker in run.workers:
            for span in worker.spans:
                if args.span is None or span.name == args.span:
                    spans = results.setdefault(run.name, {}).setdefault(worker.name, {})
                    names = {"run": run.name, "worker": worker.name, "span": span.name}
                    spans[span.name] = _health(session, names)
        if len(run.workers) > 1:
            results.setdefault(run.name, {})[RUN_WORKER] = _run_health(session, run, args.span)
    return results


def _run_health(session: Session, run: Run, span: str | None) -> dict[str, Any]:
    """{span: {status, checks}}: the run-level checks of the ranks' chosen spans."""
    names = {"run": run.name, "span": span}
    view = Dispatch(ENDPOINTS["distributed"], session, names, {}).ready().json()
    checks = view["health"]
    return {view["span"]: {"status": health_status(checks), "checks": checks}}


def _health(session: Session, names: dict[str, str]) -> dict[str, Any]:
    try:
        return Dispatch(ENDPOINTS["health"], session, names, {}).ready().json()  # type: ignore[no-any-return]
    except LoadFailed as exc:
        return {"status": "unreadable", "error": exc.error["message"], "checks": []}
