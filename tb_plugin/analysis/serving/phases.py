"""Per phase (prefill, decode, mixed, idle, unknown): how many iterations, their times'
median and p90, tokens and tokens per second where the engine gave tokens, kernel time by
taxonomy class, graph replay share, communication, and per-token latency estimates with
the assumptions they rest on (`NOTES` and each estimate's `assumption`)."""

from __future__ import annotations

import numpy as np

from .markers import PHASES
from .metrics import CLASSES, IterationWork
from .types import Estimate, Iteration, PhaseStats, Stat

NOTES = (
    "dur_us runs from the iteration's marker start to the later of the marker's end and "
    "the end of the GPU work it launched; GPU work still queued behind earlier work counts in it",
    "tokens per second divide a phase's tokens by the summed dur_us of its iterations that "
    "carry token counts: iterations that overlap (asynchronous scheduling) make it low",
    "a GPU activity belongs to the iteration whose span, on the same thread, holds its launch call",
)
FIRST_TOKEN = (
    "median prefill iteration: a request's prompt is prefilled in one iteration (no "
    "chunked prefill) and its first token comes out at that iteration's end; time queued "
    "before it is not seen"
)
PER_TOKEN = (
    "median decode iteration: each decode iteration gives every running request one "
    "token (no speculative decoding)"
)


def _stat(values: list[float]) -> Stat:
    if not values:
        return {"median": None, "p90": None, "mean": None, "total": None}
    a = np.asarray(values, dtype=np.float64)
    return {
        "median": round(float(np.median(a)), 3),
        "p90": round(float(np.percentile(a, 90)), 3),
        "mean": round(float(a.mean()), 3),
        "total": round(float(a.sum()), 3),
    }


def _known(its: list[Iteration], key: str) -> list[float]:
    return [float(it[key]) for it in its if it[key] is not None]  # type: ignore[literal-required]


def phase_stats(iterations: list[Iteration], work: IterationWork) -> dict[str, PhaseStats]:
    out: dict[str, PhaseStats] = {}
    for phase in PHASES:
        idx = [it["index"] for it in iterations if it["phase"] == phase]
        if idx:
            out[phase] = _one(phase, [iterations[i] for i in idx], work, np.array(idx))
    return out


def _one(phase: str, its: list[Iteration], work: IterationWork, idx: np.ndarray) -> PhaseStats:
    with_tokens = [it for it in its if it["tokens"] is not None]
    tokens = sum(int(it["tokens"] or 0) for it in with_tokens) if with_tokens else None
    token_time = sum(it["dur_us"] for it in with_tokens)
    requests = [int(it["requests"]) for it in its if it["requests"] is not None]
    kernel = float(work.kernel[idx].sum())
    classes = work.classes[idx].sum(axis=0)
    types: dict[str, int] = {}
    for i in idx.tolist():
        for kind, n in work.comm_types[i].items():
            types[kind] = types.get(kind, 0) + n
    median = _stat([it["dur_us"] for it in its])["median"]
    return {
        "count": len(its),
        "dur_us": _stat([it["dur_us"] for it in its]),
        "gpu_busy_us": _stat([it["gpu_busy_us"] for it in its]),
        "scheduling_us": _stat(_known(its, "scheduling_us")),
        "gap_before_us": _stat(_known(its, "gap_before_us")),
        "tokens": tokens,
        "requests": sum(requests) if requests else None,
        "iterations_with_tokens": len(with_tokens),
        "tokens_per_s": round(1e6 * tokens / token_time, 3)
        if tokens is not None and token_time > 0
        else None,
        "kernel_us": round(kernel / 1000.0, 3),
        "classes_us": {c: round(float(classes[j]) / 1000.0, 3) for j, c in enumerate(CLASSES)},
        "graph_replayed_pct": round(100.0 * float(work.replayed[idx].sum()) / kernel, 2)
        if kernel
        else None,
        "collective_calls": int(work.comm_calls[idx].sum()),
        "collective_us": round(float(work.comm[idx].sum()) / 1000.0, 3),
        "collective_types": dict(sorted(types.items())),
        "first_token_us": _estimate(median if phase == "prefill" else None, FIRST_TOKEN),
        "per_output_token_us": _estimate(median if phase == "decode" else None, PER_TOKEN),
    }


def _estimate(value: float | None, assumption: str) -> Estimate:
    return {"value_us": value, "assumption": assumption}
