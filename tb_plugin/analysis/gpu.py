"""GPU summary per device, with the old plugin's definitions (docs/metrics.md).

All figures are over the steps' window [first step start, last step end]:
- utilization: length of the union of the device's kernels / window length;
- estimated SM efficiency: integral of min(sum of `blocks per SM` of the kernels running
  at each instant, 1) / window length;
- estimated achieved occupancy: mean `est. achieved occupancy %` of kernels, weighted by
  the time each spends inside the window;
- tensor-core share: time of kernels whose names say they use tensor cores / kernel time.
"""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np

from ..categories import Kind
from ..model import TraceModel
from .common import gpu_device_ids, name_flags
from .intervals import IntervalUnion, weighted_capped_integral
from .rules import uses_tensor_cores
from .steps import Steps


class DeviceView(TypedDict):
    id: int
    name: str | None
    memory_bytes: int | None
    compute_capability: str | None
    utilization_pct: float | None
    sm_efficiency_pct: float | None
    achieved_occupancy_pct: float | None
    tensor_core_pct: float | None
    kernel_time_us: float


def _pct(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(100.0 * x, 2)


def properties_by_id(model: TraceModel) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for position, props in enumerate(model.device_properties()):
        ident = props.get("id", position)
        if isinstance(ident, int):
            out[ident] = props
    return out


def summarize(model: TraceModel, steps: Steps) -> list[DeviceView]:
    ev = model.events
    kernels = model.complete_rows(Kind.KERNEL)
    devices = gpu_device_ids(model, kernels)
    props = properties_by_id(model)
    lo, hi = steps.window
    window = hi - lo
    tc_flags = name_flags(model, uses_tensor_cores)
    out: list[DeviceView] = []
    for dev in sorted(set(devices.tolist()) | set(props)):
        rows = kernels[devices == dev]
        start = ev["ts"][rows]
        end = start + ev["dur"][rows]
        p = props.get(dev, {})
        util = sm_eff = occ = tc = None
        if rows.size and window > 0:
            util = float(IntervalUnion(start, end).covered(lo, hi)[0]) / window
            bps = ev["blocks_per_sm"][rows].astype(np.float64)
            has_bps = np.isfinite(bps) & (bps > 0)
            if has_bps.any():
                sm_eff = (
                    weighted_capped_integral(start[has_bps], end[has_bps], bps[has_bps], lo, hi)
                    / window
                )
            occupancy = ev["occupancy"][rows].astype(np.float64)
            has_occ = np.isfinite(occupancy) & (occupancy >= 0)
            inside = np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0, None)
            weight = inside[has_occ]
            if weight.sum() > 0:
                occ = float(np.sum(occupancy[has_occ] * weight) / weight.sum()) / 100.0
            total = float(inside.sum())
            if total > 0:
                tc = float(inside[tc_flags[ev["name"][rows]]].sum()) / total
        major, minor = p.get("computeMajor"), p.get("computeMinor")
        out.append(
            {
                "id": int(dev),
                "name": p.get("name"),
                "memory_bytes": p.get("totalGlobalMem"),
                "compute_capability": f"{major}.{minor}" if major is not None else None,
                "utilization_pct": _pct(util),
                "sm_efficiency_pct": _pct(sm_eff),
                "achieved_occupancy_pct": _pct(occ),
                "tensor_core_pct": _pct(tc),
                "kernel_time_us": float(ev["dur"][rows].sum()),
            }
        )
    # A device listed in deviceProperties that ran nothing is not shown.
    return [d for d in out if d["kernel_time_us"] > 0]
