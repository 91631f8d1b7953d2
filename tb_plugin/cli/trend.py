"""`kinetoscope trend LOGDIR`: the `trend` route without a browser: every run of the logdir
in trace start order, and what changed (regressions, improvements). `--format json` prints
exactly what the route returns; `--fail-on-regression` exits 1 when a regression is named
(a CI gate); `--baseline RUN` compares every run with that one."""

from __future__ import annotations

import argparse
import sys

import msgspec

from ..api.dispatch import Dispatch
from ..api.endpoints import LOGDIR_VIEWS
from ..api.lower import ViewParamError, report_width
from ..api.session import FixedListing, Session
from .errors import EXIT_LOAD, EXIT_REGRESSION, EXIT_USAGE, ReportError
from .progress import RankProgress
from .targets import targets


def _query(args: argparse.Namespace) -> dict[str, str]:
    given = {
        "span": args.span,
        "baseline": args.baseline,
        "window": args.window,
        "floor_pct": args.floor_pct,
    }
    return {k: str(v) for k, v in given.items() if v is not None}


def run_trend(args: argparse.Namespace) -> int:
    session = Session(FixedListing(()), cache=not args.no_cache)
    args.run = None  # `targets` reads it: the trend is of the whole logdir
    try:
        targets(args, session)
        progress = RankProgress("", counted="trend: traces summarised")
        call = Dispatch(LOGDIR_VIEWS["trend"], session, {}, _query(args), progress)
        body = call.ready().body
        view = msgspec.json.decode(body)
    except ViewParamError as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ReportError as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_LOAD
    finally:
        session.close()
    for run in view["runs"]:
        for error in run["errors"]:
            print(f"kinetoscope: run {run['run']!r}: {error}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.buffer.write(body + b"\n")
    else:
        render = LOGDIR_VIEWS["trend"].text
        assert render is not None
        print(render(view, report_width()))
    if args.fail_on_regression and view["regressions"]:
        count = len(view["regressions"])
        print(f"kinetoscope: {count} regression(s) found", file=sys.stderr)
        return EXIT_REGRESSION
    return 0
