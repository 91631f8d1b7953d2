"""The roofline's lines in the CLI text of the Operators and Kernels views: the rows with
known work and the roofs of the trace's GPUs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..text_tables import Column, or_dash, rows_table, short, wrap

_ROOF_COLUMNS: list[Column] = [
    ("name", "name", lambda name: short(name, 50)),
    ("TFLOP/s", "tflops", or_dash("{:.4g}".format)),
    ("GB/s", "gbps", or_dash("{:.4g}".format)),
    ("FLOP/B", "intensity", or_dash("{:.4g}".format)),
    ("% peak", "pct_of_peak", or_dash("{:.1f}".format)),
    ("bound", "bound", or_dash(str)),
]


def roofline_lines(view: Mapping[str, Any], width: int, top: int) -> list[str]:
    """The rows with known work (docs/metrics.md#roofline), in the view's order; the
    roofs of the trace's known GPUs ("-": not known)."""
    rows = [r for r in view["rows"] if r["tflops"] is not None or r["gbps"] is not None]
    if not rows:
        return []
    roofs = "; ".join(
        f"GPU {r['device_id']} {r['device']}: {r['memory_gbps']:g} GB/s, "
        + ", ".join(f"{k} {v:g}" for k, v in r["tflops"].items() if v)
        + " TFLOP/s"
        for r in view["roofs"]
    )
    out = [f"Roofline (top {min(top, len(rows))} of {len(rows)} rows with known work)"]
    out.append(rows_table(_ROOF_COLUMNS, rows[:top], width))
    out.append(wrap(roofs or "device peaks not known: no % of peak", width, "  roofs: "))
    return out
