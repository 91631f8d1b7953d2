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
from concurrent.futures import Executor
from typing import Any

import msgspec

from ..api.endpoints import RUN_VIEWS, VIEWS, supported_views
from ..api.resolve import NotFound, resolve
from ..ingest.discovery import Run
from ..model.errors import ViewParamError
from ..store.cache import DiskCache, default_cache_dir
from ..store.dask_ranks import DaskRanks, DaskUnavailable, require_distributed
from ..store.pools import executor_from_env
from ..store.trace_store import LoadFailed, TraceStore
from . import check, diff, flamegraph
from .errors import EXIT_LOAD, EXIT_USAGE, ReportError, RunFailed
from .progress import RankProgress
from .report_snapshot import render_memory_snapshot
from .report_text import render_text
from .targets import targets


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kinetoscope", description="PyTorch profiler (Kineto) trace reports."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="print the views of a logdir's traces")
    report.add_argument("logdir", help="a logdir (folders of trace files) or one trace file")
    report.add_argument("--run", help="run name (path relative to the logdir)")
    report.add_argument("--worker", help="worker name (default: the first)")
    report.add_argument("--span", help="span number (default: the first, as the server and the UI)")
    report.add_argument("--format", choices=("json", "text"), default="text")
    report.add_argument(
        "--view",
        action="append",
        choices=sorted([*VIEWS, *RUN_VIEWS]),
        help="only these views (repeatable; default: all the trace supports, and the "
        "run-level ones ('distributed') for runs with several workers)",
    )
    report.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a view parameter, as in the route's query (repeatable; e.g. group_by=op): "
        "each view reads the ones it declares",
    )
    report.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    report.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="summarise a distributed run's ranks on the Dask cluster at ADDRESS "
        "(tcp://host:8786; 'local' starts a local cluster of processes; default: "
        "$KINETOSCOPE_DASK_SCHEDULER, else this machine's pool); needs kinetoscope[dask]",
    )
    diff.add_parser(sub)
    check.add_parser(sub)
    flamegraph.add_parser(sub)
    # Served by kinetoscope.mcp (the entry point hands it `mcp ...`): listed for --help.
    sub.add_parser("mcp", help="serve the views to AI agents over MCP (kinetoscope mcp --help)")
    return parser


def _report_run(store: TraceStore, run: Run, args: argparse.Namespace) -> dict[str, Any]:
    if not run.workers and run.snapshots:  # a folder of memory snapshots only
        views = _run_views(store, run, args, {})
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
    for name in names:
        if name not in VIEWS:
            continue  # run-level views, below
        view = VIEWS[name]
        try:
            request = view.decode(_params(args.param))
        except ViewParamError as exc:
            raise ReportError(f"view {name!r}: {exc}") from None
        try:  # as a route answers the query of --param (none: the default form)
            data = view.answer_json(store, span.path, request)
        except ViewParamError as exc:  # asked with --view of a trace without its data
            print(f"kinetoscope: run {run.name!r}: {name}: {exc}", file=sys.stderr)
            continue
        out[name] = msgspec.json.decode(data)
    _run_views(store, run, args, out)
    if args.format == "text":
        print(render_text(run.name, worker.name, span.name, model, out))
    elif model.partial:  # the text report says so in its heading
        note = "partial trace (see status.warnings)"
        print(f"kinetoscope: run {run.name!r}: {note}", file=sys.stderr)
    return out


def _run_views(
    store: TraceStore, run: Run, args: argparse.Namespace, out: dict[str, Any]
) -> dict[str, Any]:
    cache_dir = str(store.cache.root) if store.cache else None
    for name, run_view in RUN_VIEWS.items():
        if run_view.supports(run) and (not args.view or name in args.view):
            # Run-level: every worker's span as one job; the same object as the route.
            # Progress ("ranks summarised 57/256") goes to stderr as the summaries come in.
            progress = RankProgress(run.name)
            executor = store.pools.executor
            out[name] = run_view.call(run, args.span, cache_dir, executor, progress, store)
    return out


def _params(items: list[str]) -> dict[str, str]:
    """`--param KEY=VALUE` options as a query."""
    bad = [item for item in items if "=" not in item]
    if bad:
        raise ReportError(f"--param wants KEY=VALUE, not {bad[0]!r}")
    return dict(item.split("=", 1) for item in items)


def _rank_executor(args: argparse.Namespace) -> Executor | None:
    """Where a distributed run's ranks are summarised: `--dask`, else the environment's
    executor (`store.pools.executor_from_env`), else None (this machine's pools). Dask
    missing is said now, before any trace is read."""
    executor = DaskRanks(args.dask, "--dask") if args.dask else executor_from_env()
    if isinstance(executor, DaskRanks):
        require_distributed(executor.asked_by)
    return executor


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.getLogger("kinetoscope").setLevel(logging.ERROR)  # errors are printed below
    if args.command == "diff":
        return diff.run_diff(args)
    if args.command == "check":
        return check.run_check(args)
    if args.command == "flamegraph":
        return flamegraph.run_flamegraph(args)
    if args.command == "mcp":
        print("kinetoscope: run the MCP server as `kinetoscope mcp LOGDIR`", file=sys.stderr)
        return EXIT_USAGE
    cache = None if args.no_cache else DiskCache(default_cache_dir())
    try:
        executor = _rank_executor(args)
    except DaskUnavailable as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_USAGE
    store = TraceStore(cache, executor=executor)
    results: dict[str, Any] = {}
    failed = False
    try:
        _, runs = targets(args)
        for run in runs:  # a broken run is reported and skipped; the others still print
            try:
                results[run.name] = _report_run(store, run, args)
                for rank_error in results[run.name].get("distributed", {}).get("errors", []):
                    print(
                        f"kinetoscope: run {run.name!r}: {rank_error['message']}", file=sys.stderr
                    )
                    failed = True  # a rank the distributed view had to leave out
            except ReportError as exc:
                print(f"kinetoscope: run {run.name!r}: {exc}", file=sys.stderr)
                failed = True
                if isinstance(exc, RunFailed):
                    results[run.name] = exc.result  # the JSON says which run failed, and why
    except (ReportError, DaskUnavailable) as exc:  # the scheduler down: said, not a traceback
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_LOAD
    finally:
        store.close()
        if isinstance(executor, DaskRanks):
            executor.shutdown()  # ours: the client, and a local cluster
    if args.format == "json" and results:
        doc: Any = next(iter(results.values())) if len(runs) == 1 else {"runs": results}
        sys.stdout.buffer.write(msgspec.json.encode(doc) + b"\n")
    return EXIT_LOAD if failed else 0
