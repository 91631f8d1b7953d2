"""Plain-text rendering of views for `kinetoscope report --format text`.

Lines fit the terminal: `$COLUMNS` wide, 100 when unset (a pipe or a file), so tables
shrink their text columns and long sentences wrap. Times are relative to the trace start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..api.endpoints import ENDPOINTS
from ..api.lower import DEFAULT_WIDTH, UNKNOWN, Column, TraceModel, number, report_width
from ..api.lower import mib as _mib
from ..api.lower import ms as _ms
from ..api.lower import or_dash as _or_dash
from ..api.lower import rows_table as _rows_table
from ..api.lower import short as _short
from ..api.lower import table as _table
from ..api.lower import wrap as _wrap
from .health_text import render_health
from .report_snapshot import render_memory_snapshot

if TYPE_CHECKING:  # types only: naming them imports no view
    from ..api import view_types as vt

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


# Parts of a step only a GPU spends time in; a trace with no GPU activity leaves them out.
GPU_PARTS = ("kernel", "memcpy", "memset", "communication", "runtime")


def shown_parts(view: vt.OverviewView) -> list[str]:
    """The step parts worth a column: all of them, except on a trace with no GPU activity,
    where the GPU parts that are zero in every step are left out (as in the page)."""
    if view["devices"]:
        return list(PART_LABELS)
    steps = view["steps"]
    return [
        p for p in PART_LABELS if p not in GPU_PARTS or any(s["breakdown_us"][p] for s in steps)
    ]


def render_overview(view: vt.OverviewView, width: int = DEFAULT_WIDTH) -> str:
    parts = shown_parts(view)
    header = ["step", "total ms"] + [PART_LABELS[p] for p in parts]
    rows = [
        [s["name"], _ms(s["duration_us"])] + [_ms(s["breakdown_us"][p]) for p in parts]
        for s in view["steps"]
    ]
    avg = view["average_breakdown_us"]
    rows.append(["average", _ms(view["average_step_us"])] + [_ms(avg[p]) for p in parts])
    known = [v for v in avg.values() if v is not None]  # null: unknown (a `ts` of "NaN")
    total = sum(known) or 1.0
    shares = [UNKNOWN if avg[p] is None else f"{100 * avg[p] / total:.1f}" for p in parts]
    rows.append(["share %", "100.0" if len(known) == len(avg) else UNKNOWN, *shares])
    out = ["Step time breakdown (ms)", _table(header, rows, width)]
    if len(parts) < len(PART_LABELS):
        hidden = ", ".join(PART_LABELS[p] for p in PART_LABELS if p not in parts)
        out.append(_wrap(f"{hidden}: 0 in every step (no GPU activity), not shown", width))
    for d in view.get("dropped_steps", []):
        out.append(_wrap(f"{d['name']}: {d['reason']}", width, "  left out: "))
    if view["devices"]:
        out.append("")
        out.append(f"{view['device_word']} summary")
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


def _device_line(dev: vt.GpuDeviceView) -> str:
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


# A route's renderer takes its response type (`render_text` hands it the decoded JSON).
RENDERERS: dict[str, Callable[[Any, int], str]] = {"overview": render_overview}


def renderer_of(name: str) -> Callable[[Any, int], str] | None:
    """The text of view `name`: the one its folder gives (the endpoint's `text`), else the
    CLI's own (`RENDERERS`), else none."""
    endpoint = ENDPOINTS.get(name)
    own = endpoint.text if endpoint is not None else None
    return own if own is not None else RENDERERS.get(name)


def render_text(
    run: str,
    worker: str,
    span: str,
    model: TraceModel,
    views: dict[str, Any],
    width: int | None = None,
) -> str:
    """Every view that has a renderer, `width` columns wide (default: report_width());
    `views`: each route's decoded JSON, which its renderer takes as the route's type."""

    width = width or report_width()
    head = f"== run {run} / worker {worker} / span {span} ({len(model)} events)"
    if model.warnings:  # what the load kept out or read leniently (an empty event...)
        said = "   partial trace: " if model.partial else "   read with warnings: "
        head += "\n" + _wrap("; ".join(model.warnings), width, said)
    blocks = [head]
    for name, view in views.items():
        render = renderer_of(name)
        if isinstance(view, dict) and set(view) == {"error"}:  # the route's 413, in its place
            blocks.append(_wrap(view["error"]["message"], width, f"{name}: "))
        elif render is not None:
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
    ("unmatched ms", "unmatched_us", _ms),
    ("algbw GB/s", "algbw_gbps", _or_dash("{:.2f}".format)),
    ("busbw GB/s", "busbw_gbps", _or_dash("{:.2f}".format)),
]


