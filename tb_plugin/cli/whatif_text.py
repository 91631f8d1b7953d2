"""`kinetoscope whatif`'s text: the change, the step time before and after, the steps, and
the predicted critical path of the median step by kind and by its longest segments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .text_tables import ms

if TYPE_CHECKING:
    from ..api.view_types import WhatIfView

SEGMENTS_SHOWN = 12


def render_whatif(view: WhatIfView | Any) -> str:
    b, p = view["baseline_step_us"], view["predicted_step_us"]
    lines = [
        f"what if: {view['label']} ({view['scope']}, {view['matched']} matched)",
        f"step time (median): {ms(b)} -> {ms(p)}  "
        f"({'-' if view['saving_us'] >= 0 else '+'}{ms(abs(view['saving_us']))}, "
        f"{-view['saving_pct']:+.1f} %)",
        "",
        "per step:",
    ]
    for s in view["steps"]:
        lines.append(f"  {s['step']:<24} {ms(s['baseline_us']):>12} -> {ms(s['predicted_us'])}")
    step = view["critical_path_step"]
    if step is not None:
        kinds = ", ".join(f"{k} {ms(v)}" for k, v in view["by_kind"].items())
        lines += ["", f"predicted critical path of {step}: {kinds}"]
        longest = sorted(view["critical_path"], key=lambda s: -s["dur_us"])[:SEGMENTS_SHOWN]
        for s in sorted(longest, key=lambda s: s["start_us"]):
            rank = "" if s["rank"] is None else f"rank {s['rank']} "
            lines.append(f"  {rank}{s['kind']:<10} {ms(s['dur_us']):>12}  {s['name']}")
    for text in view["assumptions"]:
        lines.append(f"assumed: {text}")
    for text in view["warnings"]:
        lines.append(f"warning: {text}")
    return "\n".join(lines)
