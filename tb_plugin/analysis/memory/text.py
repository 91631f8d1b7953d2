"""`kinetoscope report --format text`: the `memory` view (each device's peaks, the
allocations paired, the top operators by self size increase). The endpoint names it
(`text`), the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, Column
from ..core.text_tables import mib as _mib
from ..core.text_tables import ms as _ms
from ..core.text_tables import rows_table as _rows_table
from ..core.text_tables import table as _table
from ..core.text_tables import wrap as _wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .view import MemoryView


_MEMORY_OPERATOR_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("operator", "name", str),
    ("calls", "calls", str),
    ("self incr MiB", "self_increase_bytes", _mib),
    ("incr MiB", "increase_bytes", _mib),
    ("allocs", "allocation_count", str),
    ("alloc MiB", "allocation_bytes", _mib),
]


def render_memory(view: MemoryView, width: int = DEFAULT_WIDTH) -> str:
    header = ["device", "peak alloc MiB", "at ms", "peak reserved MiB", "device MiB", "op"]
    rows = []
    for d in view["devices"]:
        op = d["peak_op"]
        at = d["peak_allocated_us"]
        rows.append(
            [
                d["label"] + (" *" if d["allocated_source"] == "computed" else ""),
                _mib(d["peak_allocated_bytes"]),
                "-" if at is None else _ms(at - view["trace_start_us"]),
                _mib(d["peak_reserved_bytes"]),
                _mib(d["total_memory_bytes"]),
                op["name"] if op else "-",
            ]
        )
    out = ["Memory (peaks; at: ms since the trace start)", _table(header, rows, width)]
    out.append(
        f"allocations: {view['allocations']} paired, {view['never_freed']} never freed,"
        f" {view['freed_unseen']} freed but allocated before the recording"
    )
    for note in view["notes"]:
        out.append(_wrap(note, width, "  note: "))
    stats = sorted(view["operator_stats"], key=lambda r: -r["self_increase_bytes"])[:10]
    # the label the Overview and the table above use ("GPU 2"), not the id ("GPU0")
    labels = {d["device"]: d["label"] for d in view["devices"]}
    stats = [{**r, "device": labels.get(r["device"], r["device"])} for r in stats]
    if stats:
        out.append("")
        out.append("Top operators by self size increase")
        out.append(_rows_table(_MEMORY_OPERATOR_COLUMNS, stats, width))
    return "\n".join(out)
