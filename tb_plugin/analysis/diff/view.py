"""The diff of two traces (base, target), built only from the other views' outputs (the
Overview, Operator, Kernel, Memory views and the distributed view's statistics of one
rank), so every number is the one those pages show for each side.

- Steps and breakdown: the Overview's step count, average step and average time per part
  per step; `share_pct` is the part's share of the average step.
- GPU: the Overview's device summaries matched by device id (where the ids differ and the
  sides have as many GPUs, two ranks' traces, in id order, with a note), only when both
  sides ran on a GPU (a CPU-only side has no GPU numbers, not zeros); `devices_differ` and
  a note say when the device names differ.
- Memory: the Memory view's peaks per device key (allocated and reserved).
- Communication: per collective type, the distributed view's statistics of the trace as a
  single rank: bandwidth is over the collective's whole time, as one file cannot separate
  the wait for the other ranks.
- Serving: per phase of the serving views (`serving.py`), when both sides have
  iterations.
- Operators and kernels: `rows.py`; kernels paired by what they do (work class, launching
  op and its shapes: across vendors, where names never match) and modules by path:
  `by_work.py`.
"""

from __future__ import annotations

from typing import Any

from ...model.trace_model import TraceModel
from .. import kernels as kernels_analysis
from .. import memory as memory_analysis
from .. import operators as operators_analysis
from ..core.devices import trace_vendor
from ..distributed.summary import summarize_rank
from ..distributed.types import CollectiveStats, RankInput
from ..distributed.view import analyze
from ..overview import ALL_PARTS, OverviewView, overview
from .by_work import module_ratios, pair_by_work, work_groups
from .numbers import compare, rounded
from .rows import kernel_rows, operator_rows, top_changes
from .serving import serving_diff
from .types import (
    BreakdownDiff,
    CollectiveDiff,
    DiffParams,
    DiffView,
    GpuDiff,
    MemoryDiff,
    SideSummary,
    StepsDiff,
)

GPU_METRICS = (
    "utilization_pct",
    "sm_efficiency_pct",
    "achieved_occupancy_pct",
    "tensor_core_pct",
    "kernel_time_us",
)
COLLECTIVE_FIELDS = ("calls", "bytes", "total_us", "avg_us", "algbw_gbps", "busbw_gbps")


class _Side:
    """The views of one side that the diff reads."""

    def __init__(self, model: TraceModel, group_by: str) -> None:
        self.overview: OverviewView = overview(model)
        self.operators = operators_analysis.operators(model, group_by)
        self.has_kernels = kernels_analysis.supports(model)
        self.kernels = kernels_analysis.kernels(model, "name") if self.has_kernels else None
        self.has_memory = memory_analysis.has_memory(model)
        self.memory = memory_analysis.memory(model, {}) if self.has_memory else None
        self.collectives = _collectives(model)

    @property
    def has_gpu(self) -> bool:
        return self.overview["device_type"] == "GPU"

    def summary(self) -> SideSummary:
        return {
            "device_type": self.overview["device_type"],
            "devices": [d["name"] or d["label"] for d in self.overview["devices"]],
            "steps_source": self.overview["steps_source"],
            "has_kernels": self.has_kernels,
            "has_memory": self.has_memory,
            "has_communication": bool(self.collectives),
        }


def _collectives(model: TraceModel) -> list[CollectiveStats]:
    summary = summarize_rank(model)
    if not summary.collectives.count:
        return []
    return analyze([RankInput("", "", "", summary)])["ranks"][0]["collectives"]


def diff_view(base: TraceModel, target: TraceModel, params: DiffParams) -> DiffView:
    """The route's compute function: `group_by` (name, the default, or shape)."""
    return diff(base, target, operators_analysis.group_by_param(params))


def diff(base_model: TraceModel, target_model: TraceModel, group_by: str = "name") -> DiffView:
    base, target = _Side(base_model, group_by), _Side(target_model, group_by)
    both_kernels = base.has_kernels and target.has_kernels
    metric = "device_self_us" if both_kernels else "host_self_us"
    operators = operator_rows(
        base.operators["rows"],
        target.operators["rows"],
        group_by == "shape",
        (base.has_kernels, target.has_kernels),
        metric,
    )
    kernels = (
        kernel_rows(base.kernels["rows"], target.kernels["rows"])
        if base.kernels is not None and target.kernels is not None
        else []
    )
    serving, serving_notes = serving_diff(base_model, target_model)
    base_summary, target_summary = base.summary(), target.summary()
    devices_differ = bool(
        base_summary["devices"]
        and target_summary["devices"]
        and base_summary["devices"] != target_summary["devices"]
    )
    both_gpu = base.has_gpu and target.has_gpu
    pairs = gpu_pairs(base.overview, target.overview) if both_gpu else []
    return {
        "group_by": group_by,
        "base": base_summary,
        "target": target_summary,
        "devices_differ": devices_differ,
        "notes": _notes(base, target, devices_differ) + _paired_note(pairs) + serving_notes,
        "steps": _steps(base.overview, target.overview),
        "breakdown": _breakdown(base.overview, target.overview),
        "gpu": _gpu(base.overview, target.overview, pairs),
        "memory": _memory(base, target),
        "communication": _communication(base.collectives, target.collectives),
        "operator_metric": metric,
        "operators": operators,
        "kernels": kernels,
        "top_changes": top_changes(operators, kernels, metric),
        "vendors": [trace_vendor(base_model), trace_vendor(target_model)],
        "kernels_by_work": pair_by_work(
            work_groups(base_model),
            work_groups(target_model),
            (base.overview["step_count"], target.overview["step_count"]),
        )
        if both_kernels
        else [],
        "modules": module_ratios(base_model, target_model),
        "serving": serving,
    }


