"""The trend's per-trace summary again, from the raw JSON (docs/trends.md, "Runs and
their summaries"): the trace start, each compute kernel's total time, each memory device's
peak allocated bytes, and for a trace without GPU work the median `ProfilerStep#` time.

Kernels are events of category `kernel` (`Kernel` before 2021); communication kernels
(NCCL, RCCL: the taxonomy's `communication` work) are the collectives' time, not kernels.
A memory device's peak is the largest `Total Allocated` of its `[memory]` events.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from .raw import RawTrace

# Categories compare lower-cased; MTIA's kernels are `mtia_ccp_events`.
KERNEL_CATS = ("kernel", "mtia_ccp_events")
GPU_CATS = (*KERNEL_CATS, "gpu_memcpy", "memcpy", "gpu_memset", "memset")
COMMUNICATION = re.compile(r"nccl|rccl", re.IGNORECASE)
STEP = re.compile(r"^ProfilerStep#\d+$")
HOST_STEP_CATS = ("user_annotation", "operator", "cpu_op")


@dataclass
class TrendFacts:
    start_us: float | None
    kernel_total_us: dict[str, float] = field(default_factory=dict)
    memory_peaks: list[float] = field(default_factory=list)  # one per device, sorted
    has_gpu: bool = False
    host_step_median_us: float | None = None


def _start_us(trace: RawTrace) -> float | None:
    times = [
        float(e["ts"])
        for e in trace.events
        if e.get("ph") not in ("M", None) and isinstance(e.get("ts"), (int, float))
    ]
    if not times:
        return None
    base = trace.header.get("baseTimeNanoseconds")
    return min(times) + (float(base) / 1000.0 if isinstance(base, (int, float)) else 0.0)


def _memory_peaks(trace: RawTrace) -> list[float]:
    """Each device's peak: the largest `Total Allocated`, or (2021 traces, which record
    only `Bytes`) the largest running sum of `Bytes` in time order."""
    events = sorted(
        (e for e in trace.events if e.get("name") == "[memory]"),
        key=lambda e: float(e.get("ts") or 0.0),
    )
    peaks: dict[tuple[object, object], float] = {}
    running: dict[tuple[object, object], float] = {}
    for e in events:
        args = e.get("args") or {}
        device = (args.get("Device Type"), args.get("Device Id"))
        total = args.get("Total Allocated")
        if not isinstance(total, (int, float)):
            size = args.get("Bytes")
            if not isinstance(size, (int, float)):
                continue
            total = running.get(device, 0.0) + float(size)
        running[device] = float(total)
        peaks[device] = max(peaks.get(device, 0.0), float(total))
    return sorted(peaks.values())


def trend_facts(trace: RawTrace) -> TrendFacts:
    facts = TrendFacts(_start_us(trace), memory_peaks=_memory_peaks(trace))
    steps = []
    for e in trace.complete():
        cat = str(e.get("cat", "")).lower()
        if cat in GPU_CATS:
            facts.has_gpu = True
        if cat in KERNEL_CATS and not COMMUNICATION.search(str(e.get("name", ""))):
            name = str(e.get("name"))
            facts.kernel_total_us[name] = facts.kernel_total_us.get(name, 0.0) + float(
                e.get("dur") or 0.0
            )
        if cat in HOST_STEP_CATS and STEP.match(str(e.get("name", ""))):
            steps.append(float(e.get("dur") or 0.0))
    if steps and not facts.has_gpu:
        facts.host_step_median_us = statistics.median(steps)
    return facts
