"""The Overview's CLI text (`kinetoscope report --format text`): the step time breakdown,
the devices' summary and the recommendations. The endpoint names it (`text`), the CLI
finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, PART_LABELS, UNKNOWN, ms, table, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from ..core.gpu import DeviceView
    from ..core.overview_types import OverviewView


# Parts of a step only a GPU spends time in; a trace with no GPU activity leaves them out.
GPU_PARTS = ("kernel", "memcpy", "memset", "communication", "runtime")


def shown_parts(view: OverviewView) -> list[str]:
    """The step parts worth a column: all of them, except on a trace with no GPU activity,
    where the GPU parts that are zero in every step are left out (as in the page)."""
    if view["devices"]:
        return list(PART_LABELS)
    steps = view["steps"]
    return [
        p for p in PART_LABELS if p not in GPU_PARTS or any(s["breakdown_us"][p] for s in steps)
    ]


def render_overview(view: OverviewView, width: int = DEFAULT_WIDTH) -> str:
    parts = shown_parts(view)
    header = ["step", "total ms"] + [PART_LABELS[p] for p in parts]
    rows = [
        [s["name"], ms(s["duration_us"])] + [ms(s["breakdown_us"][p]) for p in parts]
        for s in view["steps"]
    ]
    avg = view["average_breakdown_us"]
    rows.append(["average", ms(view["average_step_us"])] + [ms(avg[p]) for p in parts])
    known = [v for v in avg.values() if v is not None]  # null: unknown (a `ts` of "NaN")
    total = sum(known) or 1.0
    shares = [UNKNOWN if avg[p] is None else f"{100 * avg[p] / total:.1f}" for p in parts]
    rows.append(["share %", "100.0" if len(known) == len(avg) else UNKNOWN, *shares])
    out = ["Step time breakdown (ms)", table(header, rows, width)]
    if len(parts) < len(PART_LABELS):
        hidden = ", ".join(PART_LABELS[p] for p in PART_LABELS if p not in parts)
        out.append(wrap(f"{hidden}: 0 in every step (no GPU activity), not shown", width))
    for d in view.get("dropped_steps", []):
        out.append(wrap(f"{d['name']}: {d['reason']}", width, "  left out: "))
    if view["devices"]:
        out.append("")
        out.append(f"{view['device_word']} summary")
        for dev in view["devices"]:
            out.append(wrap(_device_line(dev), width))
    else:
        out.append("\nNo GPU activity in this trace.")
    if view["recommendations"]:
        out.append("")
        out.append("Recommendations")
        for rec in view["recommendations"]:
            out.append(wrap(f"{rec['title']}. {rec['message']}", width, "  - "))
    return "\n".join(out)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} %"


def _device_line(dev: DeviceView) -> str:
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
