"""Plain-text rendering of views for `kinetoscope report --format text`.

Lines fit the terminal: `$COLUMNS` wide, 100 when unset (a pipe or a file), so tables
shrink their text columns and long sentences wrap. Times are relative to the trace start.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from ..model.trace_model import TraceModel

DEFAULT_WIDTH = 100
MIN_WIDTH = 40
MIN_TEXT_COLUMN = 12

PART_LABELS = {
    "kernel": "Kernel",
    "memcpy": "Memcpy",
    "memset": "Memset",
    "communication": "Comms",  # short: the step table must fit 100 columns
    "runtime": "Runtime",
    "dataloader": "DataLoader",
    "cpu_exec": "CPU Exec",
    "other": "Other",
}


def _ms(us: float) -> str:
    return number(us / 1000, 3)


def number(value: float, decimals: int) -> str:
    """`value` with `decimals` decimals; an absurd one (a damaged `dur: 1e300`) in
    exponent form, so a table cell stays a number a person can read."""
    return f"{value:.{decimals}f}" if abs(value) < 1e12 else f"{value:.3e}"


def report_width() -> int:
    """The terminal's width from `$COLUMNS`, else DEFAULT_WIDTH."""
    try:
        return max(MIN_WIDTH, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return DEFAULT_WIDTH


def _is_number(cell: str) -> bool:
    try:
        float(cell.replace(" *", ""))
    except ValueError:
        return cell == "-"
    return True


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 3, 1)] + "..."


def _column_widths(
    header: list[str], rows: list[list[str]], text: list[bool], width: int
) -> list[int]:
    """Natural widths, then the widest text column narrowed until the line fits."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    while excess > 0:
        shrinkable = [i for i, t in enumerate(text) if t and widths[i] > MIN_TEXT_COLUMN]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        cut = min(excess, widths[widest] - MIN_TEXT_COLUMN)
        widths[widest] -= cut
        excess -= cut
    return widths


def _table(header: list[str], rows: list[list[str]], width: int = DEFAULT_WIDTH) -> str:
    """Numbers right-aligned, text left-aligned and clipped so a line fits in `width`."""
    text = [any(not _is_number(r[i]) for r in rows) for i in range(len(header))]
    widths = _column_widths(header, rows, text, width)

    def line(cells: list[str]) -> str:
        out = [
            _clip(c, w).ljust(w) if t else _clip(c, w).rjust(w)
            for c, w, t in zip(cells, widths, text)
        ]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


# A column of a view's rows: its header, the row's key, and how that value prints.
Column = tuple[str, str, Callable[[Any], str]]


def _rows_table(columns: Sequence[Column], rows: list[dict[str, Any]], width: int) -> str:
    """`_table` of a view's rows, one column per (header, key, format)."""
    cells = [[fmt(row[key]) for _, key, fmt in columns] for row in rows]
    return _table([header for header, _, _ in columns], cells, width)


def _or_dash(fmt: Callable[[Any], str]) -> Callable[[Any], str]:
    """`fmt` of a value, "-" for None (not known)."""
    return lambda v: "-" if v is None else fmt(v)


def _wrap(text: str, width: int, lead: str = "  ") -> str:
    """`text` after `lead`, wrapped to `width`, continuation lines indented under it."""
    return textwrap.fill(
        text, width, initial_indent=lead, subsequent_indent=" " * len(lead), break_on_hyphens=False
    )


def render_overview(view: dict[str, Any], width: int = DEFAULT_WIDTH) -> str:
    parts = list(PART_LABELS)
    header = ["step", "total ms"] + [PART_LABELS[p] for p in parts]
    rows = [
        [s["name"], _ms(s["duration_us"])] + [_ms(s["breakdown_us"][p]) for p in parts]
        for s in view["steps"]
    ]
    avg = view["average_breakdown_us"]
    rows.append(["average", _ms(view["average_step_us"])] + [_ms(avg[p]) for p in parts])
    total = sum(avg.values()) or 1.0
    rows.append(["share %", "100.0"] + [f"{100 * avg[p] / total:.1f}" for p in parts])
    out = ["Step time breakdown (ms)", _table(header, rows, width)]
    for d in view.get("dropped_steps", []):
        out.append(_wrap(f"{d['name']}: {d['reason']}", width, "  left out: "))
    if view["devices"]:
        out.append("")
        out.append("GPU summary")
        for dev in view["devices"]:
            out.append(_wrap(_device_line(dev), width))
    else:
        out.append("\nNo GPU activity in this trace.")
    if view["recommendations"]:
        out.append("")
        out.append("Recommendations")
        for rec in view["recommendations"]:
            out.append(_wrap(f"{rec['title']}. {rec['message']}", width, "  - "))
    return "\n".join(out)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} %"


