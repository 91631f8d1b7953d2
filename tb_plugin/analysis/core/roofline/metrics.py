"""Roofline numbers of groups of calls (operator rows, kernel rows), in decimal units:
TFLOP = 10^12 FLOP, GB = 10^9 bytes. Every sum is over the calls that know the term:

- `flops`, `bytes`: summed over the calls that have them (null when none does);
- `tflops`, `gbps`: those sums over the device time of the same calls;
- `intensity`: FLOPs per byte over the calls that have both;
- `pct_of_peak`: the larger ideal time (at the compute roof of each call's dtype, or at
  the memory roof) over the measured time, in %, over the calls on a known device;
- `bound`: "compute" when the compute ideal time is the larger, else "memory".
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from ....model.trace_model import TraceModel
from ..devices import device_identities
from .peaks import DTYPES, device_peaks
from .work import Costs


class RooflineFields(TypedDict):
    flops: float | None
    bytes: float | None
    tflops: float | None
    gbps: float | None
    intensity: float | None
    pct_of_peak: float | None
    bound: str | None
    dtype: str | None


class Roof(TypedDict):
    device_id: int
    device: str  # the matched entry of data/device_peaks.json
    match: str  # "exact" (its `names`), "family" (model token) or "unnamed" (memory, CUs)
    memory_gbps: float | None
    tflops: dict[str, float | None]
    source: str


def _sum(group: np.ndarray, values: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(group[mask], weights=values[mask], minlength=n)


def grouped(costs: Costs, time_us: np.ndarray, group: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Per group (0..n-1) the sums the row fields come from; `costs` and `time_us` are per
    call (aligned with `group`)."""
    has_f = np.isfinite(costs.flops)
    has_b = np.isfinite(costs.bytes)
    timed = time_us > 0
    both = has_f & has_b
    roofed = np.isfinite(costs.t_compute) & np.isfinite(costs.t_memory) & timed
    dtype_lo = np.full(n, 127, dtype=np.int64)
    dtype_hi = np.full(n, -2, dtype=np.int64)
    typed = has_f | has_b
    np.minimum.at(dtype_lo, group[typed], costs.dtype[typed].astype(np.int64))
    np.maximum.at(dtype_hi, group[typed], costs.dtype[typed].astype(np.int64))
    return {
        "flops": _sum(group, costs.flops, has_f, n),
        "n_flops": np.bincount(group[has_f], minlength=n),
        "bytes": _sum(group, costs.bytes, has_b, n),
        "n_bytes": np.bincount(group[has_b], minlength=n),
        "time_f": _sum(group, time_us, has_f & timed, n),
        "time_b": _sum(group, time_us, has_b & timed, n),
        "flops_both": _sum(group, costs.flops, both, n),
        "bytes_both": _sum(group, costs.bytes, both, n),
        "t_compute": _sum(group, costs.t_compute, roofed, n),
        "t_memory": _sum(group, costs.t_memory, roofed, n),
        "time_r": _sum(group, time_us, roofed, n),
        "dtype": np.where(dtype_lo == dtype_hi, dtype_lo, -1),
    }


def _num(x: float, digits: int = 4) -> float | None:
    return None if not np.isfinite(x) else float(f"{float(x):.{digits}g}")


def fields(s: dict[str, np.ndarray], i: int) -> RooflineFields:
    has_f, has_b = s["n_flops"][i] > 0, s["n_bytes"][i] > 0
    tf, tb, tr = s["time_f"][i], s["time_b"][i], s["time_r"][i]
    fb, bb = s["flops_both"][i], s["bytes_both"][i]
    tc, tm = s["t_compute"][i], s["t_memory"][i]
    dtype = int(s["dtype"][i])
    return {
        "flops": float(s["flops"][i]) if has_f else None,
        "bytes": float(s["bytes"][i]) if has_b else None,
        "tflops": _num(s["flops"][i] / tf / 1e6) if has_f and tf > 0 else None,
        "gbps": _num(s["bytes"][i] / tb / 1e3) if has_b and tb > 0 else None,
        "intensity": _num(fb / bb) if bb > 0 else None,
        "pct_of_peak": round(float(100.0 * max(tc, tm) / tr), 2) if tr > 0 else None,
        "bound": ("compute" if tc >= tm else "memory") if tr > 0 and tc + tm > 0 else None,
        "dtype": DTYPES[dtype] if 0 <= dtype < len(DTYPES) else None,
    }


def roofs(model: TraceModel) -> list[Roof]:
    """The roofs of each GPU of the trace whose peaks are known."""
    out: list[Roof] = []
    for device_id in sorted(device_identities(model)):
        peaks = device_peaks(model, device_id)
        if peaks is not None:
            out.append(
                {
                    "device_id": device_id,
                    "device": peaks.device,
                    "match": peaks.match,
                    "memory_gbps": peaks.memory_gbps,
                    "tflops": dict(peaks.tflops),
                    "source": peaks.source,
                }
            )
    return out


def empty_fields() -> RooflineFields:
    return {
        "flops": None,
        "bytes": None,
        "tflops": None,
        "gbps": None,
        "intensity": None,
        "pct_of_peak": None,
        "bound": None,
        "dtype": None,
    }
