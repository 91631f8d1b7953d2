"""The critical path folder's text, which the endpoints name (`text`) and the CLI finds
there. `kinetoscope report --format text`: the critical path views (`critical_path`,
`run_critical_path`) and the top gains (`top_gains`, `run_top_gains`): the step time, the
path by kind and by name, and the chain that set the median step, as runs of one thread
or stream each with its longest work. `kinetoscope whatif` (`whatif`, `run_whatif`): the
change, the mean step before and after and the saving over the span, the steps, and the
predicted critical path of the median step by kind and by what takes longest on it (its
segments summed per rank, kind and name)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, ms, table, wrap

if TYPE_CHECKING:
    from .types import CriticalPathView, PathSegment, TopGainsView, WhatIfView

NAMES_SHOWN = 12
RUNS_SHOWN = 25
SEGMENTS_SHOWN = 12


def render_critical_path(view: CriticalPathView, width: int = DEFAULT_WIDTH) -> str:
    steps = view["steps"]
    head = (
        f"Critical path ({view['scope']}; times in ms): mean step {ms(view['step_us'])} over "
        f"{len(steps)} steps (span {ms(view['span_us'])})"
    )
    total = sum(view["by_kind"].values()) or 1.0
    kinds = ", ".join(f"{k} {100 * v / total:.1f} %" for k, v in view["by_kind"].items())
    rows = [
        [n["kind"], n["name"], ms(n["dur_us"]), f"{n['share_pct']:.1f} %"]
        for n in view["by_name"][:NAMES_SHOWN]
    ]
    out = [head, f"by kind: {kinds}", table(["kind", "name", "time", "share"], rows, width)]
    chain = _median_chain(view)
    if chain:
        out += ["", *chain]
    if view["segments_total"] > len(view["segments"]):
        out.append(
            f"({len(view['segments'])} of {view['segments_total']} segments in this answer: "
            "--param offset=N pages on)"
        )
    out += [f"bound by: {text}" for text in view["bound_by"]]
    out += [f"assumed: {text}" for text in view["assumptions"]]
    out += [f"warning: {text}" for text in view["warnings"]]
    return "\n".join(out)


@dataclass
class _Run:
    """Consecutive segments on one rank and lane: their time, and each name's."""

    where: tuple[int | None, str]
    dur: float = 0.0
    work: dict[str, float] = field(default_factory=dict)


def _median_chain(view: CriticalPathView) -> list[str]:
    """The chain of the median step: its segments in runs on one rank and lane, each
    with its time and its longest work."""
    steps = view["steps"]
    if not steps or view["step"] is not None and len(steps) > 1:
        chosen = next((s for s in steps if s["step"] == view["step"]), None)
    else:
        median = statistics.median_low(s["step_us"] for s in steps) if steps else None
        chosen = next((s for s in steps if s["step_us"] == median), None)
    if chosen is None:
        return []
    offset = {c["rank"]: c["offset_us"] for c in view["clocks"]}
    lo, hi = chosen["start_us"], chosen["start_us"] + chosen["step_us"]
    mine = [
        s
        for s in view["segments"]
        if lo - 1e-6 <= s["start_us"] + offset.get(s["rank"], 0.0) < hi - 1e-6
    ]
    runs: list[_Run] = []
    for s in mine:
        where = (s["rank"], s["lane"])
        if not runs or runs[-1].where != where:
            runs.append(_Run(where))
        runs[-1].dur += s["dur_us"]
        key = s["name"] if s["kind"] != "idle" else f"({s['name']})"
        runs[-1].work[key] = runs[-1].work.get(key, 0.0) + s["dur_us"]
    lines = [f"the chain that set {chosen['step']} ({ms(chosen['step_us'])}), in order:"]
    for run in runs[:RUNS_SHOWN]:
        rank, lane = run.where
        top = sorted(run.work.items(), key=lambda kv: -kv[1])[:3]
        work = ", ".join(f"{name} {ms(t)}" for name, t in top)
        who = f"rank {rank} " if rank is not None and len(offset) > 1 else ""
        lines.append(f"  {who}{lane:<18} {ms(run.dur):>11}  {work}")
    if len(runs) > RUNS_SHOWN:
        lines.append(f"  ... {len(runs) - RUNS_SHOWN} more runs")
    return lines


def render_top_gains(view: TopGainsView, width: int = DEFAULT_WIDTH) -> str:
    head = (
        f"Top gains ({view['scope']}; times in ms): each made {view['factor']:g}x as long; "
        f"mean step {ms(view['baseline_step_us'])}, span {ms(view['baseline_span_us'])}; "
        "saved: over the span"
    )
    rows = [
        [g["kind"], g["name"], ms(g["saving_us"]), f"{g['saving_pct']:.1f} %", ms(g["path_us"])]
        for g in view["gains"]
    ]
    header = ["change", "name", "saved", "of span", "on the path"]
    body = table(header, rows, width) if rows else "no change on the path saves time"
    return "\n".join([head, body, *[f"assumed: {t}" for t in view["assumptions"]]])


def render_whatif(view: WhatIfView, width: int = DEFAULT_WIDTH) -> str:
    b, p = view["baseline_step_us"], view["predicted_step_us"]
    saved = view["saving_us"]
    lines = [
        f"what if: {view['label']} ({view['scope']}, {view['matched']} matched)",
        f"step time (mean of {len(view['steps'])} steps): {ms(b)} -> {ms(p)}  "
        f"({'-' if saved >= 0 else '+'}{ms(abs(saved))} over the span, "
        f"{-view['saving_pct']:+.1f} %)",
        "",
        "per step:",
    ]
    for s in view["steps"]:
        lines.append(f"  {s['step']:<24} {ms(s['baseline_us']):>12} -> {ms(s['predicted_us'])}")
    step = view["critical_path_step"]
    if step is not None:
        kinds = ", ".join(f"{k} {ms(v)}" for k, v in view["by_kind"].items())
        lines += ["", f"predicted critical path of {step}: {kinds}", "longest on it:"]
        for (rank, kind, name), (dur, count) in _longest(view["critical_path"]):
            where = "" if rank is None else f"rank {rank} "
            times = f" ({count} segments)" if count > 1 else ""
            lines.append(f"  {where}{kind:<10} {ms(dur):>12}  {name}{times}")
    # The sentences wrap to the terminal; a name on the path is never cut.
    lines += [wrap(text, width, "bound by: ") for text in view["bound_by"]]
    lines += [wrap(text, width, "assumed: ") for text in view["assumptions"]]
    lines += [wrap(text, width, "warning: ") for text in view["warnings"]]
    return "\n".join(lines)


Where = tuple["int | None", str, str]  # rank, kind, name


def _longest(segments: list[PathSegment]) -> list[tuple[Where, tuple[float, int]]]:
    """The path's time per (rank, kind, name), longest first, at most SEGMENTS_SHOWN."""
    total: dict[Where, tuple[float, int]] = {}
    for s in segments:
        key = (s["rank"], s["kind"], s["name"])
        dur, count = total.get(key, (0.0, 0))
        total[key] = (dur + s["dur_us"], count + 1)
    return sorted(total.items(), key=lambda kv: -kv[1][0])[:SEGMENTS_SHOWN]
