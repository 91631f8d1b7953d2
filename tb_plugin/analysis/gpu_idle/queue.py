"""Queue length: per stream, GPU activities launched but not yet finished, over time.

An activity joins its stream's queue when its launch call starts (all the kernels of a
graph replay join at once) and leaves it when it ends. An activity with no launch call
in the trace is counted only while it runs; one whose launch call starts after it does
(records out of order, which gave HTA negative queue lengths) joins when it starts, so
the length is never negative.
"""

from __future__ import annotations

import msgspec
import numpy as np

from ..core.common import unique_rows
from ..core.launches import GpuWork


class QueueSeries(msgspec.Struct, frozen=True):
    """A step function: from times[i] (int64 ns) the length is values[i]."""

    device: int
    stream: int
    times: np.ndarray
    values: np.ndarray

    def stats(self, lo: int, hi: int) -> dict[str, int]:
        """Inside [lo, hi): the longest queue, and the ns at that length and at zero."""
        if hi <= lo:
            return {"max_length": 0, "time_at_max_ns": 0, "empty_ns": 0}
        before = np.searchsorted(self.times, lo, side="right") - 1
        first = self.values[before] if before >= 0 else 0
        # Times strictly inside (lo, hi): a slice of the sorted times, not a mask of all.
        end = np.searchsorted(self.times, hi, side="left")
        times = np.concatenate([[lo], self.times[before + 1 : end], [hi]])
        values = np.concatenate([[first], self.values[before + 1 : end]])
        widths = np.diff(times)
        longest = int(values.max())
        return {
            "max_length": longest,
            "time_at_max_ns": int(widths[values == longest].sum()),
            "empty_ns": int(widths[values == 0].sum()),
        }


def queue_series(work: GpuWork) -> list[QueueSeries]:
    """One series per (device, stream) with GPU activities, sorted by device and stream."""
    joins = np.where(work.linked, np.minimum(work.launch_start, work.start), work.start)
    out: list[QueueSeries] = []
    keys = np.stack([work.device, work.stream], axis=1)
    if keys.size == 0:
        return out
    uniq, lane = unique_rows(keys)
    for i in range(uniq.shape[0]):
        mine = lane == i
        times = np.concatenate([joins[mine], work.end[mine]])
        deltas = np.concatenate(
            [np.ones(int(mine.sum()), np.int64), -np.ones(int(mine.sum()), np.int64)]
        )
        order = np.argsort(times, kind="stable")
        times, level = times[order], np.cumsum(deltas[order])
        # The length after every change at one instant.
        last = np.concatenate([times[1:] != times[:-1], [True]])
        out.append(QueueSeries(int(uniq[i, 0]), int(uniq[i, 1]), times[last], level[last]))
    return out
