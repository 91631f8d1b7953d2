"""A log's facts (`records.py`) as the `compile` view's rows: its compiles, recompiles, graph
breaks, failures, CUDA-graph notes and generated kernels (before they are placed on a
trace: `align.py` fills `worker`, `trace_start_us` and `step`).

Stage times: torch times a frame's compile nested (entire frame ⊇ backend ⊇ Inductor ⊇
code generation: `*_time_s` of the metrics); each stage here is its time less the next
inner stage the log has, so the four add up to the entire-frame time, and a stage the log
has no time for (Inductor on a cache hit) is None, its time counted in the stage around it.
"""

from __future__ import annotations

from typing import Any

from .phases import Phases
from .reasons import graph_break_text, recompile_reason
from .records import CompileFacts, LogFacts
from .types import (
    BackwardCompile,
    Compile,
    CompileCache,
    CompiledKernel,
    CompileFailure,
    CompileStages,
    CudaGraphNote,
    GraphBreak,
    KernelSite,
    Recompile,
    SourceLine,
)

# The nested stage times: seconds (`*_time_s`), or µs (`*_cumulative_compile_time_us`, which
# torch of late 2024 writes instead, and 2.13 besides: the same numbers).
_NESTED = (
    ("entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us"),
    ("backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"),
    ("inductor_compile_time_s", "inductor_cumulative_compile_time_us"),
    ("code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"),
)
_COUNTERS = {
    ("inductor", "hit"): (
        "inductor_fx_local_cache_hit_count",
        "inductor_fx_remote_cache_hit_count",
    ),
    ("inductor", "miss"): (
        "inductor_fx_local_cache_miss_count",
        "inductor_fx_remote_cache_miss_count",
    ),
    ("aot", "hit"): ("aotautograd_local_cache_hit_count", "aotautograd_remote_cache_hit_count"),
    ("aot", "miss"): ("aotautograd_local_cache_miss_count", "aotautograd_remote_cache_miss_count"),
}


