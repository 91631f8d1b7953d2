"""The `critical_path`, `whatif` and `top_gains` views of a joined graph (one trace, or the
ranks of a run): the chain that sets each step's length, the steps re-timed under one
change, and the changes worth most. docs/critical_path.md has the method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Literal

import numpy as np

from ...model.errors import ViewParamError, bounded
from ..core.rules import collective_type
from .changes import Change, change_of, check_factor
from .graph import QUEUED_GAP
from .joint import Joint
from .outcome import Outcome, median_step
from .path import Segment
from .segments import Segments, concat
from .types import (
    CriticalPathParams,
    CriticalPathView,
    Gain,
    PathName,
    PathRank,
    PathSegment,
    StepPath,
    StepPrediction,
    TopGainsParams,
    TopGainsView,
    WhatIfParams,
    WhatIfView,
)

MAX_SEGMENTS = 5000
MAX_NAMES = 50
TOP_CANDIDATES = 12  # changes simulated for `top_gains`
Scope = Literal["span", "run"]


def _r(x: float) -> float:
    return round(float(x), 3)


def baseline(joint: Joint) -> Outcome:
    """The recorded timing, kept with the joint graph."""
    found = getattr(joint, "_baseline", None)
    if found is None:
        found = Outcome(joint)
        joint._baseline = found  # type: ignore[attr-defined]
    return found


def critical_path_of(joint: Joint, scope: Scope, params: CriticalPathParams) -> CriticalPathView:
    outcome = baseline(joint)
    steps = outcome.steps
    paths = [outcome.path(i) for i in range(len(steps))]
    chosen = chosen_step(steps.names, steps.numbers, params.get("step"))
    labels, _ = joint.labels
    shown = paths[chosen] if chosen is not None else concat(paths, labels, joint.graph.lanes)
    offset, limit = page_of(params)
    durations = steps.durations
    step_us = durations[chosen] if chosen is not None else mean_step(durations)
    return {
        "scope": scope,
        "step": steps.names[chosen] if chosen is not None else None,
        "step_us": _r(step_us),
        "span_us": _r(durations.sum()),
        "steps": [_step_row(steps, i, p) for i, p in enumerate(paths)],
        "segments": [_segment(joint, s) for s in shown.take(offset, offset + limit)],
        "segments_total": len(shown),
        "offset": offset,
        "limit": limit,
        **_totals(joint, shown),  # type: ignore[typeddict-item]
        "bound_by": bound_by(shown),
        "clocks": [
            {"rank": p.rank, "worker": p.worker, "offset_us": _r(joint.time_offset[i])}
            for i, p in enumerate(joint.parts)
        ],
        "assumptions": assumptions(joint),
        "warnings": warnings(joint),
    }


def page_of(params: Mapping[str, Any]) -> tuple[int, int]:
    """The page of path segments asked (`offset`, `limit`), as other long answers page."""
    offset = bounded(_int(params.get("offset"), "offset"), "offset", 0, 0, 2**62)
    limit = bounded(_int(params.get("limit"), "limit"), "limit", MAX_SEGMENTS, 1, MAX_SEGMENTS)
    return offset, limit


def _int(value: Any, key: str) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ViewParamError(f"{key}: a whole number, not {value!r}")
    try:
        return int(value)
    except ValueError:
        raise ViewParamError(f"{key}: a whole number, not {value!r}") from None


def chosen_step(names: list[str], numbers: list[int | None], asked: Any) -> int | None:
    if asked in (None, ""):
        return None
    text = str(asked)
    for i, (name, number) in enumerate(zip(names, numbers)):
        if text == name or (number is not None and text == str(number)):
            return i
    raise ViewParamError(f"step {text!r} is not a step of this span: {', '.join(names[:20])}")


def mean_step(durations: np.ndarray) -> float:
    """A span's step time: its steps' total over their count (the Overview's average)."""
    return float(durations.sum() / durations.size) if durations.size else 0.0


def _step_row(steps: Any, i: int, path: Segments) -> StepPath:
    by_kind = path.by_kind()
    return {
        "step": steps.names[i],
        "number": steps.numbers[i],
        "start_us": _r(steps.start[i]),
        "step_us": _r(steps.durations[i]),
        "by_kind": {k: _r(v) for k, v in sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0]))},
    }


def _segment(joint: Joint, s: Segment) -> PathSegment:
    part = joint.parts[s.rank]
    return {
        "rank": part.rank,
        "worker": part.worker,
        "kind": s.kind,
        "name": s.name,
        "start_us": _r(s.start - joint.time_offset[s.rank]),
        "dur_us": _r(s.dur),
        "lane": s.lane,
    }