def render_distributed(view: vt.DistributedResponse, width: int = DEFAULT_WIDTH) -> str:
    """Run-level view: one row per rank, the collectives, the stragglers."""
    facts = [f"{view['ranks_found']} ranks"]
    if view["world_size"] is not None:
        facts.append(f"world size {view['world_size']}")
    if view["backend"]:
        facts.append(f"backend {view['backend']}")
    facts.append(f"{view['mode']} ranks")
    out = ["Distributed (" + ", ".join(facts) + "), total over steps (ms)"]
    header = ["rank", "worker", "steps", "step", "computation", "overlap", "communication"]
    header += ["other", "sync wait", "transfer", "unmatched"]
    rows = [
        [str(r["rank"]), r["worker"], str(r["step_count"]), _ms(r["step_time_us"])]
        + [_ms(r[k]) for k in ("computation_us", "overlap_us", "communication_us", "other_us")]
        + [_ms(r["sync_wait_us"]), _ms(r["transfer_us"]), _ms(r["unmatched_us"])]
        for r in view["ranks"]
    ]
    out.append(_table(header, rows, width))
    if view["collectives"]:
        out.append("")
        out.append("Collectives (all ranks)")
        out.append(_rows_table(_COLLECTIVE_COLUMNS, view["collectives"], width))
    late = [(s["name"], s["straggler"]) for s in view["steps"] if s["straggler"] is not None]
    if late:
        out.append("")
        out.append("Stragglers (last rank to arrive, per step)")
        for step, st in late:
            cause = st["cause"].replace("_", " ")
            if st["cause"] != "unknown":
                cause += f" (+{_ms(st['cause_excess_us'])} ms over the other ranks' median)"
            line = f"{step}: rank {st['rank']} late by {_ms(st['late_by_us'])} ms; {cause}"
            out.append(_wrap(line, width))
    out += [_wrap(line, width) for line in _group_lines(view)]
    for note in view["warnings"]:
        out.append(_wrap(note, width, "  note: "))
    for err in view["errors"]:
        out.append(_wrap(err["message"], width, "  error: "))
    return "\n".join(out)


def _group_lines(view: vt.DistributedResponse) -> list[str]:
    """The communication groups whose verdict is not ok (none: no lines)."""
    flagged = [g for g in view.get("groups", []) if g["verdict"] != "ok"]
    if not flagged:
        return []
    out = [
        "",
        f"Communication groups ({len(view['groups'])}): slow ranks {view['slow_ranks']}, "
        f"slow links in groups {view['slow_groups']}",
    ]
    for g in flagged:
        what = (
            f"transfer {g['transfer_ratio']}x its peers'"
            if g["verdict"] == "slow_link"
            else f"waits for rank {g['waits_for']} ({_ms(g['waits_for_us'])} ms)"
        )
        out.append(
            f"group {g['name'] or '(unnamed)'} ({g['role'] or 'role unknown'}, "
            f"{len(g['ranks'])} ranks): {what}"
        )
    return out


RENDERERS["distributed"] = render_distributed


_OPERATOR_COLUMNS: list[Column] = [
    ("operator", "name", _short),
    ("calls", "calls", str),
    ("dev self ms", "device_self_us", _ms),
    ("dev total ms", "device_total_us", _ms),
    ("host self ms", "host_self_us", _ms),
    ("host total ms", "host_total_us", _ms),
]


