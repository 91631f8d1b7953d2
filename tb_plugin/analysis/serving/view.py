"""The `serving` view: a serving trace's iterations (`iterations.py`), the GPU work of
each (`metrics.py`), and per phase their statistics (`phases.py`).

An iteration's phase is, in order: what the engine's annotation counts say (context
requests only: prefill; generation only: decode; both: mixed; none: idle), SGLang's
forward mode (its step span or model-runner frame), else the work itself
(`phase_rules.py`: no GPU work, op shapes, graph replays, attention kernels), else
unknown. `phase_from` says which, in words.
"""

from __future__ import annotations

import numpy as np

from ...ingest.limits import env_number
from ...ingest.values import lenient_int
from ...model.errors import TooLarge, bounded
from ...model.trace_model import TraceModel
from .iterations import Found, find_iterations
from .metrics import IterationWork, iteration_work
from .phase_rules import Decided, decide
from .phases import NOTES, phase_stats
from .shapes import shape_counts
from .types import Capture, Iteration, ServingParams, ServingView, TopKernel

__all__ = ["serving", "serving_view"]


PAGE_MAX = 10_000  # iterations in one answer (the page's strip draws them all)


def max_iterations() -> int:
    """How many iterations a serving view holds at most (KINETOSCOPE_SERVING_MAX_ITERATIONS,
    default 200,000: a few hundred MB of the view)."""
    return int(env_number("KINETOSCOPE_SERVING_MAX_ITERATIONS", 200_000))


def serving_view(model: TraceModel, params: ServingParams) -> ServingView:
    """Iterations of a vLLM or SGLang serving trace (prefill, decode, mixed), the GPU
    work of each (a page of them: `offset`, `limit`), and per phase their statistics;
    or why there are none."""
    offset = bounded(params.get("offset"), "offset", 0, 0, 2**62)
    limit = bounded(params.get("limit"), "limit", PAGE_MAX, 1, PAGE_MAX)
    view = serving(model)
    return {
        **view,
        "iterations": view["iterations"][offset : offset + limit],
        "offset": offset,
        "limit": limit,
    }


def serving(model: TraceModel) -> ServingView:
    """The whole view (every iteration), kept with the model: its pages are cut from it."""
    return model.derived("_serving_view", _serving)


def _serving(model: TraceModel) -> ServingView:
    found = find_iterations(model)
    cap = max_iterations()
    if len(found) > cap:
        raise TooLarge(
            f"too_large: {len(found)} serving iterations, more than "
            f"KINETOSCOPE_SERVING_MAX_ITERATIONS ({cap}); profile fewer iterations "
            "(a shorter schedule), or raise the setting where memory allows (each iteration "
            "costs a few KB of the view)"
        )
    work = iteration_work(model, found)
    decided = decide(found, work, shape_counts(model, found))
    iterations = [_iteration(found, work, decided[i], i) for i in range(len(found))]
    _gaps(iterations)
    info = model.header.get("distributedInfo")
    info = info if isinstance(info, dict) else {}
    window = (
        [iterations[0]["start_us"], max(it["start_us"] + it["dur_us"] for it in iterations)]
        if iterations
        else []
    )
    return {
        "engine": found.engine,
        "source": found.source,
        "reason": found.reason,
        "rank": lenient_int(info.get("rank")),
        "world_size": lenient_int(info.get("world_size")),
        "iteration_count": len(iterations),
        "window_us": window,
        "iterations": iterations,  # every one here; `serving_view` answers a page
        "offset": 0,
        "limit": PAGE_MAX,
        "phases": phase_stats(iterations, work),
        "captures": _captures(found),
        "notes": list(NOTES) if iterations else [],
    }


def _us(ns: int | float) -> float:
    return round(float(ns) / 1000.0, 3)


def _at(origin_us: float, ns: int) -> float:
    return round(origin_us + ns / 1000.0, 3)


def _iteration(found: Found, work: IterationWork, decided: Decided, i: int) -> Iteration:
    marker = found.markers[i]
    has_gpu = bool(work.gpu_end[i] >= 0)
    start, host_end = int(work.start[i]), int(work.end[i])
    end = max(host_end, int(work.gpu_end[i])) if has_gpu else host_end
    kernel = int(work.kernel[i])
    top: list[TopKernel] = [
        {
            "name": top.name,
            "calls": top.calls,
            "total_us": _us(top.ns),
            "captured_as": top.captured_as,
            "captured_at": top.captured_at,
        }
        for top in work.top[i]
    ]
    return {
        "index": i,
        "phase": decided.phase,
        "phase_from": decided.phase_from,
        "marker": found.names[i],
        "start_us": _at(work.origin_us, start),
        "dur_us": _us(end - start),
        "host_dur_us": _us(host_end - start),
        "gpu_start_us": _at(work.origin_us, int(work.gpu_start[i])) if has_gpu else None,
        "gpu_end_us": _at(work.origin_us, int(work.gpu_end[i])) if has_gpu else None,
        "gpu_busy_us": _us(work.busy[i]),
        "gpu_idle_us": _us(work.gpu_end[i] - work.gpu_start[i] - work.busy[i]) if has_gpu else None,
        "kernel_us": _us(kernel),
        "graph_replayed_us": _us(work.replayed[i]),
        "graph_replayed_pct": round(100.0 * int(work.replayed[i]) / kernel, 2) if kernel else None,
        "scheduling_us": _us(work.first_launch[i] - start) if has_gpu else None,
        "queue_us": _us(max(0, work.gpu_start[i] - work.first_launch[i])) if has_gpu else None,
        "gap_before_us": None,
        "gpu_gap_before_us": None,
        "tokens": decided.tokens,
        "requests": decided.requests,
        "counts_from": decided.counts_from,
        "context_requests": marker.context_requests,
        "context_tokens": marker.context_tokens,
        "generation_requests": marker.generation_requests,
        "generation_tokens": marker.generation_tokens,
        "collective_calls": int(work.comm_calls[i]),
        "collective_us": _us(work.comm[i]),
        "top_kernels": top,
    }


def _gaps(iterations: list[Iteration]) -> None:
    """Idle time before each iteration: since every earlier one ended, on the host
    timeline (start to start + dur_us) and on the GPU."""
    reach = gpu_reach = -np.inf
    for k, it in enumerate(iterations):
        if k:
            it["gap_before_us"] = round(max(0.0, it["start_us"] - reach), 3)
            if it["gpu_start_us"] is not None and np.isfinite(gpu_reach):
                it["gpu_gap_before_us"] = round(max(0.0, it["gpu_start_us"] - gpu_reach), 3)
        reach = max(reach, it["start_us"] + it["dur_us"])
        if it["gpu_end_us"] is not None:
            gpu_reach = max(gpu_reach, it["gpu_end_us"])


def _captures(found: Found) -> list[Capture]:
    seen = dict.fromkeys((c.batch or 0, c.mode or "") for c in found.captures)
    return [{"batch": batch, "mode": mode} for batch, mode in seen]
