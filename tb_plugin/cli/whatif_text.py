"""`kinetoscope whatif`'s text: the change, the mean step before and after and the saving
over the span, the steps, and the predicted critical path of the median step by kind and
by what takes longest on it (its segments summed per rank, kind and name)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.lower import ms

if TYPE_CHECKING:
    from ..analysis.critical_path.types import WhatIfView

SEGMENTS_SHOWN = 12


def render_whatif(view: WhatIfView | Any) -> str:
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
    for text in view.get("bound_by", []):
        lines.append(f"bound by: {text}")
    for text in view["assumptions"]:
        lines.append(f"assumed: {text}")
    for text in view["warnings"]:
        lines.append(f"warning: {text}")
    return "\n".join(lines)


def _longest(segments: list[Any]) -> list[tuple[tuple[Any, str, str], tuple[float, int]]]:
    """The path's time per (rank, kind, name), longest first, at most SEGMENTS_SHOWN."""
    total: dict[tuple[Any, str, str], tuple[float, int]] = {}
    for s in segments:
        key = (s["rank"], s["kind"], s["name"])
        dur, count = total.get(key, (0.0, 0))
        total[key] = (dur + s["dur_us"], count + 1)
    return sorted(total.items(), key=lambda kv: -kv[1][0])[:SEGMENTS_SHOWN]
