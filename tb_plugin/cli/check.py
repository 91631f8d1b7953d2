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

from ..analysis.core.health.view import status_of
from ..analysis.distributed.rank_summaries import analyze_run
from ..api.endpoints import ENDPOINTS
from ..ingest.discovery import Run
from ..store.cache import DiskCache, default_cache_dir
from ..store.trace_store import LoadFailed, TraceStore
from .errors import EXIT_LOAD, ReportError
from .health_text import health_lines
from .targets import targets

EXIT_ERRORS, EXIT_WARNINGS = 2, 1
RUN_WORKER = "all ranks"  # the key of a run's run-level checks among its workers


def run_check(args: argparse.Namespace) -> int:
    cache = None if args.no_cache else DiskCache(default_cache_dir())
    with contextlib.closing(TraceStore(cache)) as store:
        try:
            results = _check_runs(store, args)
        except ReportError as exc:
            print(f"kinetoscope: {exc}", file=sys.stderr)
            return EXIT_LOAD
    if args.format == "json":
        sys.stdout.buffer.write(msgspec.json.encode(results) + b"\n")
    else:
        print(render_check(results))
    states = {h["status"] for w in results.values() for s in w.values() for h in s.values()}
    if "errors" in states or "unreadable" in states:
        return EXIT_ERRORS
    return EXIT_WARNINGS if args.strict and "warnings" in states else 0


def _check_runs(store: TraceStore, args: argparse.Namespace) -> dict[str, Any]:
    """{run: {worker: {span: health}}} of the chosen runs' spans."""
    results: dict[str, Any] = {}
    for run in targets(args)[1]:
        for worker in run.workers:
            for span in worker.spans:
                if args.span is None or span.name == args.span:
                    spans = results.setdefault(run.name, {}).setdefault(worker.name, {})
                    spans[span.name] = _health(store, span.path)
        if len(run.workers) > 1:
            results.setdefault(run.name, {})[RUN_WORKER] = _run_health(store, run, args.span)
    return results


def _run_health(store: TraceStore, run: Run, span: str | None) -> dict[str, Any]:
    """{span: {status, checks}}: the run-level checks of the ranks' chosen spans."""
    view = analyze_run(run, span, store=store)
    checks = view["health"]
    return {view["span"]: {"status": status_of(checks), "checks": checks}}


def _health(store: TraceStore, path: str) -> dict[str, Any]:
    try:
        store.wait(path)
    except LoadFailed as exc:
        return {"status": "unreadable", "error": exc.error["message"], "checks": []}
    endpoint = ENDPOINTS["health"]
    return msgspec.json.decode(endpoint.answer_json(store, path, endpoint.decode({})))  # type: ignore[no-any-return]


def render_check(results: dict[str, Any]) -> str:
    """One heading per trace with its status, then a line per check that counts any (or
    cannot run), and its first example."""
    lines: list[str] = []
    for run, workers in results.items():
        for worker, spans in workers.items():
            for span, found in spans.items():
                lines.append(f"{run} · {worker} · span {span}: {found['status']}")
                if "error" in found:
                    lines.append(f"  cannot be read: {found['error']}")
                lines.extend(health_lines(found))
    return "\n".join(lines)
