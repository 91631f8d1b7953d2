"""Request parameters the memory routes share (a closed range in the trace's own
microseconds, a device) and the events of a device inside a range."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...model.errors import ViewParamError
from ...model.trace_model import TraceModel
from .index import DeviceSeries, MemoryIndex


def parse_range(params: Mapping[str, Any]) -> tuple[float | None, float | None, float, float]:
    start, end = params.get("start_us"), params.get("end_us")
    lo = -math.inf if start is None else start
    hi = math.inf if end is None else end
    if lo > hi:
        raise ViewParamError(f"start_us ({start}) is after end_us ({end})")
    return start, end, lo, hi


def selected_devices(
    index: MemoryIndex, params: Mapping[str, Any], default_all: bool
) -> list[DeviceSeries]:
    if not index.devices:
        # One rule for every memory route: no memory events is a 400 with this reason
        # (the memory page is not offered for such a trace), never an empty 200.
        raise ViewParamError("the trace has no memory events")
    name = params.get("device")
    if name in (None, ""):
        if default_all:
            return list(index.devices)
        chosen = index.default_device
        return [d for d in index.devices if d.name == chosen]
    found = index.device(str(name))
    if found is None:
        known = ", ".join(d.name for d in index.devices) or "none"
        raise ViewParamError(f"no memory events of device {name!r} (devices: {known})")
    return [found]


def window(d: DeviceSeries, lo: float, hi: float) -> tuple[int, int]:
    return int(np.searchsorted(d.ts, lo, side="left")), int(np.searchsorted(d.ts, hi, side="right"))


def trace_start(model: TraceModel) -> float:
    ts = model.events["ts"]
    return float(np.nanmin(ts)) if ts.size else 0.0