def _totals(joint: Joint, segments: Segments) -> dict[str, Any]:
    by_kind, by_name = segments.by_kind(), segments.by_name()
    length = sum(by_kind.values()) or 1.0
    names: list[PathName] = [
        {"kind": k, "name": n, "dur_us": _r(v), "share_pct": _r(100.0 * v / length)}
        for (k, n), v in sorted(by_name.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_NAMES]
    ]
    per_rank = segments.by_rank(len(joint.parts))
    ranks: list[PathRank] = [
        {"rank": p.rank, "worker": p.worker, "dur_us": _r(per_rank[i])}
        for i, p in enumerate(joint.parts)
        if per_rank[i] > 0
    ]
    kinds = {k: _r(v) for k, v in sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0]))}
    return {"by_kind": kinds, "by_name": names, "by_rank": ranks}


def whatif_of(
    joint: Joint, scope: Scope, params: WhatIfParams, changed_joint: Joint | None = None
) -> WhatIfView:
    """`changed_joint`: the ranks' summaries under the change (a large run), whose
    evaluation is the prediction; else the change re-times `joint` itself. The saving is
    over the whole span (every step): a median step could move the other way."""
    change = change_of(dict(params))
    if change is None:
        raise ViewParamError("name a change: kernel=, op=, collective= or rank_all=1, and factor=")
    changed = Outcome(changed_joint or joint, change)
    matched = sum(f.matched for f in changed.factors)
    if matched == 0:
        raise ViewParamError(f"nothing to change: no {change.label()} in this {scope}")
    base = baseline(joint).steps
    predicted = changed.steps
    median = median_step(predicted.durations)
    labels, _ = joint.labels
    path = changed.path(median) if median >= 0 else concat([], labels, joint.graph.lanes)
    offset, limit = page_of(params)
    by_kind = path.by_kind()
    b, p = float(base.durations.sum()), float(predicted.durations.sum())
    return {
        "scope": scope,
        "change": {
            "kind": change.kind,  # type: ignore[typeddict-item]
            "name": change.name,
            "factor": change.factor,
            "rank": change.rank,
        },
        "label": change.label(),
        "matched": int(matched),
        "baseline_step_us": _r(mean_step(base.durations)),
        "predicted_step_us": _r(mean_step(predicted.durations)),
        "baseline_span_us": _r(b),
        "predicted_span_us": _r(p),
        "saving_us": _r(b - p),
        "saving_pct": _r(100.0 * (b - p) / b) if b > 0 else 0.0,
        "steps": _predictions(base, predicted),
        "critical_path_step": predicted.names[median] if median >= 0 else None,
        "critical_path": [_segment(joint, s) for s in path.take(offset, offset + limit)],
        "critical_path_total": len(path),
        "by_kind": {k: _r(v) for k, v in sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0]))},
        "bound_by": bound_by(path),
        "method": "summaries" if changed_joint is not None else "graph",
        "assumptions": assumptions(joint) + [PREDICTION_ASSUMES],
        "warnings": warnings(joint),
    }


# The gaps a change of recorded work cannot shorten: the trace shows no cause for them.
UNCAUSED = (
    "launch delay",
    QUEUED_GAP,
    "unknown dependency",
    "wake-up delay",
    "host gap",
    "stream gap",
)
# What such a gap is, where its name does not say it.
_MEANS = {
    QUEUED_GAP: "queued on the GPU but not started: the device held it (work of other "
    "streams, a wait the trace does not record), not the host's launch"
}
BOUND_SHARE = 0.1  # said when one takes at least this share of the path


def bound_by(path: Segments) -> list[str]:
    """The gaps of no recorded cause that take at least BOUND_SHARE of the path, longest
    first, each with its share and what it means for a change."""
    length = float(path.dur.sum())
    if length <= 0:
        return []
    idle = [
        (name, t)
        for (kind, name), t in path.by_name().items()
        if kind == "idle" and name in UNCAUSED
    ]
    out = []
    for name, t in sorted(idle, key=lambda kv: (-kv[1], kv[0])):
        if t >= BOUND_SHARE * length:
            means = f"; {_MEANS[name]}" if name in _MEANS else ""
            out.append(
                f"{100 * t / length:.1f} % of the path is {name} ({_r(t / 1000)} ms): time the "
                f"trace shows no cause for (work or waits it does not record){means}; no change "
                "of recorded work shortens it"
            )
    return out


PREDICTION_ASSUMES = (
    "the prediction scales only the change: everything else keeps its recorded time, every "
    "gap and delay its recorded length; contention (for the GPU, memory bandwidth, the "
    "network, the CPU) is not modelled"
)


def _predictions(base: Any, predicted: Any) -> list[StepPrediction]:
    return [
        {"step": name, "baseline_us": _r(b), "predicted_us": _r(p)}
        for name, b, p in zip(base.names, base.durations, predicted.durations)
    ]


# Per change, the steps' durations under it; None: it matched nothing (no change).
Predictor = Callable[[list[Change]], list["np.ndarray | None"]]


