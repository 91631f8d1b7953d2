"""`kinetoscope diff LOGDIR --base RUN[:WORKER[:SPAN]] --target RUN[:WORKER[:SPAN]]`: the
diff route without a browser. `--format json` prints exactly what the `diff` route
returns; text prints the two traces' names and the view's tables (its folder's text). A
missing worker is the run's first, a missing span the worker's first, as in the server
and `kinetoscope report`."""

from __future__ import annotations

import argparse
import sys

import msgspec

from ..api import resolve as resolver
from ..api.dispatch import Dispatch
from ..api.endpoints import ENDPOINTS
from ..api.lower import LoadFailed, Run, report_width
from ..api.session import FixedListing, Session, list_logdir
from .errors import EXIT_LOAD, ReportError


def resolve(runs: tuple[Run, ...], spec: str) -> tuple[str, resolver.Target]:
    """`RUN[:WORKER[:SPAN]]` → (a label, the trace file's names). The longest run name the spec
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
    return f"{run.name}:{target.worker.name}:{target.span.name}", target


def diff_json(
    session: Session, base: resolver.Target, target: resolver.Target, group_by: str
) -> bytes:
    """The route's body for these two spans: the same endpoint, the same encoding (both
    load at once)."""
    names = {
        **{"run": base.run.name, "worker": base.worker.name, "span": base.span.name},
        "target_run": target.run.name,
        "target_worker": target.worker.name,
        "target_span": target.span.name,
    }
    call = Dispatch(ENDPOINTS["diff"], session, names, {"group_by": group_by})
    try:
        return call.ready().body
    except LoadFailed as exc:
        raise ReportError(exc.error["message"]) from None


def run_diff(args: argparse.Namespace) -> int:
    try:
        _, is_folder, scan = list_logdir(args.logdir)
    except OSError as exc:
        print(f"kinetoscope: {args.logdir}: cannot list it: {exc}", file=sys.stderr)
        return EXIT_LOAD
    if not is_folder:
        print(f"kinetoscope: {args.logdir}: no such folder", file=sys.stderr)
        return EXIT_LOAD
    session = Session(FixedListing(()), cache=not args.no_cache)
    try:
        runs = scan()
        session.listing = FixedListing(runs)
        base_label, base = resolve(runs, args.base)
        target_label, target = resolve(runs, args.target)
        body = diff_json(session, base, target, args.group_by)
    except ReportError as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return EXIT_LOAD
    finally:
        session.close()
    if args.format == "json":
        sys.stdout.buffer.write(body + b"\n")
    else:
        render = ENDPOINTS["diff"].text
        assert render is not None
        print(f"kinetoscope diff: base {base_label}\n                  target {target_label}")
        print(render(msgspec.json.decode(body), report_width()))
    return 0
