"""Plain-text rendering of the diff view for `kinetoscope diff --format text` (the
endpoint's `text`): steps and breakdown, GPU, memory peaks, communication, serving phases,
and the largest operator and kernel changes, each number as base, target, delta and
delta % ("-": unknown)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.text_tables import DEFAULT_WIDTH, PART_LABELS, short, table, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import Compared, DiffView

TOP_ROWS = 15
Format = Callable[[float], str]


def _ms(us: float) -> str:
    return f"{us / 1000:.3f}"


def _plain(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _pct(x: float) -> str:
    return f"{x:.2f}"


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f}"


def _cells(number: Compared, fmt: Format) -> list[str]:
    """base, target, delta, delta %: "-" for unknown."""
    values = [number["base"], number["target"], number["delta"]]
    pct = number["delta_pct"]
    return [*("-" if v is None else fmt(v) for v in values), "-" if pct is None else f"{pct:.2f}"]


Row = tuple[str, "Compared", Format]  # a label, a compared number, how its values print


def _compared_table(rows: list[Row], width: int) -> str:
    header = ["", "base", "target", "delta", "delta %"]
    return table(header, [[name, *_cells(n, fmt)] for name, n, fmt in rows], width)


def _steps(view: DiffView, width: int) -> str:
    steps = view["steps"]
    rows: list[Row] = [
        ("steps", steps["step_count"], _plain),
        ("average step ms", steps["average_step_us"], _ms),
    ]
    rows += [(f"{PART_LABELS[b['part']]} ms", b["average_us"], _ms) for b in view["breakdown"]]
    rows += [(f"{PART_LABELS[b['part']]} %", b["share_pct"], _pct) for b in view["breakdown"]]
    return "Steps and breakdown (per step)\n" + _compared_table(rows, width)


def _gpu(view: DiffView, width: int) -> str:
    out = []
    for device in view["gpu"]:
        names = {n for n in (device["base_name"], device["target_name"]) if n is not None}
        rows: list[Row] = [
            ("utilization %", device["utilization_pct"], _pct),
            ("SM efficiency %", device["sm_efficiency_pct"], _pct),
            ("achieved occupancy %", device["achieved_occupancy_pct"], _pct),
            ("matrix-core %", device["tensor_core_pct"], _pct),
            ("kernel time ms", device["kernel_time_us"], _ms),
        ]
        title = f"{device['short_label']} ({' / '.join(sorted(names))})"
        out.append(title + "\n" + _compared_table(rows, width))
    return "\n\n".join(out)


def _memory(view: DiffView, width: int) -> str:
    rows: list[Row] = []
    for device in view["memory"]:
        rows.append((f"{device['device']} allocated", device["peak_allocated_bytes"], _mib))
        rows.append((f"{device['device']} reserved", device["peak_reserved_bytes"], _mib))
    return "Memory peaks (MiB)\n" + _compared_table(rows, width) if rows else ""


def _communication(view: DiffView, width: int) -> str:
    rows: list[Row] = []
    for c in view["communication"]:
        rows.append((f"{c['name']} calls", c["calls"], _plain))
        rows.append((f"{c['name']} ms", c["total_us"], _ms))
        rows.append((f"{c['name']} bus GB/s", c["busbw_gbps"], _plain))
    return "Communication\n" + _compared_table(rows, width) if rows else ""


def _serving(view: DiffView, width: int) -> str:
    rows: list[Row] = []
    for p in view.get("serving") or []:
        rows.append((f"{p['phase']} iterations", p["iterations"], _plain))
        rows.append((f"{p['phase']} median ms", p["median_us"], _ms))
        rows.append((f"{p['phase']} p90 ms", p["p90_us"], _ms))
        rows.append((f"{p['phase']} tokens/s", p["tokens_per_s"], _plain))
    return "Serving phases\n" + _compared_table(rows, width) if rows else ""


def _changes(title: str, rows: Sequence[Mapping[str, Any]], field: str, width: int) -> str:
    shown = [r for r in rows if r["status"] != "same"][:TOP_ROWS]
    if not shown:
        return ""
    header = ["status", "name", "calls", "base ms", "target ms", "delta ms", "delta %"]
    cells = []
    for r in shown:
        calls = r["calls"]
        count = f"{_plain(calls['base'])}→{_plain(calls['target'])}"
        name = short(r["name"], 60)
        if r.get("input_shape") is not None:
            name = f"{name} {r['input_shape']}"
        cells.append([r["status"], name, count, *_cells(r[field], _ms)])
    return f"{title}\n" + table(header, cells, width)


def _by_work(view: DiffView, width: int) -> str:
    """Kernels paired by what they do (work, launching op, shapes): across vendors."""
    pairs = view.get("kernels_by_work") or []
    if not pairs:
        return ""
    header = ["match", "work", "op", "base ms", "target ms", "delta ms", "delta %", "ratio"]
    cells = []
    for p in pairs[:TOP_ROWS]:
        op = short(p["op"] or "-", 40)
        if p["input_shape"] is not None:
            op = f"{op} {short(str(p['input_shape']), 40)}"
        ratio = "-" if p["ratio"] is None else f"{p['ratio']:.3f}"
        cells.append([p["match"], p["work"], op, *_cells(p["total_us"], _ms), ratio])
    return "Kernels by what they do (work, op, shapes)\n" + table(header, cells, width)


def render_diff(view: DiffView, width: int = DEFAULT_WIDTH) -> str:
    """The whole text report after the command's heading (which traces were compared)."""
    lines = [wrap(f"note: {note}", width, "") for note in view["notes"]]
    metric = view["operator_metric"].replace("_us", " time").replace("_", " ")
    operators = f"Operators, largest change of {metric} first"
    sections = [
        _steps(view, width),
        _gpu(view, width),
        _memory(view, width),
        _communication(view, width),
        _serving(view, width),
        _changes(operators, view["operators"], view["operator_metric"], width),
        _changes("Kernels, largest change of total time first", view["kernels"], "total_us", width),
        _by_work(view, width),
    ]
    head = ["\n".join(lines)] if lines else []
    return "\n\n".join([*head, *(s for s in sections if s)])
