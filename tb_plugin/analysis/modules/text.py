"""The Modules view's CLI text (`kinetoscope report --format text`): the module tree's
first levels, indented, as the page shows them collapsed. The endpoint names it (`text`),
the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, Column, ms, rows_table, short, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .view import ModulesView

_MODULE_COLUMNS: list[Column] = [
    ("module", "label", str),
    ("calls", "calls", str),
    ("host self ms", "host_self_us", ms),
    ("host total ms", "host_total_us", ms),
    ("dev self ms", "device_self_us", ms),
    ("dev total ms", "device_total_us", ms),
]


def render_modules(
    view: ModulesView, width: int = DEFAULT_WIDTH, depth: int = 2, top: int = 15
) -> str:
    """The module tree's first levels, indented, as the page shows them collapsed."""
    if not view["available"]:
        return "Modules\n" + wrap(view["reason"] or "", width)
    shown = [r for r in view["modules"] if r["depth"] <= depth][:top]
    rows = [{**r, "label": "  " * r["depth"] + short(r["name"], 50)} for r in shown]
    out = [f"Modules ({len(rows)} of {view['module_count']}, to depth {depth})"]
    out.append(rows_table(_MODULE_COLUMNS, rows, width))
    return "\n".join(out)
