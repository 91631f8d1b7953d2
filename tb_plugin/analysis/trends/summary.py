"""One trace summarised for the trend (a pure function of its model), and a run's workers
combined. Everything a trend needs of a run, in a few KB, so a logdir of hundreds of runs
is compared without keeping any model: each trace is read once, summarised, the summary
cached on disk by file state, and the model dropped.

Times of ops, kernels and collectives are per profiled step (the trace's total divided by
its step count; the whole trace when it has no steps), so runs that profiled a different
number of steps compare. Only the top `TOP_N` of each by time are kept; `*_complete` says
whether the list is every one the trace has (then a name absent from it ran 0 µs, else
its time is unknown).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from .. import kernels as kernels_analysis
from .. import memory as memory_analysis
from .. import operators as operators_analysis
from ..distributed.summary import summarize_rank
from ..distributed.types import RankInput
from ..distributed.view import analyze
from ..overview import ALL_PARTS, overview

# Bump when a summary's content changes: it keys the cached summaries.
VERSION = "2"  # 2: a collective kernel's op is the nccl:* call (optree.collective_owner)
TOP_N = 50
# Kernels whose taxonomy `work` is communication are the collectives' time: counted there,
# not as kernels, so one slower all-reduce is one finding, not two.
COMMUNICATION_WORK = "communication"


class TraceSummary(msgspec.Struct):
    """A trace (one worker), or a run (its workers combined: `workers` > 1)."""

    version: str
    start_us: float | None  # epoch µs of the first event; None when the trace has none
    device_type: str  # "GPU" or "CPU"
    devices: list[str]
    step_count: int
    step_mean_us: float | None  # None: no steps
    step_median_us: float | None
    phases_us: dict[str, float]  # the Overview's parts, mean per step
    op_metric: str  # "device_self_us" (GPU) or "host_self_us" (CPU-only)
    ops: dict[str, float]  # name → µs per step, the top TOP_N
    ops_complete: bool
    kernels: dict[str, float]
    kernels_complete: bool
    kernel_work: dict[str, str]  # name → the taxonomy's work class
    collectives: dict[str, float]  # collective type → µs per step
    memory_peak_bytes: dict[str, float]  # memory device key ("GPU0") → peak allocated
    workers: int = 1


def _top(values: dict[str, float]) -> tuple[dict[str, float], bool]:
    ranked = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    return {k: round(v, 3) for k, v in ranked[:TOP_N]}, len(ranked) <= TOP_N


def _start_us(model: TraceModel) -> float | None:
    ts = model.events["ts"]
    if not ts.size or np.isnan(ts).all():
        return None
    return float(np.nanmin(ts)) + model.time_origin_us


def _collectives(model: TraceModel) -> dict[str, float]:
    rank = summarize_rank(model)
    if not rank.collectives.count:
        return {}
    stats = analyze([RankInput("", "", "", rank)])["ranks"][0]["collectives"]
    return {c["name"]: float(c["total_us"]) for c in stats}


def _ops(model: TraceModel, metric: str) -> dict[str, float]:
    rows = operators_analysis.operators(model, "name")["rows"]
    return {r["name"]: float(r[metric]) for r in rows if r[metric] > 0}  # type: ignore[literal-required]


def _kernels(model: TraceModel) -> tuple[dict[str, float], dict[str, str]]:
    if not kernels_analysis.supports(model):
        return {}, {}
    rows = kernels_analysis.kernels(model, "name")["rows"]
    times: dict[str, float] = {}
    work: dict[str, str] = {}
    for row in rows:
        if row["work"] == COMMUNICATION_WORK:
            continue
        times[row["name"]] = times.get(row["name"], 0.0) + float(row["total_us"])
        work[row["name"]] = row["work"]
    return times, work


def _memory_peaks(model: TraceModel) -> dict[str, float]:
    if not memory_analysis.has_memory(model):
        return {}
    devices = memory_analysis.memory(model, {})["devices"]
    return {d["device"]: float(d["peak_allocated_bytes"]) for d in devices}


def summarize_trace(model: TraceModel) -> TraceSummary:
    """The trend's summary of one trace file."""
    view = overview(model)
    steps = view["step_count"]
    per_step = 1.0 / steps if steps else 1.0
    durations = [s["duration_us"] for s in view["steps"]]
    metric = "device_self_us" if kernels_analysis.supports(model) else "host_self_us"
    ops, ops_complete = _top({k: v * per_step for k, v in _ops(model, metric).items()})
    kernel_times, work = _kernels(model)
    kernels, kernels_complete = _top({k: v * per_step for k, v in kernel_times.items()})
    return TraceSummary(
        version=VERSION,
        start_us=_start_us(model),
        device_type=view["device_type"],
        devices=[d["name"] or d["label"] for d in view["devices"]],
        step_count=steps,
        step_mean_us=round(statistics.fmean(durations), 3) if durations else None,
        step_median_us=round(statistics.median(durations), 3) if durations else None,
        phases_us={p: round(view["average_breakdown_us"][p], 3) for p in ALL_PARTS}
        if steps
        else {},
        op_metric=metric,
        ops=ops,
        ops_complete=ops_complete,
        kernels=kernels,
        kernels_complete=kernels_complete,
        kernel_work={k: work[k] for k in kernels},
        collectives={k: round(v * per_step, 3) for k, v in _collectives(model).items()},
        memory_peak_bytes=_memory_peaks(model),
    )