def _device_line(dev: dict[str, Any]) -> str:
    facts = [dev["label"]]
    if dev["memory_bytes"]:
        facts.append(f"{dev['memory_bytes'] / 2**30:.1f} GiB")
    if dev["compute_capability"]:
        facts.append(f"compute {dev['compute_capability']}")
    facts.append(f"utilization {_pct(dev['utilization_pct'])}")
    facts.append(f"SM efficiency {_pct(dev['sm_efficiency_pct'])}")
    facts.append(f"occupancy {_pct(dev['achieved_occupancy_pct'])}")
    unknown = dev["matrix_core_unknown_pct"]
    facts.append(
        f"{dev['matrix_core_name']} {_pct(dev['tensor_core_pct'])}"
        + (f" ({_pct(unknown)} of kernel time unknown)" if unknown else "")
    )
    return ", ".join(facts)


RENDERERS = {"overview": render_overview}


def _mib(n: float | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f}"


_MEMORY_OPERATOR_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("operator", "name", str),
    ("calls", "calls", str),
    ("self incr MiB", "self_increase_bytes", _mib),
    ("incr MiB", "increase_bytes", _mib),
    ("allocs", "allocation_count", str),
    ("alloc MiB", "allocation_bytes", _mib),
]


def render_memory(view: dict[str, Any], width: int = DEFAULT_WIDTH) -> str:
    header = ["device", "peak alloc MiB", "at ms", "peak reserved MiB", "device MiB", "op"]
    rows = []
    for d in view["devices"]:
        op = d["peak_op"]
        at = d["peak_allocated_us"]
        rows.append(
            [
                d["device"] + (" *" if d["allocated_source"] == "computed" else ""),
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
    if stats:
        out.append("")
        out.append("Top operators by self size increase")
        out.append(_rows_table(_MEMORY_OPERATOR_COLUMNS, stats, width))
    return "\n".join(out)


RENDERERS["memory"] = render_memory


def render_text(
    run: str,
    worker: str,
    span: str,
    model: TraceModel,
    views: dict[str, Any],
    width: int | None = None,
) -> str:
    """Every view that has a renderer, `width` columns wide (default: report_width())."""
    from . import report_gpu_idle  # noqa: F401 - registers its renderer (it imports this module)

    width = width or report_width()
    head = f"== run {run} / worker {worker} / span {span} ({len(model)} events)"
    if model.partial:
        head += "\n" + _wrap("; ".join(model.warnings), width, "   partial trace: ")
    blocks = [head]
    for name, view in views.items():
        render = RENDERERS.get(name)
        if render is not None:
            blocks.append(render(view, width))
    return "\n\n".join(blocks) + "\n"


_COLLECTIVE_COLUMNS: list[Column] = [
    ("collective", "name", str),
    ("calls", "calls", str),
    ("MiB", "bytes", _mib),
    ("total ms", "total_us", _ms),
    ("avg ms", "avg_us", _ms),
    ("sync wait ms", "sync_wait_us", _ms),
    ("transfer ms", "transfer_us", _ms),
    ("algbw GB/s", "algbw_gbps", _or_dash("{:.2f}".format)),
    ("busbw GB/s", "busbw_gbps", _or_dash("{:.2f}".format)),
]


def render_distributed(view: dict[str, Any], width: int = DEFAULT_WIDTH) -> str:
    """Run-level view: one row per rank, the collectives, the stragglers."""
    facts = [f"{view['ranks_found']} ranks"]
    if view["world_size"] is not None:
        facts.append(f"world size {view['world_size']}")
    if view["backend"]:
        facts.append(f"backend {view['backend']}")
    facts.append(f"{view['mode']} ranks")
    out = ["Distributed (" + ", ".join(facts) + "), total over steps (ms)"]
    header = ["rank", "worker", "steps", "step", "computation", "overlap", "communication"]
    header += ["other", "sync wait", "transfer"]
    rows = [
        [str(r["rank"]), r["worker"], str(r["step_count"]), _ms(r["step_time_us"])]
        + [_ms(r[k]) for k in ("computation_us", "overlap_us", "communication_us", "other_us")]
        + [_ms(r["sync_wait_us"]), _ms(r["transfer_us"])]
        for r in view["ranks"]
    ]
    out.append(_table(header, rows, width))
    if view["collectives"]:
        out.append("")
        out.append("Collectives (all ranks)")
        out.append(_rows_table(_COLLECTIVE_COLUMNS, view["collectives"], width))
    late = [s for s in view["steps"] if s["straggler"] is not None]
    if late:
        out.append("")
        out.append("Stragglers (last rank to arrive, per step)")
        for s in late:
            st = s["straggler"]
            cause = st["cause"].replace("_", " ")
            if st["cause"] != "unknown":
                cause += f" (+{_ms(st['cause_excess_us'])} ms over the other ranks' median)"
            line = f"{s['name']}: rank {st['rank']} late by {_ms(st['late_by_us'])} ms; {cause}"
            out.append(_wrap(line, width))
    for note in view["warnings"]:
        out.append(_wrap(note, width, "  note: "))
    for err in view["errors"]:
        out.append(_wrap(err["message"], width, "  error: "))
    return "\n".join(out)


RENDERERS["distributed"] = render_distributed


def _short(name: str, width: int = 70) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


_OPERATOR_COLUMNS: list[Column] = [
    ("operator", "name", _short),
    ("calls", "calls", str),
    ("dev self ms", "device_self_us", _ms),
    ("dev total ms", "device_total_us", _ms),
    ("host self ms", "host_self_us", _ms),
    ("host total ms", "host_total_us", _ms),
]


def render_operators(view: dict[str, Any], width: int = DEFAULT_WIDTH, top: int = 15) -> str:
    rows = view["rows"][:top]
    out = [f"Operators (top {len(rows)} of {len(view['rows'])} by device self time)"]
    out.append(_rows_table(_OPERATOR_COLUMNS, rows, width))
    if view.get("kernel_view_absent_reason"):
        out.append(_wrap(view["kernel_view_absent_reason"], width, "  no kernel view: "))
    return "\n".join(out)


_KERNEL_COLUMNS: list[Column] = [
    ("kernel", "name", lambda name: _short(name, 60)),
    ("dev", "device", _or_dash(str)),
    ("calls", "calls", str),
    ("total ms", "total_us", _ms),
    ("mean us", "mean_us", lambda us: number(us, 1)),
    ("blocks/SM", "blocks_per_sm", _or_dash("{:.2f}".format)),
    ("occ %", "occupancy_pct", _or_dash("{:.1f}".format)),
    ("TC", "tensor_cores_used", {True: "yes", False: "no", None: "unknown"}.__getitem__),
]


def render_kernels(view: dict[str, Any], width: int = DEFAULT_WIDTH, top: int = 15) -> str:
    rows = view["rows"][:top]
    out = [f"Kernels (top {len(rows)} of {len(view['rows'])} by total time)"]
    out.append(_rows_table(_KERNEL_COLUMNS, rows, width))
    pct = view["tensor_core_pct"]
    out.append(
        f"{view['matrix_core_name']}: {_ms(view['tensor_core_time_us'])} ms"
        f" of {_ms(view['total_us'] - view['tensor_core_unknown_time_us'])} ms known"
        + ("" if pct is None else f" ({pct:.1f} %)")
        + f"; unknown {_ms(view['tensor_core_unknown_time_us'])} ms"
    )
    return "\n".join(out)


RENDERERS["operators"] = render_operators
RENDERERS["kernels"] = render_kernels


_MODULE_COLUMNS: list[Column] = [
    ("module", "label", str),
    ("calls", "calls", str),
    ("host self ms", "host_self_us", _ms),
    ("host total ms", "host_total_us", _ms),
    ("dev self ms", "device_self_us", _ms),
    ("dev total ms", "device_total_us", _ms),
]


def render_modules(
    view: dict[str, Any], width: int = DEFAULT_WIDTH, depth: int = 2, top: int = 15
) -> str:
    """The module tree's first levels, indented, as the page shows them collapsed."""
    if not view["available"]:
        return "Modules\n" + _wrap(view["reason"] or "", width)
    shown = [r for r in view["modules"] if r["depth"] <= depth][:top]
    rows = [{**r, "label": "  " * r["depth"] + _short(r["name"], 50)} for r in shown]
    out = [f"Modules ({len(rows)} of {view['module_count']}, to depth {depth})"]
    out.append(_rows_table(_MODULE_COLUMNS, rows, width))
    return "\n".join(out)


RENDERERS["modules"] = render_modules
