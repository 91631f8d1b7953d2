"""The one way every door (the TensorBoard routes, `kinetoscope report` and `diff`, the
notebook's `kinetoscope.open`, the MCP server) turns names into a run, a worker and a span:
the same defaults (no worker: the run's first; no span: the worker's first, the one the UI
shows) and the same errors, word for word. A door maps the errors to its own form: a route
answers 404 (`NotFound`) or 400 (`ViewParamError`), the CLI exits with the message, the
notebook raises them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from ..ingest.discovery import Run, SpanFile, Worker
from ..model.errors import ViewParamError

KNOWN_SHOWN = 20  # names listed in a "known:" hint; a 2,000-rank run lists the first ones


class NotFound(ValueError):
    """A run, worker or span name that names nothing (HTTP 404)."""


class Target(msgspec.Struct, frozen=True):
    """One trace file of a logdir, by the names that found it."""

    run: Run
    worker: Worker
    span: SpanFile


def known(names: Iterable[str]) -> str:
    """ "a, b, c" (the first KNOWN_SHOWN, then how many more), or "none"."""
    listed = list(names)
    shown = ", ".join(listed[:KNOWN_SHOWN])
    more = len(listed) - KNOWN_SHOWN
    if more > 0:
        shown += f" and {more} more"
    return shown or "none"


def find_run(runs: Sequence[Run], name: str | None, param: str = "run") -> Run:
    """The run named `name` (a path relative to the logdir; `.` for the logdir itself)."""
    if not name:
        raise ViewParamError(f"missing parameter: {param}")
    for run in runs:
        if run.name == name:
            return run
    raise NotFound(f"no run named {name!r} (known: {known(r.name for r in runs)})")


def find_worker(run: Run, name: str | None) -> Worker:
    """The worker named `name`; none named: the run's first worker."""
    if not run.workers:
        raise NotFound(f"run {run.name!r} has no workers")
    if not name:
        return run.workers[0]
    for worker in run.workers:
        if worker.name == name:
            return worker
    names = known(w.name for w in run.workers)
    raise NotFound(f"no worker {name!r} in run {run.name!r} (known: {names})")


def find_span(run: Run, worker: Worker, name: str | int | None) -> SpanFile:
    """The span named `name` ("1", "2", ...: the worker's files in time order); none
    named: the worker's first span."""
    if not worker.spans:
        raise NotFound(f"worker {worker.name!r} of run {run.name!r} has no spans")
    if name is None or name == "":
        return worker.spans[0]
    for span in worker.spans:
        if span.name == str(name):
            return span
    names = known(s.name for s in worker.spans)
    raise NotFound(
        f"no span {str(name)!r} for worker {worker.name!r} in run {run.name!r} (known: {names})"
    )


def resolve(run: Run, worker: str | None = None, span: str | int | None = None) -> Target:
    """The trace file of `run` named by `worker` and `span` (each defaulting as above)."""
    found = find_worker(run, worker)
    return Target(run, found, find_span(run, found, span))


def worker_names(text: str | None) -> list[str]:
    """The names of a comma list (`workers=W1,W2`), each once, in order."""
    return list(dict.fromkeys(n.strip() for n in (text or "").split(",") if n.strip()))
