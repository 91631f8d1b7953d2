"""Launch delay: from the start of the host call that launched a GPU activity to the
activity's start, in exact nanoseconds, and the launch call's own duration.

A graph launch (`cudaGraphLaunch`, `hipGraphLaunch`) puts all of its kernels on the queue
with one call: only the first kernel of the replay (the earliest to start) has a launch
delay; the later ones wait for the graph's earlier kernels, not for the launch path, so
they are left out of the distributions and counted in `graph_kernels_after_first`.
Percentiles follow the one rule of docs/metrics.md#percentiles: linear interpolation
between the two nearest ranks (numpy's default, so p50 is the median every other view
reports), rounded to whole nanoseconds (halves up).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from .common import unique_codes
from .launches import GpuWork, gpu_work, to_us


class LaunchDelayRow(TypedDict):
    name: str
    count: int
    total_ns: int
    mean_ns: float
    p50_ns: int
    p90_ns: int
    max_ns: int
    launch_call_mean_ns: float
    launch_call_p90_ns: int


class LaunchOutlier(TypedDict):
    name: str
    launch_name: str
    device: int
    stream: int | None
    start_us: float
    launch_start_us: float
    delay_ns: int
    launch_call_ns: int


def delay_sample(work: GpuWork) -> np.ndarray:
    """Positions (in `work`) of the activities that have a launch delay: linked, and the
    first of their launch call."""
    return np.flatnonzero(work.linked & work.first_of_launch)


def linear_quantile(
    sorted_values: np.ndarray, lo: np.ndarray, count: np.ndarray, q: float
) -> np.ndarray:
    """Per group (int64 values sorted within each group; group g at [lo[g], lo[g] +
    count[g]), count >= 1), the q-quantile by linear interpolation between the values at
    the ranks around q * (count - 1) (numpy's `method="linear"`), halves rounded up."""
    position = q * (count - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, count - 1)
    low, high = sorted_values[lo + below], sorted_values[lo + above]
    step = np.floor((high - low) * (position - below) + 0.5).astype(np.int64)
    return low + step


def grouped_stats(values: np.ndarray, group: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """count, sum, p50, p90 and max of int64 `values` per group 0..n-1 (groups with no
    value: count 0, the rest 0)."""
    count = np.bincount(group, minlength=n)
    total = np.zeros(n, dtype=np.int64)
    np.add.at(total, group, values)
    out = {"count": count, "sum": total}
    sorted_values = _sorted_within_groups(values, group)
    lo = np.concatenate([[0], np.cumsum(count)[:-1]])
    has = count > 0
    for key, q in (("p50", 0.5), ("p90", 0.9), ("max", 1.0)):
        col = np.zeros(n, dtype=np.int64)
        col[has] = linear_quantile(sorted_values, lo[has], count[has], q)
        out[key] = col
    return out


def _sorted_within_groups(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """int64 `values` in (group, value) order. Equal values need no order among
    themselves, so when (group, value) fits one int64 that key is sorted (numpy's
    fastest sort) and the values read back from it; else a lexsort."""
    if values.size == 0:
        return values.copy()
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    keys = (int(group.max()) + 1) * span
    if keys >= 1 << 62:
        return values[np.lexsort((values, group))]
    if keys <= 1 << 32:  # uint32 keys: half the bytes to sort, numpy's sort faster on them
        small = group.astype(np.uint32)
        small *= np.uint32(span)
        small += (values - lo).astype(np.uint32)
        small.sort()
        small %= np.uint32(span)
        return small.astype(np.int64) + lo
    key = np.sort(group.astype(np.int64) * span + (values - lo))
    return key % span + lo


def delay_rows(model: TraceModel, work: GpuWork, limit: int) -> tuple[list[LaunchDelayRow], int]:
    """The per-name distribution rows, most total delay first (at most `limit`), and the
    number of distinct names."""
    at = delay_sample(work)
    delay = work.start[at] - work.launch_start[at]
    launch_dur = work.launch_end[at] - work.launch_start[at]
    names = model.events["name"][work.rows[at]]
    uniq, group = unique_codes(names, len(model.names))
    d = grouped_stats(delay, group, uniq.size)
    c = grouped_stats(launch_dur, group, uniq.size)
    # Most total delay first; equal totals by name, not by the file's event order.
    order = np.lexsort((_text_rank(model, uniq), -d["sum"]))[:limit]
    rows: list[LaunchDelayRow] = []
    for g in order.tolist():
        n = int(d["count"][g])
        rows.append(
            {
                "name": model.names[int(uniq[g])],
                "count": n,
                "total_ns": int(d["sum"][g]),
                "mean_ns": round(int(d["sum"][g]) / n, 1),
                "p50_ns": int(d["p50"][g]),
                "p90_ns": int(d["p90"][g]),
                "max_ns": int(d["max"][g]),
                "launch_call_mean_ns": round(int(c["sum"][g]) / n, 1),
                "launch_call_p90_ns": int(c["p90"][g]),
            }
        )
    return rows, int(uniq.size)


def delay_outliers(model: TraceModel, work: GpuWork, top: int) -> list[LaunchOutlier]:
    """The `top` longest launch delays, with the times the trace view links to."""
    at = delay_sample(work)
    delay = work.start[at] - work.launch_start[at]
    if 0 < top < delay.size:  # only the `top` longest (and their ties) can come first
        longest = delay >= -np.partition(-delay, top - 1)[top - 1]
        at, delay = at[longest], delay[longest]
    ev = model.events
    # Longest first, then earliest; then by what the activity is (name, launch call,
    # device, stream), not by the file's event order.
    keys = (
        work.stream[at],
        work.device[at],
        _text_rank(model, ev["name"][work.launch[at]]),
        _text_rank(model, ev["name"][work.rows[at]]),
        work.start[at],
        -delay,
    )
    pick = at[np.lexsort(keys)[:top]]
    out: list[LaunchOutlier] = []
    for i in pick.tolist():
        stream = int(work.stream[i])
        out.append(
            {
                "name": model.names[int(ev["name"][work.rows[i]])],
                "launch_name": model.names[int(ev["name"][work.launch[i]])],
                "device": int(work.device[i]),
                "stream": stream if stream >= 0 else None,
                "start_us": float(to_us(work.start[i], work.origin_us)),
                "launch_start_us": float(to_us(work.launch_start[i], work.origin_us)),
                "delay_ns": int(work.start[i] - work.launch_start[i]),
                "launch_call_ns": int(work.launch_end[i] - work.launch_start[i]),
            }
        )
    return out


def _text_rank(model: TraceModel, codes: np.ndarray) -> np.ndarray:
    """Per name code, its rank among the given codes' names in text order."""
    uniq, inverse = unique_codes(codes, len(model.names))
    by_text = sorted(range(uniq.size), key=lambda i: model.names[int(uniq[i])])
    rank = np.empty(uniq.size, dtype=np.int64)
    rank[by_text] = np.arange(uniq.size)
    return rank[inverse]


def launch_delays_of(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """Launch delay (int64 ns) of each GPU activity row, -1 where it has none (no launch
    call, a row with unusable times, or a graph kernel after the replay's first)."""
    work = gpu_work(model)
    out = np.full(rows.size, -1, dtype=np.int64)
    if rows.size == 0 or work.rows.size == 0:
        return out
    order = np.argsort(work.rows, kind="stable")
    pos = np.minimum(np.searchsorted(work.rows[order], rows), order.size - 1)
    found = work.rows[order[pos]] == rows
    at = order[pos[found]]
    has = work.linked[at] & work.first_of_launch[at]
    out[np.flatnonzero(found)[has]] = work.start[at[has]] - work.launch_start[at[has]]
    return out


def grouped_delay(delay: np.ndarray, group: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group 0..n-1, the mean and p90 (ns, docs/metrics.md#percentiles) of the known
    delays (>= 0); NaN where a group has none."""
    known = delay >= 0
    stats = grouped_stats(delay[known], group[known], n)
    mean = np.full(n, np.nan)
    p90 = np.full(n, np.nan)
    has = stats["count"] > 0
    mean[has] = stats["sum"][has] / stats["count"][has]
    p90[has] = stats["p90"][has]
    return mean, p90