def render_operators(view: vt.OperatorsView, width: int = DEFAULT_WIDTH, top: int = 15) -> str:
    rows, columns, order = view["rows"], _OPERATOR_COLUMNS, "device self time"
    if rows and not any(r["device_self_us"] or r["device_total_us"] for r in rows):
        # a CPU-only trace: device times are all 0, so rank by host time and drop them
        rows = sorted(rows, key=lambda r: -r["host_self_us"])
        columns = [c for c in columns if not c[1].startswith("device_")]
        order = "host self time; every device time is 0"
    out = [f"Operators (top {min(top, len(rows))} of {len(rows)} by {order})"]
    out.append(_rows_table(columns, rows[:top], width))
    if absent := view.get("kernel_view_absent_reason"):
        out.append(_wrap(absent, width, "  no kernel view: "))
    replayed = [r["name"] for r in rows[:top] if r.get("replayed_us")]
    if replayed:
        out.append(_wrap(REPLAYED_NOTE + ": " + ", ".join(replayed), width, "  replayed: "))
    return "\n".join(out + _roofline(view, width, top))


REPLAYED_NOTE = (
    "device time of kernels replayed from a CUDA/HIP graph captured by the op; "
    "no host calls in this span for a row of 0 calls"
)


_ROOF_COLUMNS: list[Column] = [
    ("name", "name", lambda name: _short(name, 50)),
    ("TFLOP/s", "tflops", _or_dash("{:.4g}".format)),
    ("GB/s", "gbps", _or_dash("{:.4g}".format)),
    ("FLOP/B", "intensity", _or_dash("{:.4g}".format)),
    ("% peak", "pct_of_peak", _or_dash("{:.1f}".format)),
    ("bound", "bound", _or_dash(str)),
]


def _roofline(view: vt.OperatorsView | vt.KernelsView, width: int, top: int) -> list[str]:
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
    out.append(_rows_table(_ROOF_COLUMNS, rows[:top], width))
    out.append(_wrap(roofs or "device peaks not known: no % of peak", width, "  roofs: "))
    return out


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


def render_kernels(view: vt.KernelsView, width: int = DEFAULT_WIDTH, top: int = 15) -> str:
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
    out += _cupti_notes(view, rows, width)
    replay = view.get("graph_replay")
    if replay:
        out.append(replay["note"])
        # With no capture at all the note says it once; else each unmatched graph's reason.
        for u in replay["unmatched"] if replay["captures"] else []:
            graph = (
                f"{_short(u['first_kernel'], 40)} ({u['kernels']} kernels, {u['replays']} replays"
            )
            line = f"{graph}, {_ms(u['device_us'])} ms): {u['reason']}"
            out.append(_wrap(line, width, "  unmatched: "))
    return "\n".join(out + _roofline(view, width, top))


def _cupti_notes(view: vt.KernelsView, rows: list[Any], width: int) -> list[str]:
    """The rows' occupancy limits and queue waits, where the trace records them."""
    out = []
    limits = [(r["name"], r["occupancy_limited_by"]) for r in rows if r["occupancy_limited_by"]]
    if limits:
        text = "; ".join(f"{_short(name, 40)} {limit}" for name, limit in limits)
        out.append(_wrap(text, width, "occupancy limited by: "))
    waits = [(r["name"], r["queue_mean_us"]) for r in rows if r["queue_mean_us"] is not None]
    if waits:
        text = "; ".join(f"{_short(name, 40)} {number(us, 1)} us" for name, us in waits)
        out.append(_wrap(text, width, "queued -> start (mean): "))
    elif view["queued_times"] == "other clock":
        out.append("queued times recorded on a clock the trace does not convert: not used")
    named = [(r["name"], r["graph_annotations"]) for r in rows if r["graph_annotations"]]
    if named:
        text = "; ".join(f"{_short(name, 40)} {' | '.join(labels)}" for name, labels in named)
        out.append(_wrap(text, width, "graph annotations: "))
    note = view["graph_annotations"]
    if note and note["unread"]:
        out.append(_wrap(note["unread"], width, "graph annotations not read: "))
    return out


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
    view: vt.ModulesView, width: int = DEFAULT_WIDTH, depth: int = 2, top: int = 15
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
RENDERERS["memory_snapshot"] = render_memory_snapshot
RENDERERS["health"] = render_health
