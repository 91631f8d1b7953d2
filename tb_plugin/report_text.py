"""Plain-text rendering of views for `kinetoscope report --format text`."""

from __future__ import annotations

from typing import Any

from .model import TraceModel

PART_LABELS = {
    "kernel": "Kernel",
    "memcpy": "Memcpy",
    "memset": "Memset",
    "communication": "Communication",
    "runtime": "Runtime",
    "dataloader": "DataLoader",
    "cpu_exec": "CPU Exec",
    "other": "Other",
}


def _ms(us: float) -> str:
    return f"{us / 1000:.3f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    lines = [
        "  ".join(h.rjust(w) for h, w in zip(header, widths)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def render_overview(view: dict[str, Any]) -> str:
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
    out = ["Step time breakdown (ms)", _table(header, rows)]
    for d in view.get("dropped_steps", []):
        out.append(f"  left out: {d['name']}: {d['reason']}")
    if view["devices"]:
        out.append("")
        out.append("GPU summary")
        for dev in view["devices"]:
            out.append("  " + _device_line(dev))
    else:
        out.append("\nNo GPU activity in this trace.")
    if view["recommendations"]:
        out.append("")
        out.append("Recommendations")
        for rec in view["recommendations"]:
            out.append(f"  - {rec['title']}. {rec['message']}")
    return "\n".join(out)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} %"


def _device_line(dev: dict[str, Any]) -> str:
    facts = [f"GPU {dev['id']}: {dev['name'] or 'unknown'}"]
    if dev["memory_bytes"]:
        facts.append(f"{dev['memory_bytes'] / 2**30:.1f} GiB")
    if dev["compute_capability"]:
        facts.append(f"compute {dev['compute_capability']}")
    facts.append(f"utilization {_pct(dev['utilization_pct'])}")
    facts.append(f"SM efficiency {_pct(dev['sm_efficiency_pct'])}")
    facts.append(f"occupancy {_pct(dev['achieved_occupancy_pct'])}")
    facts.append(f"tensor cores {_pct(dev['tensor_core_pct'])}")
    return ", ".join(facts)


RENDERERS = {"overview": render_overview}


def render_text(run: str, worker: str, span: str, model: TraceModel, views: dict[str, Any]) -> str:
    head = f"== run {run} / worker {worker} / span {span} ({len(model)} events)"
    if model.partial:
        head += "\n   partial trace: " + "; ".join(model.warnings)
    blocks = [head]
    for name, view in views.items():
        render = RENDERERS.get(name)
        if render is not None:
            blocks.append(render(view))
    return "\n\n".join(blocks) + "\n"
