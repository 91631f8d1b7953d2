"""The Overview's view model and the recommendation type: below both the Overview and the
recommendations (and the Distributed view, whose advice is a recommendation too)."""

from __future__ import annotations

from typing import Any, TypedDict

from . import gpu as gpu_summary


class Recommendation(TypedDict):
    id: str
    severity: str
    title: str
    message: str
    evidence: dict[str, Any]
    link: dict[str, str]
    docs_url: str | None


class StepView(TypedDict):
    name: str
    number: int | None
    start_us: float
    end_us: float
    duration_us: float
    breakdown_us: dict[str, float]


class OverviewView(TypedDict):
    steps: list[StepView]
    breakdown_us: dict[str, float]
    step_count: int
    average_step_us: float
    average_breakdown_us: dict[str, float]
    steps_source: str
    dropped_steps: list[dict[str, Any]]
    device_type: str  # "GPU" when the trace has device activity (any kind), else "CPU"
    device_word: str  # what the devices are called: "GPU", "MTIA", "XPU", ...; "CPU"
    devices: list[gpu_summary.DeviceView]
    recommendations: list[Recommendation]
    left_out_events: int  # left out of time-based numbers (duplicates, ts 0, off-clock)
