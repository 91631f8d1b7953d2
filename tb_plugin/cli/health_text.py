"""The `health` view as text: `kinetoscope check`'s lines, and `kinetoscope report
--format text`'s "Trace health" block (listed in `report_text.RENDERERS`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast

from .text_tables import DEFAULT_WIDTH

if TYPE_CHECKING:  # types only: naming them imports no view
    from ..api.view_types import HealthExample, HealthView, RankOffset, RunHealthCheck


class RunHealth(TypedDict):
    """`kinetoscope check`'s run-level entry: the `distributed` view's checks of a run."""

    status: str
    checks: list[RunHealthCheck]


def health_lines(found: HealthView | RunHealth) -> list[str]:
    """A line per check that counts any (with its first example) or cannot run; the
    loader's warnings."""
    lines = []
    for check in found["checks"]:
        if check["count"] is None:
            lines.append(f"  {check['id']:26} unknown: {check['unknown']}")
        elif check["count"]:
            effect = "left out of time sums" if check["effect"] == "left_out" else "kept"
            lines.append(f"  {check['severity']:7} {check['id']:26} {check['count']:>8}  {effect}")
            if check["examples"]:
                lines.append(f"          e.g. {_example(check['examples'][0])}")
    warnings: list[str] = found.get("warnings", [])  # type: ignore[assignment]  # a run's: none
    for warning in warnings:
        lines.append(f"  load warning: {warning}")
    return lines


def _example(first: HealthExample | RankOffset) -> str:
    if "rank" in first:  # a run-level check names a rank (`rank_clock_skew`)
        rank = cast("RankOffset", first)
        return f"rank {rank['rank']}: {rank['offset_us']:+.3f} µs ({rank['calls']} calls)"
    first = cast("HealthExample", first)
    where = f"row {first['row']}, {first['ts_us']:.3f} µs, lane {first['lane']}"
    return f"{first['name'][:60]} ({where})"


def render_health(view: HealthView, width: int = DEFAULT_WIDTH) -> str:
    head = f"Trace health: {view['status']}"
    if view["left_out_rows"]:
        head += f" ({view['left_out_rows']} events left out of time sums)"
    return "\n".join([head, *(line[:width] for line in health_lines(view))])
