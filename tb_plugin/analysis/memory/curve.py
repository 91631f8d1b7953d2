"""The memory curve: a device's allocated (and reserved) step curve in a range, reduced
to what a given pixel width can show without losing any pixel's extremes."""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np

from ...model.errors import ViewParamError, bounded
from ...model.trace_model import TraceModel
from .index import DeviceSeries, memory_index
from .ranges import parse_range, selected_devices, trace_start, window
from .types import MemoryCurveParams

DEFAULT_WIDTH = 1000
MAX_WIDTH = 20000


class CurveView(TypedDict):
    trace_start_us: float
    device: str
    start_us: float | None
    end_us: float | None
    width: int
    points: int  # points of the full step curve in the range
    downsampled: bool
    t_us: list[float]  # a step curve: each value holds until the next time
    allocated_bytes: list[float]
    reserved_bytes: list[float] | None
    peak_allocated_bytes: float
    peak_reserved_bytes: float | None


def memory_curve(model: TraceModel, params: MemoryCurveParams) -> CurveView:
    index = memory_index(model)
    start, end, lo, hi = parse_range(params)
    chosen = selected_devices(index, params, default_all=False)
    if not chosen:  # like a device that is not there: 400, with the reason
        raise ViewParamError("the trace has no memory events, so no memory curve")
    (d,) = chosen
    width = bounded(params.get("width"), "width", DEFAULT_WIDTH, 1, MAX_WIDTH)
    t, alloc, res = _step_points(d, lo, hi)
    keep = downsample(t, [alloc] if res is None else [alloc, res], width)
    return {
        "trace_start_us": trace_start(model),
        "device": d.name,
        "start_us": start,
        "end_us": end,
        "width": width,
        "points": int(t.size),
        "downsampled": bool(keep.size < t.size),
        "t_us": t[keep].tolist(),
        "allocated_bytes": alloc[keep].tolist(),
        "reserved_bytes": None if res is None else res[keep].tolist(),
        "peak_allocated_bytes": float(alloc.max()) if alloc.size else 0.0,
        "peak_reserved_bytes": None if res is None or not res.size else float(res.max()),
    }


def _step_points(
    d: DeviceSeries, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The step curve inside the range: the level at the range start (when an event came
    before it), one point per event, and the level at the range end."""
    i0, i1 = window(d, lo, hi)
    t = d.ts[i0:i1]
    series = [d.allocated] + ([d.reserved] if d.reserved is not None else [])
    values = [s[i0:i1] for s in series]
    if i0 > 0 and math.isfinite(lo):
        t = np.concatenate([[lo], t])
        values = [np.concatenate([[s[i0 - 1]], v]) for s, v in zip(series, values)]
    if t.size and math.isfinite(hi) and t[-1] < hi:
        t = np.concatenate([t, [hi]])
        values = [np.concatenate([v, v[-1:]]) for v in values]
    return t, values[0], values[1] if len(values) > 1 else None


def downsample(t: np.ndarray, series: list[np.ndarray], width: int) -> np.ndarray:
    """Positions to keep of a step curve drawn `width` pixels wide: in each pixel's time
    bucket the first point, the last, and where each series is at its min and its max, so
    every pixel column shows the true extremes. All points when there are few."""
    n = t.size
    if n <= 4 * width or n < 2:
        return np.arange(n)
    span = float(t[-1] - t[0])
    if span <= 0:
        bucket = np.zeros(n, dtype=np.int64)
    else:
        bucket = np.minimum(((t - t[0]) * (width / span)).astype(np.int64), width - 1)
    starts = np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))
    stops = np.concatenate([starts[1:], [n]])
    counts = stops - starts
    picks = [starts, stops - 1]
    for v in series:
        for reduce in (np.minimum, np.maximum):
            extreme = np.repeat(reduce.reduceat(v, starts), counts)
            hit = np.flatnonzero(v == extreme)
            _, first = np.unique(bucket[hit], return_index=True)
            picks.append(hit[first])
    return np.unique(np.concatenate(picks))
