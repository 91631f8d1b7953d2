"""Trace health recomputed from the raw JSON alone (the checks documented for the `health`
route, docs/http_api.md), without kinetoscope: plain Python over the events as written.

Times are compared in exact integer nanoseconds (`ns`; `raw.ns` rounds through a float,
which is off by tens of ns for epoch-µs traces); the 1 µs tolerances are 1000 ns.
Lanes are (pid, tid) as text ("123" and 123 are one thread), Python frames a lane of their
own beside their thread's ops, and so are the ranges of CPU collective backends (names
starting `gloo:`, `mpi:`, `ucc:`). Run as a script: `python -m tests.independent.health FILE`.
"""

from __future__ import annotations

import bisect
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .raw import RawTrace, ns, read_raw

TOLERANCE_NS = 1000  # 1 µs: nesting, launch and window tolerances
CLOCK_GAP_MIN_US = 1_000_000.0
CLOCK_GAP_IQR = 10.0
GPU_CATS = {"kernel", "mtia_ccp_events", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
KERNEL_CATS = {"kernel", "mtia_ccp_events"}
RUNTIME_CATS = {
    "cuda_runtime",
    "runtime",
    "mtia_runtime",
    "xpu_runtime",
    "privateuse1_runtime",
    "glow_runtime",
}
DRIVER_CATS = {"cuda_driver", "xpu_driver", "privateuse1_driver"}
FLOW_CATS = {"ac2g", "async", "async_cpu_to_gpu", "async_gpu", "fwdbwd"}
NOT_SLICES = {"trace", "cuda_sync"} | FLOW_CATS  # the Trace span, sync events, flows
WINDOW_MARK = "Record Window End"


def _num(value: Any) -> float | None:
    """A finite number as written (bools and text are not times)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _cat(e: dict[str, Any]) -> str:
    return str(e.get("cat") or "").lower()


def _arg(e: dict[str, Any], key: str) -> Any:
    args = e.get("args")
    return args.get(key) if isinstance(args, dict) else None


@dataclass
class Health:
    """The counts (None: the check cannot run on this trace) and which events are left out
    of time sums (indices into the trace's events, metadata aside)."""

    counts: dict[str, int | None]
    untrusted: set[int] = field(default_factory=set)
    events: _Events | None = None  # the events as read, for the flame checks


@dataclass
class _Events:
    """The events (metadata aside) with their times read once: µs floats as written (None:
    no number), exact ns, and lower-cased categories."""

    events: list[dict[str, Any]]
    ts: list[float | None]
    dur: list[float | None]
    ts_ns: list[int | None]
    dur_ns: list[int]
    cat: list[str]

    @classmethod
    def of(cls, trace: RawTrace) -> _Events:
        events = [e for e in trace.events if e.get("ph") != "M"]
        ts = [_num(e.get("ts")) for e in events]
        dur = [_num(e.get("dur")) for e in events]
        return cls(
            events,
            ts,
            dur,
            [ns(t) if t is not None else None for t in ts],
            [ns(d) if d is not None and d > 0 else 0 for d in dur],
            [_cat(e) for e in events],
        )


def _zero_ts(ev: _Events) -> set[int]:
    return {i for i, (t, d) in enumerate(zip(ev.ts, ev.dur)) if t == 0 and not (d or 0) > 0}


def _duplicates(events: list[dict[str, Any]]) -> set[int]:
    """Second and later copies: the same event text (keys in written order). Only events
    sharing their start, name and thread with another are written out and compared."""
    shared = Counter((repr(e.get("ts")), str(e.get("name")), str(e.get("tid"))) for e in events)
    seen: set[str] = set()
    out = set()
    for i, e in enumerate(events):
        if shared[(repr(e.get("ts")), str(e.get("name")), str(e.get("tid")))] < 2:
            continue
        key = json.dumps(e)
        if key in seen:
            out.add(i)
        seen.add(key)
    return out


def _clock_outliers(ev: _Events, considered: list[int]) -> set[int]:
    """By start, the events split where one starts more than the gap after every earlier
    one has ended; every part but the median start's is off the clock."""
    order = sorted((i for i in considered if ev.ts[i] is not None), key=lambda i: ev.ts[i])
    if len(order) < 3:
        return set()
    starts = [ev.ts[i] or 0.0 for i in order]
    q1, q3 = starts[len(order) // 4], starts[len(order) * 3 // 4]
    gap = max(CLOCK_GAP_MIN_US, CLOCK_GAP_IQR * (q3 - q1))
    part, parts, covered = 0, [], -math.inf
    for t, i in zip(starts, order):
        if parts and t - covered > gap:
            part += 1
        parts.append(part)
        dur = ev.dur[i] or 0.0
        covered = max(covered, t + (dur if dur > 0 else 0.0))
    body = parts[len(order) // 2]
    return {i for i, p in zip(order, parts) if p != body}


def _trusted_x(ev: _Events, untrusted: set[int]) -> list[int]:
    return [
        i
        for i, e in enumerate(ev.events)
        if e.get("ph") == "X"
        and i not in untrusted
        and ev.ts[i] is not None
        and ev.dur[i] is not None
    ]


def _kernels_before_launch(ev: _Events, x: list[int]) -> int | None:
    calls: dict[Any, tuple[int, int]] = {}  # correlation → (driver?, index): runtime first
    for i in x:
        corr = _arg(ev.events[i], "correlation")
        if ev.cat[i] in RUNTIME_CATS | DRIVER_CATS and isinstance(corr, int) and corr >= 0:
            key = (int(ev.cat[i] in DRIVER_CATS), i)
            calls[corr] = min(calls.get(corr, key), key)
    linked = early = gpu = 0
    for i in x:
        if ev.cat[i] not in GPU_CATS:
            continue
        gpu += 1
        found = calls.get(_arg(ev.events[i], "correlation"))
        if found is None:
            continue
        linked += 1
        if (ev.ts_ns[i] or 0) < (ev.ts_ns[found[1]] or 0) - TOLERANCE_NS:
            early += 1
    if not gpu:
        return 0  # no GPU activity: none before its launch
    return early if linked else None


def _overlaps(ev: _Events, x: list[int]) -> int:
    """Per lane, slices by (start, longer first, file order); the open slices' ends in a
    sorted list: a slice crosses one when an end still open after its start falls before
    its own end (both by more than the tolerance)."""
    lanes: dict[tuple[str, str, bool, bool], list[tuple[int, int, int]]] = {}
    for i in x:
        if ev.cat[i] in NOT_SLICES:
            continue
        e = ev.events[i]
        start = ev.ts_ns[i] or 0
        transfer = str(e.get("name", "")).startswith(("gloo:", "mpi:", "ucc:"))
        lane = (str(e.get("pid")), str(e.get("tid")), ev.cat[i] == "python_function", transfer)
        lanes.setdefault(lane, []).append((start, -(start + ev.dur_ns[i]), i))
    crossing = 0
    for items in lanes.values():
        items.sort()
        open_ends: list[int] = []
        for start, neg_end, _ in items:
            end = -neg_end
            # drop the slices that ended by this one's start (within the tolerance)
            if open_ends and open_ends[0] <= start + TOLERANCE_NS:
                del open_ends[: bisect.bisect_right(open_ends, start + TOLERANCE_NS)]
            if open_ends and open_ends[0] < end - TOLERANCE_NS:
                crossing += 1
            bisect.insort(open_ends, end)
    return crossing


def _outside_window(ev: _Events, untrusted: set[int]) -> int | None:
    spans = [
        i
        for i, e in enumerate(ev.events)
        if e.get("ph") == "X" and ev.cat[i] == "trace" and ev.ts_ns[i] is not None
    ]
    if not spans:
        return None
    lo = min(ev.ts_ns[i] or 0 for i in spans)
    hi = max((ev.ts_ns[i] or 0) + ev.dur_ns[i] for i in spans)
    for i, e in enumerate(ev.events):
        if e.get("name") == WINDOW_MARK and ev.ts_ns[i] is not None:
            hi = max(hi, ev.ts_ns[i] or 0)
    count = 0
    for i, e in enumerate(ev.events):
        start = ev.ts_ns[i]
        if start is None or i in untrusted or ev.cat[i] == "trace" or e.get("name") == WINDOW_MARK:
            continue
        if start < lo - TOLERANCE_NS or start + ev.dur_ns[i] > hi + TOLERANCE_NS:
            count += 1
    return count


def _unmatched_flows(events: list[dict[str, Any]]) -> int:
    flows: dict[tuple[str, Any], set[str]] = {}
    for e in events:
        if e.get("ph") in ("s", "f", "t"):
            flows.setdefault((str(e.get("cat")), e.get("id")), set()).add(e["ph"])
    return sum(1 for phs in flows.values() if not {"s", "f"} <= phs)


def health(trace: RawTrace) -> Health:
    ev = _Events.of(trace)
    zero, dup = _zero_ts(ev), _duplicates(ev.events)
    considered = [
        i for i, e in enumerate(ev.events)
        if i not in zero and i not in dup and e.get("name") != WINDOW_MARK
    ]  # fmt: skip
    clock = _clock_outliers(ev, considered)
    untrusted = zero | dup | clock
    x = _trusted_x(ev, untrusted)
    counts: dict[str, int | None] = {
        "truncated_file": 0,  # the JSON parsed whole
        "zero_timestamps": len(zero),
        "negative_duration": sum(1 for d in ev.dur if (d or 0) < 0),
        "duplicate_events": len(dup),
        "clock_outlier": len(clock),
        "kernel_before_launch": _kernels_before_launch(ev, x),
        "overlapping_events": _overlaps(ev, x),
        "outside_profiling_window": _outside_window(ev, untrusted),
        "unmatched_flows": _unmatched_flows(ev.events),
    }
    return Health(counts, untrusted, ev)


def kernel_time_us(trace: RawTrace, found: Health) -> float:
    """Σ dur of the trusted kernels (copies and fills aside): the GPU flame graph's total."""
    ev = found.events or _Events.of(trace)
    return sum(
        ev.dur[i] or 0.0 for i in _trusted_x(ev, found.untrusted) if ev.cat[i] in KERNEL_CATS
    )


def main(argv: list[str]) -> int:
    for path in argv:
        print(path, json.dumps(health(read_raw(path)).counts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
