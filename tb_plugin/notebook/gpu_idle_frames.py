"""The GPU-idle analyses as frames: the `gpu_idle` route's nested lanes flattened to one
row per (device, stream, step), and the per-stream queue length as a step series.

pandas is imported inside the functions (see `frames`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..api.lower import TraceModel
from ..api.view_parts import GpuIdleView, IdleBreakdown, queue_lengths
from .frames import plain_fields

if TYPE_CHECKING:
    import pandas as pd

_LANE_COLUMNS = ["device", "label", "stream", "step", "step_name"]


def idle_frame(view: Mapping[str, Any]) -> pd.DataFrame:
    """One row per device lane (`stream` None: all its streams merged) and per stream, per
    step (`step` its index, `step_name`), with the route's `IdleBreakdown` numbers; the
    route's plain fields (`available`, `reason`, the kernel-wait threshold) in `attrs`."""
    import pandas as pd

    names = [step["name"] for step in view["steps"]]
    records: list[dict[str, Any]] = []
    for device in view["devices"]:
        lanes = [(None, device["per_step"])]
        lanes += [(s["stream"], s["per_step"]) for s in device["streams"]]
        for stream, per_step in lanes:
            for i, numbers in enumerate(per_step):
                lane = [device["device"], device["label"], stream, i, names[i]]
                records.append({**dict(zip(_LANE_COLUMNS, lane)), **numbers})
    columns = _LANE_COLUMNS + list(IdleBreakdown.__annotations__)
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame["stream"] = frame["stream"].astype("Int64")  # NA: the device's merged lane
    frame.attrs.update(plain_fields(view, GpuIdleView))
    return frame


def queue_frame(model: TraceModel) -> pd.DataFrame:
    """Per (device, stream) the queue length as a step function: from `time_ns` (int64 ns
    from `attrs["origin_us"]`, the whole microsecond the trace starts at) the length is
    `length`, until the lane's next row. The trace view's queue tracks draw these series."""
    import numpy as np
    import pandas as pd

    origin_us, series = queue_lengths(model)
    sizes = [s.times.size for s in series]
    frame = pd.DataFrame(
        {
            "device": np.repeat([s.device for s in series], sizes).astype(np.int64),
            "stream": np.repeat([s.stream for s in series], sizes).astype(np.int64),
            "time_ns": np.concatenate([s.times for s in series]) if series else [],
            "length": np.concatenate([s.values for s in series]) if series else [],
        }
    ).astype({"time_ns": np.int64, "length": np.int64})
    frame.attrs["origin_us"] = origin_us
    return frame
