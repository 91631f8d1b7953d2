"""Overview: step-time breakdown, GPU summary per device, recommendations.

Breakdown: `core/breakdown.py` (the Distributed view's rank summaries use it too).

Where we differ from the old plugin on purpose (tests/test_overview.py says so too):
`user_annotation` ranges count as CPU Exec and DataLoader (2.x traces), `cuda_driver`
launches count as Runtime, and CPU collective backends (`gloo:*`) count as Communication.
"""

from __future__ import annotations

import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core import gpu as gpu_summary
from ..core.breakdown import ALL_PARTS, breakdown
from ..core.common import complete_rows, distinct, gpu_device_ids
from ..core.devices import device_word
from ..core.health.view import caveat, health_of
from ..core.overview_types import OverviewView, StepView
from ..core.recommendations import recommend, with_caveat
from ..core.requests import NoParams
from ..core.steps import find_steps
from ..core.trusted_rows import untrusted_mask


def overview_view(model: TraceModel, params: NoParams) -> OverviewView:
    """The route's compute (no parameters)."""
    return overview(model)


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
    return int(distinct(gpu_device_ids(model, kernels)).size)