# --- a run's workers -------------------------------------------------------------------


def _mean_by_name(maps: Sequence[dict[str, float]]) -> dict[str, float]:
    """Per name, the mean over the workers (a worker without it counts as 0)."""
    total: dict[str, float] = {}
    for values in maps:
        for name, value in values.items():
            total[name] = total.get(name, 0.0) + value
    return {name: round(value / len(maps), 3) for name, value in total.items()}


def _max_known(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def combine(workers: Sequence[TraceSummary]) -> TraceSummary:
    """A run of several workers (ranks) as one summary: its start is the earliest worker's;
    the step time the slowest worker's (a synchronous job runs at its pace); phases, ops,
    kernels and collectives the mean per worker; each device's memory peak the highest."""
    if len(workers) == 1:
        return workers[0]
    with_steps = [w for w in workers if w.step_count]
    peaks: dict[str, float] = {}
    for w in workers:
        for device, peak in w.memory_peak_bytes.items():
            peaks[device] = max(peaks.get(device, 0.0), peak)
    ops, ops_complete = _top(_mean_by_name([w.ops for w in workers]))
    kernels, kernels_complete = _top(_mean_by_name([w.kernels for w in workers]))
    work = {k: v for w in workers for k, v in w.kernel_work.items()}
    return TraceSummary(
        version=VERSION,
        start_us=min((w.start_us for w in workers if w.start_us is not None), default=None),
        device_type="GPU" if any(w.device_type == "GPU" for w in workers) else "CPU",
        devices=list(dict.fromkeys(d for w in workers for d in w.devices)),
        step_count=min((w.step_count for w in with_steps), default=0),
        step_mean_us=_max_known([w.step_mean_us for w in workers]),
        step_median_us=_max_known([w.step_median_us for w in workers]),
        phases_us=_mean_by_name([w.phases_us for w in with_steps]) if with_steps else {},
        op_metric=workers[0].op_metric,
        ops=ops,
        ops_complete=ops_complete and all(w.ops_complete for w in workers),
        kernels=kernels,
        kernels_complete=kernels_complete and all(w.kernels_complete for w in workers),
        kernel_work={k: work[k] for k in kernels},
        collectives=_mean_by_name([w.collectives for w in workers]),
        memory_peak_bytes=peaks,
        workers=len(workers),
    )
