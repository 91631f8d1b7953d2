"""The Diff's serving section: per phase of the serving view (prefill, decode, mixed, ...)
the numbers of both sides, from each side's `serving` view, so they are the ones its
Serving page shows. Kernel time by class is per iteration (each side's class total over
its own iteration count), so runs of a different length compare."""

from __future__ import annotations

from ...model.trace_model import TraceModel
from .. import serving as serving_analysis
from ..serving.markers import PHASES
from .numbers import compare
from .types import ServingPhaseDiff


def _estimate(stats: serving_analysis.PhaseStats | None) -> float | None:
    if stats is None:
        return None
    first, per_token = stats["first_token_us"]["value_us"], stats["per_output_token_us"]["value_us"]
    return first if first is not None else per_token


def _per_iteration(stats: serving_analysis.PhaseStats | None, cls: str) -> float | None:
    return None if stats is None else stats["classes_us"][cls] / stats["count"]


def _phase(
    phase: str, b: serving_analysis.PhaseStats | None, t: serving_analysis.PhaseStats | None
) -> ServingPhaseDiff:
    def of(stats: serving_analysis.PhaseStats | None, key: str, part: str) -> float | None:
        return None if stats is None else stats[key][part]  # type: ignore[literal-required]

    either = b if b is not None else t
    classes = list(either["classes_us"]) if either is not None else []
    return {
        "phase": phase,
        "iterations": compare(b["count"] if b else 0, t["count"] if t else 0),
        "median_us": compare(of(b, "dur_us", "median"), of(t, "dur_us", "median")),
        "p90_us": compare(of(b, "dur_us", "p90"), of(t, "dur_us", "p90")),
        "gpu_busy_median_us": compare(
            of(b, "gpu_busy_us", "median"), of(t, "gpu_busy_us", "median")
        ),
        "tokens_per_s": compare(b and b["tokens_per_s"], t and t["tokens_per_s"]),
        "per_token_us": compare(_estimate(b), _estimate(t)),
        "classes_per_iteration_us": {
            c: compare(_per_iteration(b, c), _per_iteration(t, c)) for c in classes
        },
    }


def serving_diff(base: TraceModel, target: TraceModel) -> tuple[list[ServingPhaseDiff], list[str]]:
    """Per phase either side has, and the notes: a side without iterations says why.
    Empty unless both sides have serving iterations."""
    sides = [
        serving_analysis.serving(m) if serving_analysis.supports(m) else None
        for m in (base, target)
    ]
    if sides[0] is None and sides[1] is None:
        return [], []
    notes = []
    for view, name in zip(sides, ("base", "target")):
        if view is None or not view["iterations"]:
            why = view["reason"] if view else "it records no serving engine marker"
            notes.append(f"the {name} has no serving iterations ({why}): no serving comparison")
    if notes:
        return [], notes
    b, t = sides[0]["phases"], sides[1]["phases"]  # type: ignore[index]
    return [_phase(p, b.get(p), t.get(p)) for p in PHASES if p in b or p in t], []
