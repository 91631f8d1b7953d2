"""The per-stream GPU queue length of a loaded model as a frame (a step series): the one
notebook frame read from a model rather than a route.

pandas is imported inside the function (see `frames`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.lower import TraceModel, queue_lengths

if TYPE_CHECKING:
    import pandas as pd


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
