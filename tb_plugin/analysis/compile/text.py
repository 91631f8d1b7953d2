"""The compile view's CLI text (`kinetoscope report --format text`): the run's TORCH_TRACE
logs, each compile with its time by stage and cache, the steps that compiled, recompiles,
graph breaks, failures, advice; the endpoint names it (`text`), the CLI finds it there."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..core.text_tables import DEFAULT_WIDTH, Column, or_dash, rows_table, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import CompileResponse


def _s(us: float | None) -> str:
    return "-" if us is None else f"{us / 1e6:.2f}"


_COMPILE_COLUMNS: list[Column] = [
    ("rank", "rank", or_dash(str)),
    ("compile", "compile_id", str),
    ("frame", "where", str),
    ("step", "step", or_dash(str)),
    ("s", "dur_us", _s),
    ("dynamo s", "dynamo_us", _s),
    ("aot s", "aot_autograd_us", _s),
    ("inductor s", "inductor_us", _s),
    ("codegen s", "code_gen_us", _s),
    ("bwd s", "backward_us", _s),
    ("cache", "cache", str),
    ("status", "status", str),
]


def _where(frame: str | None, file: str | None, line: int | None) -> str:
    at = f"{os.path.basename(file)}:{line}" if file and line is not None else "?"
    return f"{frame or '?'} ({at})"


def _compile_rows(view: CompileResponse) -> list[dict[str, Any]]:
    rows = []
    for c in view["compiles"]:
        backward = c["backward"]
        rows.append(
            {
                **c,
                **c["stages"],
                "where": _where(c["frame"], c["file"], c["line"]),
                "backward_us": backward["dur_us"] if backward else None,
                "cache": c["cache"]["state"] or "-",
            }
        )
    return rows


def _log_lines(view: CompileResponse, width: int) -> list[str]:
    out = []
    for log in view["logs"]:
        if log["error"]:
            out.append(wrap(f"{log['error']} [{log['error_kind']}]", width, "   error: "))
        elif log["warnings"]:
            out.append(wrap(f"{log['file']}: " + "; ".join(log["warnings"]), width, "   note: "))
    for a in view["alignments"]:
        out.append(wrap(f"{a['log']}: {a['note']}", width, "   "))
    return out


def render_compile(view: CompileResponse, width: int = DEFAULT_WIDTH) -> str:
    total = view["total_compile_us"] / 1e6
    parts = [f"Compile ({len(view['compiles'])} compiles, {total:.1f} s, TORCH_TRACE logs)"]
    parts += _log_lines(view, width)
    if view["compiles"]:
        parts.append(rows_table(_COMPILE_COLUMNS, _compile_rows(view), width))
    parts += [wrap(s["text"], width, "   ") for s in view["steps"]]
    for r in view["recompiles"]:
        reason = r["reasons"][0] if r["reasons"] else "the log does not say why"
        parts.append(wrap(f"recompile {r['compile_id']}: {reason}", width, "   "))
    for b in view["graph_breaks"]:
        where = _where(b["frame"], b["file"], b["line"])
        parts.append(wrap(f"graph break in {where}: {b['reason']}", width, "   "))
    for f in view["failures"]:
        parts.append(
            wrap(f"failed {f['compile_id']}: {f['fail_type']}: {f['reason']}", width, "   ")
        )
    parts += [wrap(a["text"], width, "   advice: ") for a in view["advice"]]
    return "\n".join(parts)
