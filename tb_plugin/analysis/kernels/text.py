"""The Kernels view's CLI text (`kinetoscope report --format text`): the kernels with the
most time, matrix-core use, the CUPTI fields recorded (occupancy limits, queue waits,
graph annotations), the graph replays and the roofline. The endpoint names it (`text`),
the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.roofline.text import roofline_lines
from ..core.text_tables import DEFAULT_WIDTH, Column, ms, number, or_dash, rows_table, short, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import KernelsView

_KERNEL_COLUMNS: list[Column] = [
    ("kernel", "name", lambda name: short(name, 60)),
    ("dev", "device", or_dash(str)),
    ("calls", "calls", str),
    ("total ms", "total_us", ms),
    ("mean us", "mean_us", lambda us: number(us, 1)),
    ("blocks/SM", "blocks_per_sm", or_dash("{:.2f}".format)),
    ("occ %", "occupancy_pct", or_dash("{:.1f}".format)),
    ("TC", "tensor_cores_used", {True: "yes", False: "no", None: "unknown"}.__getitem__),
]


def render_kernels(view: KernelsView, width: int = DEFAULT_WIDTH, top: int = 15) -> str:
    rows = view["rows"][:top]
    out = [f"Kernels (top {len(rows)} of {len(view['rows'])} by total time)"]
    out.append(rows_table(_KERNEL_COLUMNS, rows, width))
    pct = view["tensor_core_pct"]
    out.append(
        f"{view['matrix_core_name']}: {ms(view['tensor_core_time_us'])} ms"
        f" of {ms(view['total_us'] - view['tensor_core_unknown_time_us'])} ms known"
        + ("" if pct is None else f" ({pct:.1f} %)")
        + f"; unknown {ms(view['tensor_core_unknown_time_us'])} ms"
    )
    out += _cupti_notes(view, rows, width)
    replay = view.get("graph_replay")
    if replay:
        out.append(replay["note"])
        # With no capture at all the note says it once; else each unmatched graph's reason.
        for u in replay["unmatched"] if replay["captures"] else []:
            graph = (
                f"{short(u['first_kernel'], 40)} ({u['kernels']} kernels, {u['replays']} replays"
            )
            line = f"{graph}, {ms(u['device_us'])} ms): {u['reason']}"
            out.append(wrap(line, width, "  unmatched: "))
    return "\n".join(out + roofline_lines(view, width, top))


def _cupti_notes(view: KernelsView, rows: list[Any], width: int) -> list[str]:
    """The rows' occupancy limits and queue waits, where the trace records them."""
    out = []
    limits = [(r["name"], r["occupancy_limited_by"]) for r in rows if r["occupancy_limited_by"]]
    if limits:
        text = "; ".join(f"{short(name, 40)} {limit}" for name, limit in limits)
        out.append(wrap(text, width, "occupancy limited by: "))
    waits = [(r["name"], r["queue_mean_us"]) for r in rows if r["queue_mean_us"] is not None]
    if waits:
        text = "; ".join(f"{short(name, 40)} {number(us, 1)} us" for name, us in waits)
        out.append(wrap(text, width, "queued -> start (mean): "))
    elif view["queued_times"] == "other clock":
        out.append("queued times recorded on a clock the trace does not convert: not used")
    named = [(r["name"], r["graph_annotations"]) for r in rows if r["graph_annotations"]]
    if named:
        text = "; ".join(f"{short(name, 40)} {' | '.join(labels)}" for name, labels in named)
        out.append(wrap(text, width, "graph annotations: "))
    note = view["graph_annotations"]
    if note and note["unread"]:
        out.append(wrap(note["unread"], width, "graph annotations not read: "))
    return out
