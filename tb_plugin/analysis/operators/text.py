"""The Operators view's CLI text (`kinetoscope report --format text`): the operators with
the most device (else host) time and the roofline of those with known work. The endpoint
names it (`text`), the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.roofline.text import roofline_lines
from ..core.text_tables import DEFAULT_WIDTH, Column, ms, rows_table, short, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import OperatorsView

_OPERATOR_COLUMNS: list[Column] = [
    ("operator", "name", short),
    ("calls", "calls", str),
    ("dev self ms", "device_self_us", ms),
    ("dev total ms", "device_total_us", ms),
    ("host self ms", "host_self_us", ms),
    ("host total ms", "host_total_us", ms),
]


def render_operators(view: OperatorsView, width: int = DEFAULT_WIDTH, top: int = 15) -> str:
    rows, columns, order = view["rows"], _OPERATOR_COLUMNS, "device self time"
    if rows and not any(r["device_self_us"] or r["device_total_us"] for r in rows):
        # a CPU-only trace: device times are all 0, so rank by host time and drop them
        rows = sorted(rows, key=lambda r: -r["host_self_us"])
        columns = [c for c in columns if not c[1].startswith("device_")]
        order = "host self time; every device time is 0"
    out = [f"Operators (top {min(top, len(rows))} of {len(rows)} by {order})"]
    out.append(rows_table(columns, rows[:top], width))
    if absent := view.get("kernel_view_absent_reason"):
        out.append(wrap(absent, width, "  no kernel view: "))
    replayed = [r["name"] for r in rows[:top] if r.get("replayed_us")]
    if replayed:
        out.append(wrap(REPLAYED_NOTE + ": " + ", ".join(replayed), width, "  replayed: "))
    return "\n".join(out + roofline_lines(view, width, top))


REPLAYED_NOTE = (
    "device time of kernels replayed from a CUDA/HIP graph captured by the op; "
    "no host calls in this span for a row of 0 calls"
)
