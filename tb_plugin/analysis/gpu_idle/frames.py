"""The GPU-idle view's notebook frame: the route's nested lanes flattened to one row per
(device, stream, step). The endpoint names it (`frames`), the notebook finds it there;
pandas is imported inside the function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.frame_fields import plain_fields
from .view import GpuIdleView, IdleBreakdown

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