def _paired_note(pairs: list[tuple[int | None, int | None]]) -> list[str]:
    """Said when the GPUs were paired in order (`gpu_pairs`), not by id."""
    crossed = [(b, t) for b, t in pairs if b != t]
    if not crossed or any(b is None or t is None for b, t in crossed):
        return []
    said = ", ".join(f"GPU {b} with GPU {t}" for b, t in crossed)
    return [f"the sides ran on different GPU ids: compared in order ({said})"]


def _notes(base: _Side, target: _Side, devices_differ: bool) -> list[str]:
    notes = []
    if devices_differ:
        notes.append(
            f"the devices differ: base {', '.join(base.summary()['devices'])}, "
            f"target {', '.join(target.summary()['devices'])}"
        )
    for side, name in ((base, "base"), (target, "target")):
        if not side.has_gpu:
            notes.append(f"the {name} is CPU-only: no GPU, kernel or device time comparison")
        elif not side.has_kernels:
            notes.append(f"the {name} has no GPU kernels: no kernel comparison")
        if not side.has_memory:
            notes.append(f"the {name} has no memory events: its memory peaks are unknown")
    return notes


def _steps(base: OverviewView, target: OverviewView) -> StepsDiff:
    return {
        "step_count": compare(base["step_count"], target["step_count"]),
        "average_step_us": compare(
            _if_steps(base, base["average_step_us"]), _if_steps(target, target["average_step_us"])
        ),
    }


def _if_steps(view: OverviewView, value: float) -> float | None:
    """A per-step figure: unknown without steps (the Overview says 0)."""
    return value if view["step_count"] else None


def _share(view: OverviewView, part: str) -> float | None:
    step = view["average_step_us"]
    if not view["step_count"] or not step:
        return None
    return rounded(100.0 * view["average_breakdown_us"][part] / step, 3)


def _breakdown(base: OverviewView, target: OverviewView) -> list[BreakdownDiff]:
    return [
        {
            "part": part,
            "average_us": compare(
                _if_steps(base, base["average_breakdown_us"][part]),
                _if_steps(target, target["average_breakdown_us"][part]),
            ),
            "share_pct": compare(_share(base, part), _share(target, part)),
        }
        for part in ALL_PARTS
    ]


def gpu_pairs(base: OverviewView, target: OverviewView) -> list[tuple[int | None, int | None]]:
    """Device ids paired across the sides: the same id; but where the ids differ and the
    sides have as many GPUs (two ranks' traces: GPU 0 against GPU 6), in id order."""
    b_ids = sorted(d["id"] for d in base["devices"])
    t_ids = sorted(d["id"] for d in target["devices"])
    if b_ids != t_ids and len(b_ids) == len(t_ids):
        return list(zip(b_ids, t_ids))
    return [
        (i if i in b_ids else None, i if i in t_ids else None) for i in sorted({*b_ids, *t_ids})
    ]


def _gpu(
    base: OverviewView, target: OverviewView, pairs: list[tuple[int | None, int | None]]
) -> list[GpuDiff]:
    base_devices = {d["id"]: d for d in base["devices"]}
    target_devices = {d["id"]: d for d in target["devices"]}
    out: list[GpuDiff] = []
    for base_id, target_id in pairs:
        b = base_devices.get(base_id) if base_id is not None else None
        t = target_devices.get(target_id) if target_id is not None else None
        device_id = base_id if base_id is not None else target_id
        assert device_id is not None
        short = list(dict.fromkeys(d["short_label"] for d in (b, t) if d))
        row: dict[str, Any] = {
            "id": device_id,
            "short_label": " / ".join(short),
            "base_name": (b["name"] or b["label"]) if b else None,
            "target_name": (t["name"] or t["label"]) if t else None,
        }
        for metric in GPU_METRICS:
            row[metric] = compare(b[metric] if b else None, t[metric] if t else None)  # type: ignore[literal-required]
        out.append(row)  # type: ignore[arg-type]
    return out


def _memory(base: _Side, target: _Side) -> list[MemoryDiff]:
    sides = [
        {d["device"]: d for d in (side.memory["devices"] if side.memory else [])}
        for side in (base, target)
    ]
    return [
        {
            "device": key,
            "peak_allocated_bytes": compare(
                *(s[key]["peak_allocated_bytes"] if key in s else None for s in sides)
            ),
            "peak_reserved_bytes": compare(
                *(s[key]["peak_reserved_bytes"] if key in s else None for s in sides)
            ),
        }
        for key in dict.fromkeys([*sides[0], *sides[1]])
    ]


def _communication(
    base: list[CollectiveStats], target: list[CollectiveStats]
) -> list[CollectiveDiff]:
    """Per collective type; a type absent from a side ran 0 times there (0 calls, bytes and
    time; its mean and bandwidth unknown)."""
    absent = {"calls": 0, "bytes": 0, "total_us": 0.0}
    sides = [{c["name"]: c for c in side} for side in (base, target)]
    out: list[CollectiveDiff] = []
    for name in dict.fromkeys([*sides[0], *sides[1]]):
        row: dict[str, Any] = {"name": name}
        for field in COLLECTIVE_FIELDS:
            values = [s[name][field] if name in s else absent.get(field) for s in sides]  # type: ignore[literal-required]
            row[field] = compare(*values)
        out.append(row)  # type: ignore[arg-type]
    out.sort(key=lambda r: (-abs(r["total_us"]["delta"] or 0.0), r["name"]))
    return out
