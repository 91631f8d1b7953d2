"""The `compile` view of a run: its TORCH_TRACE compile logs read (`records`), turned into
compiles, recompiles, graph breaks, failures and CUDA-graph notes (`entries`), placed on
the clock of each worker's trace (`align`) and its steps (`steps`), with advice
(`advice`). Run-level: the run's job reads every log and the span `span` of every worker.

One log that cannot be read is an `error` of its own entry in `logs` (its kind as a
trace's: `empty_file`, `not_a_log`, `io`, ...); the other logs still answer. A trace that
fails leaves its logs unaligned, never the view failed."""

from __future__ import annotations

import logging

from ...ingest.compile_log import CompileLogError
from ...ingest.compile_log_files import CompileLogFile
from ...ingest.discovery import chosen_spans
from ...store.errors import describe_error
from ...store.run_context import RunContext
from ...store.trace_store import LoadFailed
from .advice import advice
from .align import TraceSide, alignment, match, trace_ranks
from .entries import (
    compile_row,
    cudagraph_rows,
    failure_rows,
    graph_break_rows,
    kernel_rows,
    named_from_siblings,
    recompile_row,
)
from .phases import MAX_EVENTS
from .records import CompileFacts, LogFacts, read_log_facts
from .steps import step_rows
from .types import (
    Compile,
    CompileAlignment,
    CompileEvent,
    CompileLogInfo,
    CompileResponse,
    Recompile,
    StepCompileTime,
)

VERSION = "4"  # 4: value guards by their expression, frames named at the limit; 3: artifact names
log = logging.getLogger(__name__)


def compile_view(context: RunContext) -> CompileResponse:
    """The route's JSON (the CLI, the notebook and the MCP tool get the same)."""
    run = context.run
    infos: list[CompileLogInfo] = []
    read: list[LogFacts] = []
    for file in run.compile_logs:
        facts, info = _read(file)
        infos.append(info)
        if facts is not None:
            read.append(facts)
    traces = _traces(context)
    return _joined(run.name, infos, read, traces)


def _read(file: CompileLogFile) -> tuple[LogFacts | None, CompileLogInfo]:
    info: CompileLogInfo = {
        "file": file.file,
        "rank": file.rank,
        "size": file.size,
        "pid": None,
        "torch_version": None,
        "records": 0,
        "lines": 0,
        "skipped": 0,
        "partial": False,
        "warnings": [],
        "error": None,
        "error_kind": None,
    }
    try:
        facts = read_log_facts(file)
    except CompileLogError as exc:
        return None, {**info, "error": f"{file.file}: {exc}", "error_kind": exc.kind}
    except Exception as exc:  # noqa: BLE001 - one log's fault never fails the view
        if not isinstance(exc, OSError):
            log.exception("kinetoscope: compile log %s", file.path)
        error = describe_error(file.path, exc)
        return None, {**info, "error": error["message"], "error_kind": error["kind"]}
    reading = facts.reading
    assert reading is not None
    info["rank"], info["pid"], info["torch_version"] = facts.rank, facts.pid, facts.torch_version
    info["records"], info["lines"] = reading.records, reading.lines
    info["skipped"], info["partial"] = reading.skipped, reading.partial
    info["warnings"] = list(reading.warnings)
    return facts, info


def _traces(context: RunContext) -> list[TraceSide]:
    """Span `span` of every worker, loaded through the store (none without one)."""
    store = context.store
    picks = chosen_spans(context.run, context.span)
    out = []
    for worker, span in picks:
        model = None
        if store is not None:
            try:
                model = store.wait(span.path)
            except LoadFailed:
                model = None
        out.append(TraceSide(worker.name, span.name, span.file, model))
        if context.progress is not None:  # the job's progress counts trace files
            context.progress(len(out), len(picks))
    return out


