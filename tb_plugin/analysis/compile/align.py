"""Compile logs placed on the traces' clocks.

Which trace a log goes with: the same rank (the log's `rank` records or file name, the
trace's rank by `core/ranks`, where the trace states one), else the same process (the log
lines' pid is a pid of the trace), else the only log with the only trace.

How: both clocks are the wall clock of the machine. A log's times are epoch microseconds
(the phases' `ts` is `time.time_ns() / 1000`; `start_time_us` likewise); a trace's event at
`ts` happened at `ts + time_origin_us` (its `baseTimeNanoseconds`, or 0 for traces in epoch
µs). So a log instant `t` is at `t - time_origin_us` on the trace. How well that holds is
measured where the trace recorded the same phases: with the profiler on during a compile,
each `dynamo_timed` phase is also a user annotation `<phase>_data: ... compile_id=<id>`;
the difference between the trace's start of a phase and the log's is the error (torch takes
the log's time before it writes the log line and enters the annotation: the trace is later
by up to some milliseconds). Logs of another machine, or a trace without those annotations,
are aligned by the clock alone, and the note says so."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...ingest.naming import name_rank
from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.common import complete_rows, ends, rows_named
from ..core.ranks import ORDER, assign_ranks, header_rank
from .records import LogFacts
from .steps import duration_text
from .types import CompileAlignment

_PHASE_MARK = re.compile(r"^(?P<phase>\S+)_data: (?:.*, )?compile_id=(?P<cid>[^,\s]+)")
# Clocks further apart than a day are not one machine's clock.
_SAME_CLOCK_US = 86_400e6


@dataclass
class TraceSide:
    """One worker's trace of the run (span `span`), loaded; None when it failed."""

    worker: str
    span: str
    file: str
    model: TraceModel | None


def trace_ranks(traces: list[TraceSide]) -> list[int | None]:
    """Each trace's rank where it states one (header or names), by the one rule."""
    stated = [
        (header_rank(t.model.header) if t.model else None, name_rank(t.worker, t.file))
        for t in traces
    ]
    ranks, sources, _ = assign_ranks(stated)
    return [r if s != ORDER else None for r, s in zip(ranks, sources)]


def _pids(model: TraceModel) -> set[int]:
    return {p for p in model.pids if isinstance(p, int) and not isinstance(p, bool)}


def match(
    log: LogFacts, traces: list[TraceSide], ranks: list[int | None], logs: int
) -> tuple[int | None, str | None]:
    """The index of the trace a log goes with, and by what (module docstring)."""
    if log.rank is not None:
        for at, rank in enumerate(ranks):
            if rank == log.rank and traces[at].model is not None:
                return at, "rank"
    if log.pid is not None:
        for at, trace in enumerate(traces):
            if trace.model is not None and log.pid in _pids(trace.model):
                return at, "pid"
    if logs == 1 and len(traces) == 1 and traces[0].model is not None:
        return 0, "only"
    return None, None


def phase_marks(model: TraceModel) -> dict[tuple[str, str], float]:
    """The trace's compile phase annotations: (phase, compile id) → first start (epoch µs)."""
    rows = rows_named(
        model,
        complete_rows(model, Kind.USER_ANNOTATION),
        lambda n: "_data: " in n and "compile_id=" in n,
    )
    out: dict[tuple[str, str], float] = {}
    ts = model.events["ts"]
    origin = model.time_origin_us
    for row, name in zip(rows.tolist(), model.names_of(rows)):
        m = _PHASE_MARK.match(name)
        if m:
            out.setdefault((m["phase"], m["cid"]), float(ts[row]) + origin)
    return out


def trace_extent(model: TraceModel) -> tuple[float, float] | None:
    """The trace's first start and last end, on its own clock."""
    rows = complete_rows(model, *Kind)
    if rows.size == 0:
        return None
    return float(model.events["ts"][rows].min()), float(ends(model, rows).max())


def alignment(
    log: LogFacts, trace: TraceSide | None, matched_by: str | None, starts: list[float | None]
) -> CompileAlignment:
    """How the log's times sit on the trace's clock (`starts`: its compiles' epoch starts)."""
    out: CompileAlignment = {
        "log": log.log.file,
        "rank": log.rank,
        "worker": trace.worker if trace else None,
        "span": trace.span if trace else None,
        "matched_by": matched_by,
        "time_origin_us": None,
        "checked": 0,
        "median_error_us": None,
        "max_error_us": None,
        "in_window": 0,
        "outside_window": 0,
        "note": "no trace of this run goes with this log (no rank, process or single trace "
        "in common); its compiles are listed without trace times",
    }
    if trace is None or trace.model is None:
        return out
    model = trace.model
    out["time_origin_us"] = model.time_origin_us
    errors = _errors(log, phase_marks(model))
    if errors:
        out["checked"] = len(errors)
        out["median_error_us"] = round(float(np.median(errors)), 1)
        out["max_error_us"] = round(float(np.max(np.abs(errors))), 1)
    extent = trace_extent(model)
    inside = _inside(starts, extent, model.time_origin_us)
    out["in_window"], out["outside_window"] = inside.count(True), inside.count(False)
    out["note"] = _note(out, extent, starts, model.time_origin_us)
    return out


def _errors(log: LogFacts, marks: dict[tuple[str, str], float]) -> list[float]:
    seen: set[tuple[str, str]] = set()
    errors = []
    for phase in log.phases.kept:
        key = (phase.name, phase.compile_id or "")
        if key in marks and key not in seen and phase.dur_us > 0:
            seen.add(key)
            errors.append(marks[key] - phase.start_us)
    return errors


def _inside(
    starts: list[float | None], extent: tuple[float, float] | None, origin: float
) -> list[bool]:
    if extent is None:
        return []
    lo, hi = extent
    return [lo <= s - origin <= hi for s in starts if s is not None]


def _note(
    out: CompileAlignment,
    extent: tuple[float, float] | None,
    starts: list[float | None],
    origin: float,
) -> str:
    how = {"rank": "the same rank", "pid": "the same process id", "only": "the only log and trace"}
    head = (
        f"aligned with {out['worker']} by {how.get(out['matched_by'] or '', 'its clock')}: "
        "both hold wall-clock times (log epoch µs = trace ts + the trace's time origin)"
    )
    known = [s for s in starts if s is not None]
    if extent is not None and known:
        gap = min(abs(s - origin - extent[0]) for s in known)
        if gap > _SAME_CLOCK_US and out["in_window"] == 0:
            return head + "; its compiles are days from the trace: not one clock (another machine?)"
    if out["outside_window"]:
        head += f"; {out['outside_window']} of its compiles fall outside the trace's time"
    if out["checked"] and out["median_error_us"] is not None and out["max_error_us"] is not None:
        median, worst = out["median_error_us"], out["max_error_us"]
        side = "after" if median >= 0 else "before"
        return (
            head + f"; checked on {out['checked']} compile phases the trace recorded too: "
            f"the trace's start of a phase is {duration_text(abs(median))} {side} the log's "
            f"(median), {duration_text(worst)} at most"
        )
    return head + "; the trace recorded no compile phase to check it against"