def number(value: Any) -> float | None:
    """A number of the log (JSON int or float; a bool or anything else is no number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def seconds_us(value: Any) -> float | None:
    """Seconds (as torch's `*_time_s` metrics) in whole microseconds."""
    seconds = number(value)
    return None if seconds is None else float(round(seconds * 1e6))


def _int(value: Any) -> int | None:
    n = number(value)
    return None if n is None else int(n)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def nested_times(metrics: dict[str, Any] | None) -> list[float | None]:
    """Entire frame, backend, Inductor, code generation (µs), each with the ones inside it."""
    metrics = metrics or {}
    out = []
    for seconds, micros in _NESTED:
        value = seconds_us(metrics.get(seconds))
        out.append(value if value is not None else number(metrics.get(micros)))
    return out


def stages(metrics: dict[str, Any] | None) -> CompileStages:
    """Each stage's own time (module docstring)."""
    nested = nested_times(metrics)
    own: list[float | None] = []
    for at, value in enumerate(nested):
        inner = next((v for v in nested[at + 1 :] if v is not None), None)
        own.append(None if value is None else max(value - (inner or 0.0), 0.0))
    return {
        "dynamo_us": own[0],
        "aot_autograd_us": own[1],
        "inductor_us": own[2],
        "code_gen_us": own[3],
    }


def cache(metrics: dict[str, Any] | None, facts: CompileFacts | None) -> CompileCache:
    """Hits and misses from the metrics' counters (torch 2.5 on), else from the cache
    artifacts of the compile; a state only where some lookup was recorded."""
    metrics = metrics or {}
    if any(name in metrics for names in _COUNTERS.values() for name in names):
        counts = {
            key: int(sum(number(metrics.get(name)) or 0 for name in names))
            for key, names in _COUNTERS.items()
        }
    elif facts is not None and facts.cache:
        counts = {key: facts.cache.get(key, 0) for key in _COUNTERS}
    else:
        counts = {}
    hits = sum(v for (_, what), v in counts.items() if what == "hit")
    misses = sum(v for (_, what), v in counts.items() if what == "miss")
    state = "partial" if hits and misses else "hit" if hits else "miss" if misses else None
    saved = seconds_us(metrics.get("remote_cache_time_saved_s"))
    if saved is None and facts is not None and facts.time_saved_ms > 0:
        saved = facts.time_saved_ms * 1000.0
    return {
        "state": state,
        "inductor_hits": counts.get(("inductor", "hit")),
        "inductor_misses": counts.get(("inductor", "miss")),
        "aot_hits": counts.get(("aot", "hit")),
        "aot_misses": counts.get(("aot", "miss")),
        "time_saved_us": saved,
    }


def _start_end(
    metrics: dict[str, Any], dur: float | None, phase: tuple[float, float] | None
) -> tuple[float | None, float | None]:
    """Where the log states the compile's start (`start_time_us`, else `start_time` in
    seconds), else its `dynamo` phase; the end likewise (`end_time_us`, start + duration)."""
    start = number(metrics.get("start_time_us"))
    if start is None:
        seconds = number(metrics.get("start_time"))
        start = None if seconds is None else round(seconds * 1e6, 1)
    if start is None and phase is not None:
        return phase
    end = number(metrics.get("end_time_us"))
    if end is None and start is not None and dur is not None:
        end = start + dur
    return start, end


def _backward(facts: CompileFacts, phases: Phases) -> BackwardCompile | None:
    bwd = facts.backward
    if bwd is None:
        return None
    phase = phases.backward.get(facts.compile_id)
    dur = number(bwd.get("duration_us"))
    if dur is None and phase is not None:
        dur = phase[1] - phase[0]
    start, _ = _start_end(bwd, dur, phase)
    inner = stages(bwd)  # a backward has the Inductor stages only
    return {
        "start_us": start,
        "dur_us": dur,
        "inductor_us": inner["inductor_us"],
        "code_gen_us": inner["code_gen_us"],
        "cache": cache(bwd, None),
        "failed": _text(bwd.get("fail_type")) is not None,
    }


def compile_row(log: LogFacts, facts: CompileFacts) -> Compile:
    metrics = facts.metrics or {}
    dur = nested_times(metrics)[0]
    entire = log.phases.entire.get(facts.compile_id)
    if dur is None and entire is not None:  # the same time, as its chromium phase
        dur = entire[1] - entire[0]
    phase = log.phases.frames.get(facts.compile_id)
    start, end = _start_end(metrics, dur, phase)
    status = (
        "unknown"
        if facts.metrics is None
        else "failed"
        if _text(metrics.get("fail_type"))
        else "compiled"
    )
    reasons = recompile_reasons(facts)
    return {
        "compile_id": facts.compile_id,
        "rank": log.rank,
        "log": log.log.file,
        "frame": _text(metrics.get("co_name")),
        "file": _text(metrics.get("co_filename")),
        "line": _int(metrics.get("co_firstlineno")),
        "attempts": facts.attempts,
        "status": status,  # type: ignore[typeddict-item]
        "reason": reasons[0] if reasons else None,
        "start_us": start,
        "end_us": end,
        "dur_us": dur,
        "stages": stages(facts.metrics),
        "cache": cache(facts.metrics, facts),
        "backward": _backward(facts, log.phases),
        "guard_count": _int(metrics.get("guard_count")),
        "graph_op_count": _int(metrics.get("graph_op_count")),
        "graph_breaks": _int(metrics.get("num_graph_breaks")),
        "cudagraph_records": log.phases.cudagraph_records.get(facts.compile_id, 0),
        "cudagraph_skip_reason": _cudagraph_skip(facts),
        "kernels": list(facts.kernels),
        "worker": None,
        "trace_start_us": None,
        "step": None,
    }


def recompile_reasons(facts: CompileFacts) -> list[str]:
    """Each failed cache entry's line (the artifact's list), else the metrics' reason."""
    texts = facts.recompile_reasons or [_text((facts.metrics or {}).get("recompile_reason")) or ""]
    # The first line of each (a value guard's user stack follows it), its padding closed up.
    return [" ".join(t.strip().partition("\n")[0].split()) for t in texts if t.strip()]


def frame_compile(compile_id: str) -> int | None:
    """The frame's compile count of an id ("0/2" → 2), None when it is no frame's."""
    tail = compile_id.rpartition("/")[2].partition("_")[0]
    return int(tail) if tail.isdigit() and "/" in compile_id else None


def recompile_row(row: Compile, facts: CompileFacts) -> Recompile | None:
    """A compile of a frame compiled before (its compile count > 0, or a stated reason)."""
    reasons = recompile_reasons(facts)
    if not reasons and not (frame_compile(facts.compile_id) or 0) > 0:
        return None
    # Read with its user stack: the source line's whole file is there.
    whole = [t for t in facts.recompile_reasons or [] if t.strip()]
    parsed = recompile_reason(whole[0] if whole else reasons[0]) if reasons else None
    return {
        "compile_id": row["compile_id"],
        "rank": row["rank"],
        "frame": row["frame"],
        "file": row["file"],
        "line": row["line"],
        "reasons": reasons,
        "kind": parsed.kind if parsed else "other",
        "guard": parsed.guard if parsed else None,
        "detail": parsed.detail if parsed else None,
        "source": parsed.source if parsed else None,
        "start_us": row["start_us"],
        "trace_start_us": None,
        "step": None,
    }


def named_from_siblings(rows: list[Compile]) -> None:
    """A compile whose metrics name no frame (one stopped at the recompile limit: torch
    writes no `co_name` then) takes its frame's name and place from another compile of the
    same frame id in the same log, never shown as an unnamed frame."""
    known = {row["compile_id"].partition("/")[0]: row for row in rows if row["frame"] is not None}
    for row in rows:
        sibling = known.get(row["compile_id"].partition("/")[0])
        if row["frame"] is None and sibling is not None and "/" in row["compile_id"]:
            row["frame"], row["file"], row["line"] = (
                sibling["frame"],
                sibling["file"],
                sibling["line"],
            )


def graph_break_rows(row: Compile, facts: CompileFacts) -> list[GraphBreak]:
    """The graph breaks the log states for a compile: its `dynamo_graph_break_reason`
    artifacts, else (older torch) its `restart_reasons`."""
    texts = facts.graph_breaks
    if not texts:
        restarts = (facts.metrics or {}).get("restart_reasons")
        texts = [t for t in restarts if isinstance(t, str)] if isinstance(restarts, list) else []
    out: list[GraphBreak] = []
    for text in texts:
        parsed = graph_break_text(text)
        out.append(
            {
                "compile_id": row["compile_id"],
                "rank": row["rank"],
                "frame": row["frame"],
                "file": parsed.file,
                "line": parsed.line,
                "reason": parsed.reason,
                "explanation": parsed.explanation,
                "hints": parsed.hints,
                "user": parsed.user,
                "stack": parsed.stack,
            }
        )
    return out


def failure_rows(row: Compile, facts: CompileFacts) -> list[CompileFailure]:
    out: list[CompileFailure] = []
    for metrics, side in ((facts.metrics, ""), (facts.backward, "backward: ")):
        fail_type = _text((metrics or {}).get("fail_type"))
        if metrics is None or fail_type is None:
            continue
        file, line = (
            _text(metrics.get("fail_user_frame_filename")),
            _int(metrics.get("fail_user_frame_lineno")),
        )
        reason = _text(metrics.get("fail_reason"))
        suppressed = metrics.get("config_suppress_errors")
        out.append(
            {
                "compile_id": row["compile_id"],
                "rank": row["rank"],
                "frame": row["frame"],
                "fail_type": fail_type,
                "reason": f"{side}{reason}" if reason else side.rstrip(": ") or None,
                "user": SourceLine(file=file, line=line, name=None) if file else None,
                "suppressed": suppressed if isinstance(suppressed, bool) else None,
            }
        )
    return out


def _cudagraph_skip(facts: CompileFacts) -> str | None:
    for metrics in (facts.metrics, facts.backward):
        reason = _text((metrics or {}).get("cudagraph_skip_reason"))
        if reason:
            return reason
    return None


def cudagraph_rows(row: Compile) -> list[CudaGraphNote]:
    out: list[CudaGraphNote] = []
    cid, rank = row["compile_id"], row["rank"]
    skipped = row["cudagraph_skip_reason"]
    if skipped:
        out.append(
            {"compile_id": cid, "rank": rank, "kind": "skipped", "reason": skipped, "count": 1}
        )
    if row["cudagraph_records"] > 1:
        count = row["cudagraph_records"] - 1
        out.append(
            {"compile_id": cid, "rank": rank, "kind": "rerecorded", "reason": None, "count": count}
        )
    return out


def kernel_rows(logs: list[LogFacts]) -> list[CompiledKernel]:
    """Each generated kernel's name with the compiles whose code defines one so named."""
    by_name: dict[str, CompiledKernel] = {}
    for log in logs:
        for facts in log.compiles.values():
            for name, files in facts.kernels.items():
                kernel = by_name.setdefault(name, {"name": name, "compiles": []})
                site: KernelSite = {
                    "compile_id": facts.compile_id,
                    "rank": log.rank,
                    "wrappers": files,
                }
                kernel["compiles"].append(site)
    return sorted(by_name.values(), key=lambda k: k["name"])
