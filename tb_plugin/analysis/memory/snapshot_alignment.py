"""Placing a memory snapshot on a trace's time axis.

A snapshot's entries carry `time_us`, epoch microseconds. A trace's `ts` are epoch
microseconds too once its `baseTimeNanoseconds` is added (2024+ traces are relative to
it; older ones wrote epoch times directly, recognised by their size). So a snapshot time
t sits at trace `ts = t - trace_origin_us`. Whether the two recordings cover the same
moments is checked, not assumed: the trace's own GPU allocations (`[memory]` events with
an address) are matched to the snapshot's `alloc` entries at the same address within
`MATCH_WINDOW_US`, and the median time difference of the matches is reported (near zero
when both clocks agree).

States: `aligned` (both have epoch times and their spans overlap), `no_overlap` (both
have epoch times, recorded at different moments), `unknown` (the trace's times are not
epoch times, or the snapshot has no times; `reason` says which).
"""

from __future__ import annotations

from typing import Any, Literal, Optional, TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from .snapshot_columns import MAX_ADDRESS
from .snapshot_history import time_of

# Epoch microseconds from 2001 on; trace-relative times are far smaller.
EPOCH_US_FLOOR = 1e15
MATCH_WINDOW_US = 1e6
GPU_DEVICE_TYPE = 1


class SnapshotAlignment(TypedDict):
    worker: str
    span: str
    state: Literal["aligned", "no_overlap", "unknown"]
    reason: Optional[str]
    trace_origin_us: Optional[float]  # snapshot time_us - this = the trace's ts
    trace_start_us: Optional[float]  # epoch microseconds
    trace_end_us: Optional[float]
    matched_allocations: int  # trace allocations found in the snapshot's history
    clock_offset_us: Optional[float]  # median snapshot time - trace time of the matches


def align(
    worker: str, span: str, model: TraceModel, times: list[float], allocs: dict[int, list[float]]
) -> SnapshotAlignment:
    """`times`: every snapshot entry's time_us; `allocs`: alloc times by address."""
    out = unaligned(worker, span, None)
    ts = model.events["ts"]
    if not ts.size:
        return {**out, "reason": "the trace has no events"}
    first, last = float(np.nanmin(ts)), float(np.nanmax(ts + np.nan_to_num(model.events["dur"])))
    origin = model.time_origin_us
    if origin == 0 and first < EPOCH_US_FLOOR:
        reason = "the trace has no baseTimeNanoseconds and its times are not epoch times"
        return {**out, "reason": reason}
    out["trace_origin_us"] = origin
    out["trace_start_us"], out["trace_end_us"] = first + origin, last + origin
    if not times:
        return {**out, "reason": "the snapshot's history has no times (torch before 2.1)"}
    matched = _matches(model, origin, allocs)
    out["matched_allocations"] = len(matched)
    out["clock_offset_us"] = float(np.median(matched)) if matched else None
    if min(times) > last + origin or max(times) < first + origin:
        return {**out, "state": "no_overlap", "reason": "recorded at different times"}
    return {**out, "state": "aligned"}


def unaligned(worker: str, span: str, reason: str | None) -> SnapshotAlignment:
    return {
        "worker": worker,
        "span": span,
        "state": "unknown",
        "reason": reason,
        "trace_origin_us": None,
        "trace_start_us": None,
        "trace_end_us": None,
        "matched_allocations": 0,
        "clock_offset_us": None,
    }


def _matches(model: TraceModel, origin: float, allocs: dict[int, list[float]]) -> list[float]:
    memory = model.memory
    gpu = (memory["device_type"] == GPU_DEVICE_TYPE) & (memory["bytes"] > 0)
    rows = memory["row"][gpu]
    addrs = memory["addr"][gpu].tolist()
    times = (model.events["ts"][rows] + origin).tolist()
    out = []
    for addr, t in zip(addrs, times):
        candidates = allocs.get(addr)
        if not candidates:
            continue
        nearest = min(candidates, key=lambda c: abs(c - t))
        if abs(nearest - t) <= MATCH_WINDOW_US:
            out.append(nearest - t)
    return out


def alloc_times(trace: Any) -> dict[int, list[float]]:
    """The `alloc` entries' times by address."""
    out: dict[int, list[float]] = {}
    for e in trace if isinstance(trace, list) else []:
        if not isinstance(e, dict) or e.get("action") != "alloc":
            continue
        addr, t = e.get("addr"), time_of(e)
        if type(addr) is int and 0 <= addr < MAX_ADDRESS and t is not None:
            out.setdefault(addr, []).append(t)
    return out
