"""What of the views a door names besides their routes: response types the notebook's
frames and the flame graph export name (nested parts of a route's JSON), the health
status rule `kinetoscope check` applies to a run's checks, and the one series the notebook
reads from a model rather than a route (the GPU queue length: the trace view draws it as
tracks)."""

from __future__ import annotations

from ..analysis.core.health.view import status_of
from ..analysis.core.launches import gpu_work
from ..analysis.flamegraph import FlameFrame, FlameGraphView
from ..analysis.gpu_idle.queue import QueueSeries, queue_series
from ..analysis.gpu_idle.view import GpuIdleView, IdleBreakdown, LaunchDelayView
from ..analysis.memory.allocations import PAGE_MAX
from ..analysis.serving import PhaseStats, ServingView
from ..model.trace_model import TraceModel

__all__ = [
    "PAGE_MAX",
    "FlameFrame",
    "FlameGraphView",
    "GpuIdleView",
    "IdleBreakdown",
    "LaunchDelayView",
    "PhaseStats",
    "QueueSeries",
    "ServingView",
    "queue_lengths",
    "status_of",
]


def queue_lengths(model: TraceModel) -> tuple[float, list[QueueSeries]]:
    """(origin_us, the queue series of every (device, stream)) of a loaded model: from
    `times[i]` (int64 ns from origin_us) the length is `values[i]`."""
    work = gpu_work(model)
    return work.origin_us, list(queue_series(work))
