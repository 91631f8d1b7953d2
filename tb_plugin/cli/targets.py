"""What a logdir argument of the CLI names: the runs to report (a logdir, a run by name
through the one resolver, or one trace file), or the error saying why there are none."""

from __future__ import annotations

import argparse

from ..api.lower import Run
from ..api.resolve import NotFound, find_run
from ..api.session import Session, list_target, no_traces_message
from .errors import ReportError


def targets(args: argparse.Namespace, session: Session | None = None) -> tuple[str, list[Run]]:
    """(the path or URL named, its runs); with `session`, its runs the session's listing."""
    try:  # a URL (s3://...) is listed through the storage layer
        lister = session.list_target if session is not None else list_target
        path, kind, listed = lister(args.logdir)
        if kind is None:
            raise ReportError(f"{args.logdir}: no such file or folder")
        runs = list(listed)
    except OSError as exc:
        raise ReportError(f"{args.logdir}: cannot list it: {exc}") from None
    if not runs:
        raise ReportError(no_traces_message(args.logdir))
    if kind == "file":
        return path, runs
    if args.run is not None:
        try:
            runs = [find_run(runs, args.run)]
        except NotFound as exc:
            raise ReportError(f"{args.logdir}: {exc}") from None
    return path, runs
