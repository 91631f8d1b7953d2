"""`kinetoscope diff LOGDIR --base RUN[:WORKER[:SPAN]] --target RUN[:WORKER[:SPAN]]`: the
diff route without a browser. `--format json` prints exactly what the `diff` route
returns; text prints tables (`diff_text.py`). A missing worker is the run's first, a
missing span the worker's first, as in the server and `kinetoscope report`."""

from __future__ import annotations

import argparse
import sys

import msgspec

from ..api import resolve as resolver
from ..api.endpoints import ENDPOINTS
from ..ingest import storage
from ..ingest.discovery import Run, SpanFile, scan_logdir
from ..store.cache import DiskCache, default_cache_dir
from ..store.trace_store import LoadFailed, TraceStore
from .diff_text import render_diff
from .errors import EXIT_LOAD, ReportError


def resolve(runs: tuple[Run, ...], spec: str) -> tuple[str, SpanFile]:
    """`RUN[:WORKER[:SPAN]]` → (a label, the span file). The longest run name the spec
    starts with wins, so run names holding ':' still resolve."""
    matches = [r for r in runs if spec == r.name or spec.startswith(r.name + ":")]
    try:
        if not matches:
            resolver.find_run(runs, spec.split(":")[0])  # says which runs there are
        run = max(matches, key=lambda r: len(r.name))
        rest = spec[len(run.name) + 1 :].split(":", 1) if spec != run.name else []
        target = resolver.resolve(
            run, rest[0] if rest else None, rest[1] if len(rest) > 1 else None
        )
    except resolver.NotFound as exc:
        raise ReportError(str(exc)) from None
    return f"{run.name}:{target.worker.name}:{target.span.name}", target.span


def diff_json(store: TraceStore, base: SpanFile, target: SpanFile, group_by: str) -> bytes:
    """The route's body for these two spans: the same endpoint, the same encoding."""
    endpoint = ENDPOINTS["diff"]
    models = []
    for span in (base, target):
        store.state_for(span.path)  # both load at once
    for span in (base, target):
        try:
            models.append(store.wait(span.path))
        except LoadFailed as exc:
            raise ReportError(exc.error["message"]) from None
    return msgspec.json.encode(endpoint.call(*models, endpoint.decode({"group_by": group_by})))


def run_diff(args: argparse.Namespace) -> int:
    path = storage.absolute(args.logdir)
    try:
        is_folder = storage.kind(path) == "dir"
    except OSError as exc:
        print(f"kinetoscope: {args.logdir}: cannot list it: {exc}", file=sys.stderr)
        return EXIT_LOAD
    if not is_folder:
        print(f"kinetoscope: {args.logdir}: no such folder", file=sys.stderr)
        return EXIT_LOAD
    cache = None if args.no_cache else DiskCache(default_cache_dir())
    store = TraceStore(cache)
    try:
        runs = scan_logdir(path)
        base_label, base = resolve(runs, args.base)
        target_label, target = resolve(runs, args.target)
        body = diff_json(store, base, target, args.group_by)
    except ReportError as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_LOAD
    finally:
        store.close()
    if args.format == "json":
        sys.stdout.buffer.write(body + b"\n")
    else:
        print(render_diff(base_label, target_label, msgspec.json.decode(body)))
    return 0
