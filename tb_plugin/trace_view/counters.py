"""Counter tracks: GPU utilization (computed here, from kernel intervals) and memory.

A counter answers a window with one value per pixel-wide bucket, run-length merged (a
step function `start[i] → value[i]` until the next start): the union of a device's
kernels gives its busy fraction per bucket in two binary searches; memory is the highest
total allocated (or reserved) in each bucket, carried forward through empty ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.common import gpu_device_ids
from ..analysis.devices import device_identity, gpu_of_memory_device
from ..analysis.intervals import IntervalUnion
from ..analysis.memory.index import device_label
from ..store.categories import Kind
from ..store.model import TraceModel


def _memory_device_label(model: TraceModel, device_type: int, device_id: int) -> str:
    """GPUs (CUDA and HIP) by their one identity; the CPU and other devices by the Memory
    view's names."""
    gpu = gpu_of_memory_device(model, device_type, device_id)
    return (
        device_identity(model, gpu).label
        if gpu is not None
        else device_label(device_type, device_id)
    )


@dataclass
class Counter:
    id: str
    label: str
    metric: str  # "gpu_utilization", "memory_allocated", "memory_reserved"
    unit: str  # "fraction" or "bytes"
    device: int | None
    max_value: float
    union: IntervalUnion | None = None  # gpu_utilization
    times: np.ndarray | None = None  # memory samples, sorted by time
    values: np.ndarray | None = None


def build_counters(model: TraceModel) -> list[Counter]:
    ev = model.events
    out: list[Counter] = []
    kernels = model.complete_rows(Kind.KERNEL)
    if kernels.size:
        devices = gpu_device_ids(model, kernels)
        starts = ev["ts"][kernels]
        ends = starts + ev["dur"][kernels]
        for dev in sorted(set(devices.tolist())):
            mine = devices == dev
            union = IntervalUnion(starts[mine], ends[mine])
            label = f"{device_identity(model, int(dev)).label} utilization"
            out.append(
                Counter(
                    f"gpu{dev}.util" if dev >= 0 else "gpu.util",
                    label,
                    "gpu_utilization",
                    "fraction",
                    dev if dev >= 0 else None,
                    1.0,
                    union=union,
                )
            )
    mem = model.memory
    if mem["row"].size:
        ts = ev["ts"][mem["row"]]
        pairs = sorted(
            set(zip(mem["device_type"].tolist(), mem["device_id"].tolist())),
            key=lambda p: (p[0] != 1, p),  # GPUs first
        )
        for dtype, did in pairs:
            mine = (mem["device_type"] == dtype) & (mem["device_id"] == did)
            where = _memory_device_label(model, dtype, did)
            for column, metric in (
                ("total_allocated", "memory_allocated"),
                ("total_reserved", "memory_reserved"),
            ):
                values = mem[column][mine]
                ok = np.isfinite(values) & np.isfinite(ts[mine])
                if metric == "memory_allocated" and not ok.any():
                    values, ok = _allocated_from_deltas(ts[mine], mem["bytes"][mine])
                if not ok.any() or (metric == "memory_reserved" and not np.any(values[ok] > 0)):
                    continue
                times = ts[mine][ok]
                order = np.argsort(times, kind="stable")
                word = metric.split("_")[1]
                out.append(
                    Counter(
                        f"mem.{dtype}.{did}.{word}" if did >= 0 else f"mem.{dtype}.{word}",
                        f"{where} memory {word}",
                        metric,
                        "bytes",
                        did if did >= 0 else None,
                        float(values[ok].max()),
                        times=times[order],
                        values=values[ok][order].astype(np.float64),
                    )
                )
    return out


def _allocated_from_deltas(ts: np.ndarray, nbytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Traces before 2022 have no `Total Allocated`: sum the (de)allocations in time order,
    from the lowest point reached (memory held before profiling started is unknown)."""
    ok = np.isfinite(ts) & np.isfinite(nbytes)
    values = np.full(ts.shape, np.nan)
    rows = np.flatnonzero(ok)
    order = rows[np.argsort(ts[rows], kind="stable")]
    running = np.cumsum(nbytes[order])
    if running.size:
        running -= min(0.0, float(running.min()))
    values[order] = running
    return values, ok


def counter_series(
    counter: Counter, t0: float, t1: float, buckets: int
) -> tuple[np.ndarray, np.ndarray]:
    """(starts, values) of the counter over [t0, t1) in `buckets` equal buckets, with
    runs of equal values merged."""
    edges = np.linspace(t0, t1, buckets + 1)
    width = (t1 - t0) / buckets
    if counter.union is not None:
        values = counter.union.covered(edges[:-1], edges[1:]) / width
        values = np.clip(values, 0.0, 1.0)
    else:
        assert counter.times is not None and counter.values is not None
        times, samples = counter.times, counter.values
        # The value in force at each bucket start, then the highest sample inside it.
        before = np.searchsorted(times, edges[:-1], side="right") - 1
        values = np.where(before >= 0, samples[np.maximum(before, 0)], 0.0)
        lo = int(np.searchsorted(times, t0, side="left"))
        hi = int(np.searchsorted(times, t1, side="left"))
        if hi > lo:
            which = np.minimum(((times[lo:hi] - t0) / width).astype(np.int64), buckets - 1)
            first = np.flatnonzero(np.concatenate([[True], which[1:] != which[:-1]]))
            highest = np.maximum.reduceat(samples[lo:hi], first)
            values[which[first]] = np.maximum(values[which[first]], highest)
    keep = np.ones(values.size, dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return edges[:-1][keep], values[keep]
