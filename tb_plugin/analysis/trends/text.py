"""Plain-text rendering of the trend view for `kinetoscope trend` (the endpoint's `text`):
the runs in trace start order (step time, memory peak) and the regressions and
improvements, each with the pair of runs to `kinetoscope diff`."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any, Literal

from ..core.text_tables import (
    DEFAULT_WIDTH,
    Column,
    binary_bytes,
    mib,
    ms,
    or_dash,
    rows_table,
    short,
)

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import TrendChange, TrendView


def _start(us: float | None) -> str:
    if us is None:
        return "-"
    moment = datetime.datetime.fromtimestamp(us / 1e6, tz=datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _peak(peaks: dict[str, float]) -> str:
    return mib(max(peaks.values())) if peaks else "-"


RUN_COLUMNS: list[Column] = [
    ("#", "index", str),
    ("run", "run", short),
    ("workload", "workload", or_dash(str)),
    ("start (UTC)", "start_us", _start),
    ("steps", "step_count", str),
    ("step median ms", "step_median_us", or_dash(ms)),
    ("step mean ms", "step_mean_us", or_dash(ms)),
    ("peak MiB", "memory_peak_bytes", _peak),
]


def _value(change: TrendChange, key: Literal["baseline", "value"]) -> str:
    value = change[key]
    return binary_bytes(value) if change["unit"] == "bytes" else ms(value)


def _pct(change: TrendChange) -> str:
    pct = change["change_pct"]
    text = "new" if pct is None else f"{pct:+.1f}"
    return text if change["confirmed"] else f"{text} ?"


def _change_rows(changes: list[TrendChange]) -> list[dict[str, Any]]:
    return [
        {
            **c,
            "short_name": short(c["name"], 90),
            "before": _value(c, "baseline"),
            "after": _value(c, "value"),
            "unit_text": "" if c["unit"] == "bytes" else "ms/step",
            "diff": f"{c['diff_base_run'] or '-'} → {c['diff_target_run']}",
            "pct_text": _pct(c),
        }
        for c in changes
    ]


CHANGE_COLUMNS: list[Column] = [
    ("first run", "first_run", short),
    ("metric", "metric", str),
    ("change %", "pct_text", str),
    ("before", "before", str),
    ("after", "after", str),
    ("unit", "unit_text", str),
    ("diff", "diff", str),
    ("name", "short_name", str),
]


def render_trend(view: TrendView, width: int = DEFAULT_WIDTH) -> str:
    rule = view["rule"]
    if rule["mode"] == "baseline":
        how = f"each run against run {rule['baseline_run']!r}"
    else:
        how = f"each run against the median of the {rule['window']} runs before it"
    out = [
        f"== trend of {len(view['runs'])} runs ({how} of the same workload; threshold "
        f"max({rule['floor_pct']:g} %, {rule['spread_k']:g} × MAD, "
        f"{rule['envelope_k']:g} × the largest excursion); '?': at the last run, unconfirmed",
        "",
        rows_table(RUN_COLUMNS, view["runs"], width),
    ]
    if len(view["workloads"]) > 1:
        out += ["", "== Workloads (runs are compared within their workload only)", ""]
        out += [f"{w['index']}: {short(w['label'], width - 4)}" for w in view["workloads"]]
    out += [f"note: {note}" for note in view["notes"]]
    for title, changes in (
        ("Regressions", view["regressions"]),
        ("Improvements", view["improvements"]),
    ):
        out += ["", f"== {title} ({len(changes)})", ""]
        out.append(rows_table(CHANGE_COLUMNS, _change_rows(changes), width) if changes else "none")
    return "\n".join(out)