def top_gains_of(
    joint: Joint, scope: Scope, params: TopGainsParams, predict: Predictor | None = None
) -> TopGainsView:
    """`predict`: how the steps are re-timed under each candidate (a large run: its ranks'
    summaries under every candidate, `run_gains.py`); by default the change re-times
    `joint` itself."""
    factor = check_factor(params.get("factor", 0.5))
    outcome = baseline(joint)
    steps = outcome.steps
    segments = outcome.paths()
    b = float(steps.durations.sum())
    gains: list[Gain] = []
    found = candidates(segments)
    changes = [Change(kind, name, factor) for kind, name, _ in found]
    predictions = (predict or partial(predicted_steps, joint))(changes)
    for (kind, name, on_path), predicted in zip(found, predictions):
        if predicted is None:
            continue
        p = float(predicted.sum())
        if b - p <= SAVING_FLOOR_US:
            continue  # no gain (or a loss): not a gain to list
        gains.append(
            {
                "kind": kind,  # type: ignore[typeddict-item]
                "name": name,
                "path_us": _r(on_path),
                "predicted_step_us": _r(mean_step(predicted)),
                "saving_us": _r(b - p),
                "saving_pct": _r(100.0 * (b - p) / b) if b > 0 else 0.0,
            }
        )
    gains.sort(key=lambda g: (-g["saving_us"], g["name"]))
    return {
        "scope": scope,
        "factor": factor,
        "baseline_step_us": _r(mean_step(steps.durations)),
        "baseline_span_us": _r(b),
        "gains": gains,
        "assumptions": assumptions(joint) + [PREDICTION_ASSUMES],
    }


SAVING_FLOOR_US = 0.0005  # below the answers' rounding: nothing saved
PARALLEL_NODES = 100_000  # a graph this big is re-timed for several changes side by side


def predicted_steps(joint: Joint, changes: list[Change]) -> list[np.ndarray | None]:
    """Per change, the steps' durations under it. On a big graph two at a time: a
    re-timing is mostly numpy passes and the compiled evaluation, which let go of the
    GIL (the default report uses both cores too)."""

    def durations(change: Change) -> np.ndarray:
        return Outcome(joint, change).steps.durations

    if len(joint.graph) < PARALLEL_NODES or len(changes) < 2:
        return [durations(c) for c in changes]
    with ThreadPoolExecutor(2, thread_name_prefix="kinetoscope-whatif") as pool:
        return list(pool.map(durations, changes))


def candidates(segments: Segments) -> list[tuple[str, str, float]]:
    """(change kind, name, time on the path) of the kernels, ops and collective types on
    the path, longest first, at most TOP_CANDIDATES."""
    time: dict[tuple[str, str], float] = {}
    for (kind, name), dur in segments.by_name().items():
        if kind in ("kernel", "memcpy", "memset"):
            key = ("kernel", name)
        elif kind == "cpu":
            key = ("op", name)
        elif kind == "collective":
            key = ("collective", collective_type(name) or name)
        else:
            continue
        time[key] = time.get(key, 0.0) + dur
    ranked = sorted(time.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_CANDIDATES]
    return [(k, n, v) for (k, n), v in ranked]


def assumptions(joint: Joint) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for part in joint.parts:
        for text in part.assumptions:
            label = f"{part.worker}: {text}" if len(joint.parts) > 1 and part.worker else text
            if label not in seen:
                seen.add(label)
                out.append(label)
    if len(joint.parts) == 1 and joint.parts[0].table.count:
        out.append(
            "other ranks are not in this trace: each collective keeps its recorded wait (it "
            "ends its recorded duration after this rank arrives), as if every rank changed "
            "alike; a collective's change scales its whole time, wait included (the run's "
            "view tells the wait from the transfer)"
        )
    return out


def warnings(joint: Joint) -> list[str]:
    out = []
    for role, count in sorted(joint.graph.dropped.items()):
        out.append(f"{count} {role} links go back in time (the trace's clocks disagree): left out")
    return out + _steps_left_out(joint)


SHOWN_STEPS = 3  # steps named per rank in the warning


def _steps_left_out(joint: Joint) -> list[str]:
    """A run's steps are those every rank has (by name): the others are said, per rank,
    so a path of fewer steps, or none, says why."""
    if len(joint.anchors) < 2:
        return []
    common = set(joint.anchors[0].names).intersection(*(a.names for a in joint.anchors[1:]))
    shown, total = [], 0
    for part, anchors in zip(joint.parts, joint.anchors):
        extra = [name for name in anchors.names if name not in common]
        total += len(extra)
        if extra:
            more = f" and {len(extra) - SHOWN_STEPS} more" if len(extra) > SHOWN_STEPS else ""
            shown.append(f"{part.worker}: {', '.join(extra[:SHOWN_STEPS])}{more}")
    if not total:
        return []
    return [
        f"{total} steps not recorded on every rank are left out (a run's step is one every "
        f"rank has, by name; {len(common)} are): " + "; ".join(shown)
    ]


def change_from(params: Mapping[str, Any]) -> Change | None:
    return change_of(dict(params))
