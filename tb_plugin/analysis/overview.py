"""Overview: step-time breakdown, GPU summary per device, recommendations.

Breakdown: each instant of a step belongs to the highest-priority activity running then,
in the order Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec;
what is left is Other, so the parts add up to the step exactly. The exclusive share of a
role is |union of it and every role above| - |union of the roles above|, computed once
per role for all steps with prefix sums.

Where we differ from the old plugin on purpose (tests/test_overview.py says so too):
`user_annotation` ranges count as CPU Exec and DataLoader (2.x traces), `cuda_driver`
launches count as Runtime, and CPU collective backends (`gloo:*`) count as Communication.
"""

from __future__ import annotations

import numpy as np

from ..model.categories import Kind
from ..model.trace_model import TraceModel
from . import gpu as gpu_summary
from .common import complete_rows, ends, gpu_device_ids, name_flags
from .devices import device_word
from .health.view import caveat, health_of
from .intervals import IntervalUnion
from .kernel_classes import kernel_classes
from .overview_types import OverviewView, StepView
from .recommendations import recommend, with_caveat
from .rules import is_dataloader_range, is_step_name
from .steps import Steps, find_steps
from .taxonomy import is_comm_op, is_host_transfer_op
from .trusted_rows import untrusted_mask

# 3: kernel taxonomy, step windows over all device work, device identity, advice that fits
# the hardware and the cause. 4: a graph-replayed kernel is eligible by its capturing op.
# 5: events left out (trace health), caveats on recommendations.
VERSION = "6"
ROLES = ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec")
ALL_PARTS = ROLES + ("other",)


def role_intervals(model: TraceModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Start/end arrays of every role's events, before exclusivity."""
    ev = model.events
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def span(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return ev["ts"][rows], ends(model, rows)

    classes = kernel_classes(model)
    kernels = classes.rows
    comm_kernel = classes.comm
    out["kernel"] = span(kernels[~comm_kernel])
    out["memcpy"] = span(complete_rows(model, Kind.MEMCPY))
    out["memset"] = span(complete_rows(model, Kind.MEMSET))
    host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    host_names = ev["name"][host]
    is_step = name_flags(model, is_step_name)[host_names]
    is_loader = name_flags(model, is_dataloader_range)[host_names]
    is_transfer = name_flags(model, is_host_transfer_op)[host_names]
    host_comm = is_transfer
    if kernels.size == 0:
        # A CPU-only rank: the time its threads spend inside collective calls
        # (`c10d::allreduce_` waiting on gloo included) is its communication, as in the
        # Distributed view.
        host_comm = is_transfer | name_flags(model, is_comm_op)[host_names]
    comm_rows = np.concatenate([kernels[comm_kernel], host[host_comm & ~is_step]])
    out["communication"] = span(comm_rows)
    out["runtime"] = span(complete_rows(model, Kind.RUNTIME, Kind.DRIVER))
    out["dataloader"] = span(host[is_loader & ~is_step])
    out["cpu_exec"] = span(host[~is_step & ~is_loader & ~host_comm])
    return out


def breakdown(model: TraceModel, steps: Steps) -> np.ndarray:
    """Exclusive time per step (rows) and part (columns, in ALL_PARTS order)."""
    n = len(steps)
    result = np.zeros((n, len(ALL_PARTS)))
    if n == 0:
        return result
    lo, hi = steps.starts, steps.ends
    intervals = role_intervals(model)
    covered_before = np.zeros(n)
    cumulative: IntervalUnion | None = None
    for j, role in enumerate(ROLES):
        # The union of this role and every role above: one union is one set of merged
        # intervals however it is built, so add the role to the merged ones above (few)
        # rather than merge every raw interval again.
        role_union = IntervalUnion(*intervals[role])
        cumulative = role_union if cumulative is None else cumulative.union(role_union)
        covered = cumulative.covered(lo, hi)
        result[:, j] = covered - covered_before
        covered_before = covered
    result[:, -1] = (hi - lo) - covered_before
    return np.clip(result, 0.0, None)


def overview(model: TraceModel) -> OverviewView:
    steps = find_steps(model)
    parts = breakdown(model, steps)
    n = len(steps)
    step_views: list[StepView] = []
    for i in range(n):
        step_views.append(
            {
                "name": steps.names[i],
                "number": steps.numbers[i],
                "start_us": float(steps.starts[i]),
                "end_us": float(steps.ends[i]),
                "duration_us": float(steps.ends[i] - steps.starts[i]),
                "breakdown_us": {p: float(parts[i, j]) for j, p in enumerate(ALL_PARTS)},
            }
        )
    totals = parts.sum(axis=0) if n else np.zeros(len(ALL_PARTS))
    durations = steps.ends - steps.starts
    gpu_rows_all = complete_rows(model, Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)
    has_gpu = gpu_rows_all.size > 0 or bool(model.device_properties())
    devices = gpu_summary.summarize(model, steps) if has_gpu else []
    view: OverviewView = {
        "steps": step_views,
        "breakdown_us": {p: float(totals[j]) for j, p in enumerate(ALL_PARTS)},
        "step_count": n,
        "average_step_us": float(durations.sum() / n) if n else 0.0,
        "average_breakdown_us": {
            p: float(totals[j] / n) if n else 0.0 for j, p in enumerate(ALL_PARTS)
        },
        "steps_source": steps.source,
        "dropped_steps": steps.dropped,
        "device_type": "GPU" if has_gpu else "CPU",
        "device_word": device_word(model) if has_gpu else "CPU",
        "devices": devices,
        "recommendations": [],
        "left_out_events": int(untrusted_mask(model).sum()),
    }
    advice = recommend(model, view, steps, _gpu_process_count(model))
    view["recommendations"] = with_caveat(advice, caveat(health_of(model)))
    return view


def _gpu_process_count(model: TraceModel) -> int:
    """How many devices ran kernels launched from this one process (nn.DataParallel)."""
    kernels = complete_rows(model, Kind.KERNEL)
    if kernels.size == 0:
        return 0
    return int(np.unique(gpu_device_ids(model, kernels)).size)
