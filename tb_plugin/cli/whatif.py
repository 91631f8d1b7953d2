"""`kinetoscope whatif LOGDIR --run R [--worker W --span S] (--kernel NAME | --op NAME |
--collective TYPE | --rank-all) [--rank N] --factor F [--format json]`: a trace's steps
re-timed with one change, and the predicted critical path. Without `--worker`, a run of
several workers is one job (the `run_whatif` route: collectives matched across ranks);
with it, or for a run of one worker, the span alone (the `whatif` route). `--format json`
prints exactly what the route returns."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

import msgspec

from ..api.dispatch import Dispatch
from ..api.endpoints import RUN_VIEWS, VIEWS
from ..api.lower import LoadFailed, ViewParamError, report_width
from ..api.resolve import NotFound
from ..api.session import FixedListing, Session
from .errors import EXIT_LOAD, EXIT_USAGE, ParamRefused, ReportError
from .progress import RankProgress
from .targets import targets


def _query(args: argparse.Namespace) -> dict[str, str]:
    given = {
        "kernel": args.kernel,
        "op": args.op,
        "collective": args.collective,
        "rank_all": 1 if args.rank_all else None,
        "rank": args.rank,
        "factor": args.factor,
    }
    return {k: str(v) for k, v in given.items() if v is not None}


def run_whatif(args: argparse.Namespace) -> int:
    with contextlib.closing(Session(FixedListing(()), cache=not args.no_cache)) as session:
        try:
            body = _answer(session, args)
        except (ViewParamError, ParamRefused) as exc:  # a usage error, as the route's 400
            print(f"kinetoscope whatif: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except ReportError as exc:
            print(f"kinetoscope: {exc}", file=sys.stderr)
            return EXIT_LOAD
    if args.format == "json":
        sys.stdout.buffer.write(body + b"\n")
    else:
        render = VIEWS["whatif"].text  # the run-level route's text is the same
        assert render is not None
        print(render(msgspec.json.decode(body), report_width()))
    return 0


def _answer(session: Session, args: argparse.Namespace) -> bytes:
    _, runs = targets(args, session)
    if len(runs) > 1:
        names = ", ".join(r.name for r in runs)
        raise ParamRefused(f"{args.logdir}: several runs ({names}): choose one with --run")
    run = runs[0]
    query = _query(args)
    if args.worker is None and len(run.workers) >= 2:
        progress = RankProgress(run.name)
        call = Dispatch(
            RUN_VIEWS["run_whatif"], session, {"run": run.name, "span": args.span}, query, progress
        )
    else:
        asked: dict[str, Any] = {"run": run.name, "worker": args.worker, "span": args.span}
        call = Dispatch(VIEWS["whatif"], session, asked, query)
    try:
        return call.ready().body
    except NotFound as exc:
        raise ReportError(str(exc)) from None
    except LoadFailed as exc:
        raise ReportError(exc.error["message"]) from None