def _joined(
    run: str, infos: list[CompileLogInfo], logs: list[LogFacts], traces: list[TraceSide]
) -> CompileResponse:
    ranks = trace_ranks(traces)
    compiles: list[Compile] = []
    recompiles: list[Recompile] = []
    out: CompileResponse = {
        "run": run,
        "state": "ready",
        "logs": infos,
        "compiles": compiles,
        "recompiles": recompiles,
        "graph_breaks": [],
        "failures": [],
        "cudagraphs": [],
        "alignments": [],
        "steps": [],
        "kernels": kernel_rows(logs),
        "events": [],
        "events_total": 0,
        "advice": [],
        "total_compile_us": 0.0,
    }
    placed: dict[int, list[Compile]] = {}
    pairs: list[tuple[Compile, CompileFacts]] = []
    for facts in logs:
        rows = [compile_row(facts, c) for c in facts.compiles.values()]
        named_from_siblings(rows)
        at, how = match(facts, traces, ranks, len(logs))
        trace = traces[at] if at is not None else None
        out["alignments"].append(_place(facts, rows, trace, how, traces))
        if at is not None:
            placed.setdefault(at, []).extend(rows)
        pairs.extend(zip(rows, facts.compiles.values()))
        compiles.extend(rows)
        _events(out, facts, trace.worker if trace is not None and trace.model else None)
    out["steps"] = _steps(traces, placed)  # sets each compile's `step`
    for row, c in pairs:
        found = recompile_row(row, c)
        if found is not None:
            found["trace_start_us"], found["step"] = row["trace_start_us"], row["step"]
            recompiles.append(found)
        out["graph_breaks"].extend(graph_break_rows(row, c))
        out["failures"].extend(failure_rows(row, c))
        out["cudagraphs"].extend(cudagraph_rows(row))
    out["total_compile_us"] = sum(_compile_us(c) for c in compiles)
    out["advice"] = advice(
        compiles, recompiles, out["graph_breaks"], out["failures"], out["cudagraphs"], out["steps"]
    )
    return out


def _place(
    facts: LogFacts,
    rows: list[Compile],
    trace: TraceSide | None,
    how: str | None,
    traces: list[TraceSide],
) -> CompileAlignment:
    if trace is not None and trace.model is not None:
        origin = trace.model.time_origin_us
        for row in rows:
            row["worker"] = trace.worker
            if row["start_us"] is not None:
                row["trace_start_us"] = row["start_us"] - origin
    said = alignment(facts, trace, how, [r["start_us"] for r in rows])
    failed = [t.worker for t in traces if t.model is None]
    if trace is None and failed:  # not "nothing in common": the traces could not say
        said["note"] = (
            f"no trace goes with this log: {', '.join(failed)} could not be read; its "
            "compiles are listed without trace times"
        )
    return said


def _steps(traces: list[TraceSide], placed: dict[int, list[Compile]]) -> list[StepCompileTime]:
    out: list[StepCompileTime] = []
    for at, rows in placed.items():
        model = traces[at].model
        if model is not None:
            out.extend(step_rows(traces[at].worker, model, rows))
    return out


def _compile_us(row: Compile) -> float:
    backward = row["backward"]
    return (row["dur_us"] or 0.0) + ((backward["dur_us"] or 0.0) if backward else 0.0)


def _events(out: CompileResponse, facts: LogFacts, worker: str | None) -> None:
    phases = facts.phases
    out["events_total"] += phases.total
    room = MAX_EVENTS - len(out["events"])
    # Kept as they close (an end names its begin); listed by start for the trace view.
    for phase in sorted(phases.kept[: max(room, 0)], key=lambda p: (p.start_us, p.depth)):
        event: CompileEvent = {
            "name": phase.name,
            "compile_id": phase.compile_id,
            "rank": facts.rank,
            "worker": worker,
            "start_us": phase.start_us,
            "dur_us": phase.dur_us,
            "depth": phase.depth,
        }
        out["events"].append(event)
