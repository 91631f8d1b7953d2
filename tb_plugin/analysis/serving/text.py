"""The serving view's CLI text (`kinetoscope report --format text`): its iterations and
per phase their statistics as tables; the endpoint names it (`text`), the CLI finds it
there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.text_tables import DEFAULT_WIDTH, Column, ms, number, or_dash, rows_table, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import ServingView

_count = or_dash(str)
_rate = or_dash(lambda v: number(v, 0))
_pct = or_dash(lambda v: number(v, 1))

_PHASE_COLUMNS: list[Column] = [
    ("phase", "phase", str),
    ("iterations", "count", str),
    ("median ms", "median", ms),
    ("p90 ms", "p90", ms),
    ("GPU busy ms", "busy", ms),
    ("tokens", "tokens", _count),
    ("tokens/s", "tokens_per_s", _rate),
    ("replayed %", "graph_replayed_pct", _pct),
    ("comm ms", "collective_us", ms),
]

_ITERATION_COLUMNS: list[Column] = [
    ("#", "index", str),
    ("phase", "phase", str),
    ("start ms", "at", ms),
    ("dur ms", "dur_us", ms),
    ("GPU busy ms", "gpu_busy_us", ms),
    ("sched ms", "scheduling_us", ms),
    ("tokens", "tokens", _count),
    ("requests", "requests", _count),
]


def _phase_rows(view: ServingView) -> list[dict[str, Any]]:
    return [
        {
            **stats,
            "phase": phase,
            "median": stats["dur_us"]["median"],
            "p90": stats["dur_us"]["p90"],
            "busy": stats["gpu_busy_us"]["median"],
        }
        for phase, stats in view["phases"].items()
    ]


def render_serving(view: ServingView, width: int = DEFAULT_WIDTH, top: int = 20) -> str:
    if not view["iterations"]:
        return "Serving iterations\n" + wrap(view["reason"] or "", width)
    engine = view["engine"] or "an engine"
    rank = "" if view["rank"] is None else f", rank {view['rank']} of {view['world_size']}"
    out = [
        wrap(
            f"Serving iterations ({view['iteration_count']} from {engine}'s "
            f"{(view['source'] or '').replace('_', ' ')}{rank})",
            width,
            "",
        ),
        rows_table(_PHASE_COLUMNS, _phase_rows(view), width),
    ]
    for phase, stats in view["phases"].items():
        for what, estimate in (
            ("first token", stats["first_token_us"]),
            ("per output token", stats["per_output_token_us"]),
        ):
            if estimate["value_us"] is not None:
                said = f"~{ms(estimate['value_us'])} ms ({estimate['assumption']})"
                out.append(wrap(f"{phase}: {what} {said}", width))
    origin = view["window_us"][0]
    rows = [{**it, "at": it["start_us"] - origin} for it in view["iterations"][:top]]
    shown = (
        f"first {len(rows)} of {view['iteration_count']}"
        if len(rows) < view["iteration_count"]
        else "all"
    )
    out.append(f"Iterations ({shown}; start from the first)")
    out.append(rows_table(_ITERATION_COLUMNS, rows, width))
    return "\n".join(out)
