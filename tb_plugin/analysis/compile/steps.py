"""Compile time inside each profiler step of a trace: "step 1: 11.7 s compiling frame 0/0
(`forward`, model.py:5)". A compile's time is its forward compile (the log's start and
entire-frame time) and its backward compile, each on the trace's clock, cut to the step;
steps are the Overview's (`core/steps`)."""

from __future__ import annotations

import os

from ...model.trace_model import TraceModel
from ..core.steps import find_steps
from .types import Compile, StepCompilePart, StepCompileTime

MAX_NAMED = 3  # frames a step's text names; the rest are counted


def intervals(row: Compile, origin: float) -> list[tuple[float, float, bool]]:
    """(start, end, backward) of a compile on a trace's clock, where the log has both."""
    out = []
    if row["start_us"] is not None and row["dur_us"] is not None:
        start = row["start_us"] - origin
        out.append((start, start + row["dur_us"], False))
    bwd = row["backward"]
    if bwd and bwd["start_us"] is not None and bwd["dur_us"] is not None:
        start = bwd["start_us"] - origin
        out.append((start, start + bwd["dur_us"], True))
    return out


def step_rows(worker: str, model: TraceModel, compiles: list[Compile]) -> list[StepCompileTime]:
    """The steps of `model` that hold compile time (each compile's `step` is set too: the
    step its forward compile starts in)."""
    steps = find_steps(model)
    origin = model.time_origin_us
    out: list[StepCompileTime] = []
    for at, (name, number) in enumerate(zip(steps.names, steps.numbers)):
        lo, hi = float(steps.starts[at]), float(steps.ends[at])
        parts: list[StepCompilePart] = []
        for row in compiles:
            for start, end, backward in intervals(row, origin):
                if not backward and lo <= start < hi:
                    row["step"] = number
                us = min(end, hi) - max(start, lo)
                if us > 0:
                    parts.append(_part(row, backward, us))
        if parts:
            total = sum(p["us"] for p in parts)
            out.append(
                {
                    "worker": worker,
                    "step": number,
                    "name": name,
                    "start_us": lo + origin,
                    "trace_start_us": lo,
                    "step_us": hi - lo,
                    "compile_us": total,
                    "compiles": parts,
                    "text": step_text(name, number, total, parts),
                }
            )
    return out


def _part(row: Compile, backward: bool, us: float) -> StepCompilePart:
    return {
        "compile_id": row["compile_id"],
        "frame": row["frame"],
        "file": row["file"],
        "line": row["line"],
        "backward": backward,
        "us": us,
    }


def duration_text(us: float) -> str:
    """11.7 s, 420 ms, 35 µs."""
    if us >= 1e6:
        return f"{us / 1e6:.1f} s"
    if us >= 1e3:
        return f"{us / 1e3:.0f} ms"
    return f"{us:.0f} µs"


def frame_text(compile_id: str, frame: str | None, file: str | None, line: int | None) -> str:
    """frame 0/0 (`forward`, model.py:5)"""
    where = f"{os.path.basename(file)}:{line}" if file and line is not None else None
    inside = ", ".join(x for x in (f"`{frame}`" if frame else None, where) if x)
    return f"frame {compile_id}" + (f" ({inside})" if inside else "")


def step_text(name: str, number: int | None, total: float, parts: list[StepCompilePart]) -> str:
    """ "step 1: 11.7 s compiling frame 0/0 (`forward`, model.py:5)", the frames by time."""
    by_id: dict[str, tuple[float, StepCompilePart]] = {}
    for part in parts:
        spent, first = by_id.get(part["compile_id"], (0.0, part))
        by_id[part["compile_id"]] = (spent + part["us"], first)
    ranked = sorted(by_id.values(), key=lambda item: -item[0])
    named = [frame_text(p["compile_id"], p["frame"], p["file"], p["line"]) for _, p in ranked]
    shown = ", ".join(named[:MAX_NAMED])
    more = len(named) - MAX_NAMED
    label = f"step {number}" if number is not None else name
    return f"{label}: {duration_text(total)} compiling {shown}" + (
        f" and {more} more" if more > 0 else ""
    )
