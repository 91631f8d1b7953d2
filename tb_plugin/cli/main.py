"""`kinetoscope report`: the views without a browser (and `kinetoscope diff`, `diff.py`).

With `--format json` it prints one JSON document. When one run is reported (chosen with
`--run`, or the only run of the logdir) the top-level keys are the view names, each
holding exactly what the matching HTTP route returns. Several runs give
`{"runs": {run name: {view name: ...}}}`. Each run also has `status` (what the status
route says: state, partial, warnings, error); a run whose trace failed has only that.
Errors and warnings go to stderr; the exit code is non-zero when any run failed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

import msgspec

from ..api.session import DaskUnavailable, Session
from .errors import EXIT_LOAD, EXIT_USAGE, ParamRefused, ReportError, RunFailed
from .parser import build_parser
from .targets import targets

# argparse's exit status for a bad argument
EXIT_BAD_ARGUMENT = 2


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.getLogger("kinetoscope").setLevel(logging.ERROR)  # errors are printed below
    if args.command == "diff":
        from .diff import run_diff

        return run_diff(args)
    if args.command == "check":
        from .check import run_check

        return run_check(args)
    if args.command == "trend":
        from .trend import run_trend

        return run_trend(args)
    if args.command == "flamegraph":
        from .flamegraph import run_flamegraph

        return run_flamegraph(args)
    if args.command == "whatif":
        from .whatif import run_whatif

        return run_whatif(args)
    if args.command == "mcp":
        print("kinetoscope: run the MCP server as `kinetoscope mcp LOGDIR`", file=sys.stderr)
        return EXIT_USAGE
    return _report(args)


def _report(args: argparse.Namespace) -> int:
    try:  # `--dask`, else the environment's; Dask missing is said before any trace is read
        session = Session.for_command(cache=not args.no_cache, dask=args.dask)
    except DaskUnavailable as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_USAGE
    results: dict[str, Any] = {}
    failed = refused = False
    try:
        _, runs = targets(args, session)
        # Imported before the load, not beside it: the views' modules import in the view
        # that needs them, one after another (a trace's unsupported views' never), as
        # imports beside the load fought its merging thread for the GIL: 36-65 MB traces,
        # cold, best of 9 on 2 cores: wall -0.03 s and CPU -0.07 s of 0.39-0.43 s.
        from .report import report_run, unknown_views

        if runs:  # its load starts (a bad name: the report says)
            session.start_load(runs[0], args.worker, args.span)
        if (bad := unknown_views(args.view)) is not None:
            print(f"kinetoscope report: error: {bad}", file=sys.stderr)
            return EXIT_BAD_ARGUMENT
        for run in runs:  # a broken run is reported and skipped; the others still print
            try:
                results[run.name] = report_run(session, run, args)
                failed = _say_rank_errors(run.name, results[run.name]) or failed
            except ReportError as exc:
                print(f"kinetoscope: run {run.name!r}: {exc}", file=sys.stderr)
                refused = refused or isinstance(exc, ParamRefused)
                failed = failed or not isinstance(exc, ParamRefused)
                if isinstance(exc, RunFailed):
                    results[run.name] = exc.result  # the JSON says which run failed, and why
        if args.format == "json" and results:  # printed before the cache's writes end
            doc: Any = next(iter(results.values())) if len(runs) == 1 else {"runs": results}
            sys.stdout.buffer.write(msgspec.json.encode(doc) + b"\n")
    except (ReportError, DaskUnavailable) as exc:  # the scheduler down: said, not a traceback
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_LOAD
    finally:
        session.close()  # once the cache is written; and a Dask client (a local cluster)
    failed = failed or bool(getattr(args, "too_large", False))  # a view past its cap: 3
    return EXIT_LOAD if failed else EXIT_USAGE if refused else 0


class _RankErrors(msgspec.Struct):
    """What `_say_rank_errors` reads of a Distributed view kept as its JSON text."""

    errors: list[dict[str, Any]] = []


_RANK_ERRORS = msgspec.json.Decoder(_RankErrors)  # built once (see model.decoders.decoders_for)


def _say_rank_errors(run_name: str, views: dict[str, Any]) -> bool:
    """Print the ranks the distributed view had to leave out; whether there were any."""
    view = views.get("distributed", {})
    if isinstance(view, msgspec.Raw):  # --format json: the route's text, not decoded
        errors = _RANK_ERRORS.decode(view).errors
    else:
        errors = view.get("errors", [])
    for rank_error in errors:
        print(f"kinetoscope: run {run_name!r}: {rank_error['message']}", file=sys.stderr)
    return bool(errors)
