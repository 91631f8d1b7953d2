"""Counter tracks of the `ph: "C"` series a trace records itself: CUPTI's PM sampling
(Kineto 2026 writes each metric as its own series on the process `"GPU <n> Counters"`, the
value under the empty key: `{"name": "<metric>", "args": {"": 12.5}}`) and any other
producer's counters (`{"name": "<series>", "args": {"<key>": value, ...}}`, one series a
numeric key). Each series is a step function: a value holds until the next sample.

A series' unit is read from its metric's name, as CUPTI spells units in metric names
(`...pct_of_peak_sustained_elapsed`: percent; `...__bytes...`: bytes); any other is a
plain value. At most MAX_SERIES series are drawn (the first ones in file order)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ..model.categories import Kind
from ..model.trace_model import TraceModel
from .counters import Counter

MAX_SERIES = 64
_GPU_COUNTERS = re.compile(r"^GPU (\d+) Counters$")
_PERCENT = re.compile(r"(pct|percent)", re.I)
_BYTES = re.compile(r"(^|[._])bytes?([._]|$)", re.I)


def recorded_counters(model: TraceModel) -> list[Counter]:
    """One counter track a recorded series, in the order the series first appear."""
    rows = model.rows_of(Kind.COUNTER)
    if rows.size == 0:
        return []
    ev = model.events
    times = ev["ts"][rows].astype(np.float64)
    pids, names = ev["pid"][rows].tolist(), ev["name"][rows].tolist()
    samples: dict[tuple[int, int, str], tuple[list[float], list[float]]] = {}
    for at, args in enumerate(model.iter_args(rows, dict[str, Any])):
        for key, value in args.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if not math.isfinite(value):
                continue
            series = (pids[at], names[at], key)
            if series not in samples and len(samples) >= MAX_SERIES:
                continue
            ts, vs = samples.setdefault(series, ([], []))
            ts.append(float(times[at]))
            vs.append(float(value))
    return [_counter(model, i, key, ts, vs) for i, (key, (ts, vs)) in enumerate(samples.items())]


def _counter(
    model: TraceModel, index: int, series: tuple[int, int, str], ts: list[float], vs: list[float]
) -> Counter:
    pid, name_code, key = series
    process, name = str(model.pids[pid]), model.names[name_code]
    gpu = _GPU_COUNTERS.match(process)
    where = f"GPU {gpu.group(1)}" if gpu else process
    metric = name if key in ("", name) else f"{name} {key}"
    order = np.argsort(np.asarray(ts), kind="stable")
    times, values = np.asarray(ts)[order], np.asarray(vs)[order]
    return Counter(
        f"recorded.{index}",
        f"{where} {metric}",
        metric,
        _unit(metric),
        int(gpu.group(1)) if gpu else None,
        float(values.max()),
        times=times,
        values=values,
        listed_last=True,
    )


def _unit(metric: str) -> str:
    if _PERCENT.search(metric):
        return "percent"
    if _BYTES.search(metric):
        return "bytes"
    return "value"
