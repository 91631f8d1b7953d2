"""GPU summary per device, with the old plugin's definitions (docs/metrics.md).

All figures are over the steps' window [first step start, last step end]:
- utilization: length of the union of the device's kernels / window length;
- estimated SM efficiency: integral of min(sum of `blocks per SM` of the kernels running
  at each instant, 1) / window length;
- estimated achieved occupancy: mean `est. achieved occupancy %` of kernels, weighted by
  the time each spends inside the window; a kernel the trace gives 0 or no occupancy for
  (graph replays, older CUPTI) is unknown and left out of the mean, not averaged in as 0;
- matrix-core share (tensor cores; MFMA on AMD): time of kernels the taxonomy says run on
  matrix cores / time of kernels whose matrix-core use is known; the time of kernels it
  cannot tell is reported beside it (`matrix_core_unknown_pct` of kernel time), never
  counted as "no". The old plugin divided by all kernel time (same answer on its samples,
  whose kernels are all known).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from .common import distinct, gpu_device_ids
from .devices import device_identity
from .intervals import IntervalUnion, weighted_capped_integral
from .kernel_classes import kernel_classes, matrix_share
from .steps import Steps


class DeviceView(TypedDict):
    id: int
    label: str
    vendor: str
    kind: str  # "cuda", "rocm", "xpu", "mtia", "hpu", "neuron", "privateuse1", "unknown"
    short_label: str  # the label without the model name: "GPU 0", "XPU 0", "accelerator 2"
    name: str | None
    memory_bytes: int | None
    compute_capability: str | None
    utilization_pct: float | None
    sm_efficiency_pct: float | None
    achieved_occupancy_pct: float | None
    tensor_core_pct: float | None
    matrix_core_unknown_pct: float | None
    matrix_core_name: str
    kernel_time_us: float


def _pct(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(100.0 * x, 2)


def summarize(model: TraceModel, steps: Steps) -> list[DeviceView]:
    ev = model.events
    classes = kernel_classes(model)
    kernels = classes.rows
    devices = gpu_device_ids(model, kernels)
    lo, hi = steps.window
    out: list[DeviceView] = []
    # Only devices that ran kernels: one listed in deviceProperties that ran nothing is
    # not shown.
    for dev in distinct(devices).tolist():
        mine = devices == dev
        rows = kernels[mine]
        ident = device_identity(model, int(dev))
        metrics = _device_metrics(model, rows, classes.matrix[mine], lo, hi)
        out.append(
            {
                "id": int(dev),
                "label": ident.label,
                "vendor": ident.vendor,
                "kind": ident.kind,
                "short_label": ident.short_label,
                "name": ident.name,
                "memory_bytes": ident.memory_bytes,
                "compute_capability": ident.compute_capability,
                **metrics,  # type: ignore[typeddict-item]
                "matrix_core_name": ident.matrix_core_name,
                "kernel_time_us": float(ev["dur"][rows].sum()),
            }
        )
    return out


def _device_metrics(
    model: TraceModel, rows: np.ndarray, matrix: np.ndarray, lo: float, hi: float
) -> dict[str, float | None]:
    ev, window = model.events, hi - lo
    util = sm_eff = occ = tc = unknown = None
    if window > 0:
        start = ev["ts"][rows]
        end = start + ev["dur"][rows]
        util = float(IntervalUnion(start, end).covered(lo, hi)[0]) / window
        bps = model.column_at("blocks_per_sm", rows).astype(np.float64)
        has_bps = np.isfinite(bps) & (bps > 0)
        if has_bps.any():
            sm_eff = (
                weighted_capped_integral(start[has_bps], end[has_bps], bps[has_bps], lo, hi)
                / window
            )
        occupancy = model.column_at("occupancy", rows).astype(np.float64)
        has_occ = np.isfinite(occupancy) & (occupancy > 0)
        inside = np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0, None)
        weight = inside[has_occ]
        if weight.sum() > 0:
            occ = float(np.sum(occupancy[has_occ] * weight) / weight.sum()) / 100.0
        total = float(inside.sum())
        _, _, unknown_time, tc = matrix_share(inside, matrix)
        if total > 0:
            unknown = unknown_time / total
    return {
        "utilization_pct": _pct(util),
        "sm_efficiency_pct": _pct(sm_eff),
        "achieved_occupancy_pct": _pct(occ),
        "tensor_core_pct": _pct(tc),
        "matrix_core_unknown_pct": _pct(unknown),
    }
