"""The command line's grammar. It imports no view: `kinetoscope report` starts reading its
trace before the view registry's modules import (`main.py`), so the names a view or a
parameter may take are checked after parsing (`report.check_views`, the diff's group-by in
tests/test_cli.py against the Operators view's)."""

from __future__ import annotations

import argparse

from ..api.version import VersionAction
from .errors import EXIT_REGRESSION

# The Operators view's group-by keys and the flame graph's metrics (`analysis.operators.
# GROUP_BY`, `analysis.flamegraph.METRICS`; a test keeps them equal).
DIFF_GROUP_BY = ("name", "shape")
FLAME_METRICS = ("cpu", "gpu")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kinetoscope", description="PyTorch profiler (Kineto) trace reports."
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_report(sub)
    _add_diff(sub)
    _add_check(sub)
    _add_trend(sub)
    _add_flamegraph(sub)
    _add_whatif(sub)
    # Served by kinetoscope.mcp (the entry point hands it `mcp ...`): listed for --help.
    sub.add_parser("mcp", help="serve the views to AI agents over MCP (kinetoscope mcp --help)")
    return parser


def _add_report(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser("report", help="print the views of a logdir's traces")
    report.add_argument("logdir", help="a logdir (folders of trace files) or one trace file")
    report.add_argument("--run", help="run name (path relative to the logdir)")
    report.add_argument("--worker", help="worker name (default: the first)")
    report.add_argument("--span", help="span number (default: the first, as the server and the UI)")
    _json_or_text(report)
    report.add_argument(
        "--view",
        action="append",
        metavar="VIEW",
        help="only these views (repeatable; a route's name, as in docs/http_api.md; default: "
        "all the trace supports, and the run-level ones ('distributed') for runs with "
        "several workers)",
    )
    report.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a view parameter, as in the route's query (repeatable; e.g. group_by=op): "
        "each view reads the ones it declares",
    )
    _cache_flag(report)
    report.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="summarise a distributed run's ranks on the Dask cluster at ADDRESS "
        "(tcp://host:8786; 'local' starts a local cluster of processes; default: "
        "$KINETOSCOPE_DASK_SCHEDULER, else this machine's pool); needs kinetoscope[dask]",
    )


def _add_diff(sub: argparse._SubParsersAction) -> None:
    diff = sub.add_parser("diff", help="compare two traces (base and target) of a logdir")
    diff.add_argument("logdir", help="a logdir (folders of trace files)")
    for side in ("base", "target"):
        diff.add_argument(
            f"--{side}", required=True, metavar="RUN[:WORKER[:SPAN]]", help=f"the {side} trace"
        )
    _json_or_text(diff)
    diff.add_argument("--group-by", choices=DIFF_GROUP_BY, default="name")
    _cache_flag(diff)


def _add_check(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser("check", help="say what in a logdir's traces cannot be trusted")
    check.add_argument("logdir", help="a logdir (folders of trace files) or one trace file")
    check.add_argument("--run", help="run name (default: every run)")
    check.add_argument("--span", help="span number (default: every span)")
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings")
    _json_or_text(check)
    _cache_flag(check)


def _add_trend(sub: argparse._SubParsersAction) -> None:
    trend = sub.add_parser("trend", help="what changed across the runs of a logdir")
    trend.add_argument("logdir", help="a logdir (one folder per run)")
    _json_or_text(trend)
    trend.add_argument(
        "--fail-on-regression",
        action="store_true",
        help=f"exit {EXIT_REGRESSION} when a regression is found (a CI gate)",
    )
    trend.add_argument("--baseline", metavar="RUN", help="compare every run with this run")
    trend.add_argument("--span", help="each worker's span (default: the first)")
    trend.add_argument("--window", type=int, help="runs in the rolling baseline (default 5)")
    trend.add_argument(
        "--floor-pct", type=float, help="smallest relative change named, %% (default 5)"
    )
    _cache_flag(trend)


def _add_flamegraph(sub: argparse._SubParsersAction) -> None:
    flame = sub.add_parser("flamegraph", help="a trace's CPU or GPU time as folded stacks")
    flame.add_argument("logdir", help="a logdir (folders of trace files) or one trace file")
    flame.add_argument("--run", help="run name (needed when the logdir holds several)")
    flame.add_argument("--worker", help="worker name (default: the first)")
    flame.add_argument("--span", help="span number (default: the first)")
    flame.add_argument("--metric", choices=FLAME_METRICS, default="cpu")
    flame.add_argument("--format", choices=("folded", "speedscope"), default="folded")
    _cache_flag(flame)


def _add_whatif(sub: argparse._SubParsersAction) -> None:
    whatif = sub.add_parser(
        "whatif", help="predict a trace's step time with one kernel, op or collective scaled"
    )
    whatif.add_argument("logdir", help="a logdir (folders of trace files) or one trace file")
    whatif.add_argument("--run", help="run name (needed when the logdir holds several)")
    whatif.add_argument("--worker", help="one worker's span alone (default: every worker)")
    whatif.add_argument("--span", help="span number (default: the first)")
    change = whatif.add_mutually_exclusive_group(required=True)
    change.add_argument("--kernel", metavar="NAME", help="GPU activities of this name")
    change.add_argument("--op", metavar="NAME", help="an op and the device work it launched")
    change.add_argument("--collective", metavar="TYPE", help="all_reduce, all_gather, ...")
    change.add_argument("--rank-all", action="store_true", help="everything (with --rank)")
    whatif.add_argument("--rank", type=int, help="the change on this rank only")
    whatif.add_argument(
        "--factor", type=float, required=True, help="new time over old: 0.5 is twice as fast"
    )
    _json_or_text(whatif)
    _cache_flag(whatif)


def _json_or_text(command: argparse.ArgumentParser) -> None:
    command.add_argument("--format", choices=("json", "text"), default="text")


def _cache_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
