"""Counter tracks: GPU utilization (computed here, from kernel intervals), memory, and the
queue length of each GPU stream (`analysis/gpu_idle/queue.py`).

A counter answers a window with one value per pixel-wide bucket, run-length merged (a
step function `start[i] → value[i]` until the next start): the union of a device's
kernels gives its busy fraction per bucket in two binary searches; memory is the highest
total allocated (or reserved) in each bucket, carried forward through empty ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analysis.core.common import gather_ranges, gpu_device_ids
from ..analysis.core.devices import device_identity, memory_device_label
from ..analysis.core.intervals import IntervalUnion
from ..analysis.core.launches import gpu_work, to_us
from ..analysis.gpu_idle.queue import queue_series
from ..analysis.memory.series import device_levels
from ..model.categories import Kind
from ..model.trace_model import TraceModel

try:
    from . import _passes  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's passes give the same values
    _passes = None


@dataclass
class Counter:
    id: str
    label: str
    # "gpu_utilization", "memory_allocated", "memory_reserved", "gpu_queue_length", or a
    # recorded series' own name (`recorded_counters`)
    metric: str
    unit: str  # "fraction", "bytes", "count"; recorded series also "percent" or "value"
    device: int | None
    max_value: float
    union: IntervalUnion | None = None  # gpu_utilization
    times: np.ndarray | None = None  # memory and queue samples, sorted by time
    values: np.ndarray | None = None
    stream: int | None = None  # gpu_queue_length
    # Listed after every other track of the request (queue lengths came later: the
    # tracks before them keep their `sort`).
    listed_last: bool = False
    block_max: np.ndarray | None = None  # `block_maxima`, made on first use
    fine_max: np.ndarray | None = None  # `fine_maxima`, made on first use
    coarse: tuple[np.ndarray, ...] | None = None  # `coarse_copies`, made on first use
    # Whether a sample is -0.0 (made on first use): the compiled series then stands aside,
    # np.maximum's order of maxima being what picks 0.0 or -0.0 on a tie.
    negative_zero: bool | None = None


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
    out.extend(_memory_counters(model))
    out.extend(_queue_counters(model))
    return out


# What of a counter is kept on disk (`index_store`): its arrays, and its plain fields in
# JSON (the highest value among the arrays: JSON holds no NaN or infinity).
_UNION_ARRAYS = ("starts", "ends", "prefix")
_PLAIN = ("id", "label", "metric", "unit", "device", "stream", "listed_last")


def pack_counters(counters: list[Counter]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The counters as arrays (`c<i>.<field>`) and a JSON document (`index_store`)."""
    arrays = {"max_value": np.array([c.max_value for c in counters], dtype=np.float64)}
    for i, c in enumerate(counters):
        if c.union is not None:
            arrays.update({f"c{i}.union.{k}": getattr(c.union, k) for k in _UNION_ARRAYS})
        if c.times is not None and c.values is not None:
            arrays[f"c{i}.times"], arrays[f"c{i}.values"] = c.times, c.values
    return arrays, {"counters": [{k: getattr(c, k) for k in _PLAIN} for c in counters]}


def unpack_counters(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> list[Counter]:
    out = []
    for i, plain in enumerate(meta["counters"]):
        union = None
        if f"c{i}.union.starts" in arrays:
            union = IntervalUnion.of_merged(*(arrays[f"c{i}.union.{k}"] for k in _UNION_ARRAYS))
        counter = Counter(
            **{k: plain[k] for k in _PLAIN},
            max_value=float(arrays["max_value"][i]),
            union=union,
            times=arrays.get(f"c{i}.times"),
            values=arrays.get(f"c{i}.values"),
        )
        out.append(counter)
    return out


def _queue_counters(model: TraceModel) -> list[Counter]:
    """Per GPU stream, activities launched but not finished (step function in µs)."""
    work = gpu_work(model)
    out = []
    for queue in queue_series(work):
        where = device_identity(model, queue.device).label
        stream = queue.stream if queue.stream >= 0 else None
        out.append(
            Counter(
                f"gpu{queue.device}.stream{queue.stream}.queue",
                f"{where} stream {stream if stream is not None else '?'} queue length",
                "gpu_queue_length",
                "count",
                queue.device if queue.device >= 0 else None,
                float(queue.values.max()),
                times=to_us(queue.times, work.origin_us),
                values=queue.values.astype(np.float64),
                stream=stream,
                listed_last=True,
            )
        )
    return out


def _memory_counters(model: TraceModel) -> list[Counter]:
    """The Memory view's series (one rule: analysis/memory/series.py), GPUs first."""
    out: list[Counter] = []
    devices = sorted(device_levels(model), key=lambda d: (not d.is_gpu, d.device_type, d.device_id))
    for d in devices:
        where = memory_device_label(model, d.device_type, d.device_id, d.name)
        for values, word in ((d.allocated, "allocated"), (d.reserved, "reserved")):
            if values is None:
                continue
            did = d.device_id
            out.append(
                Counter(
                    f"mem.{d.device_type}.{did}.{word}"
                    if did >= 0
                    else f"mem.{d.device_type}.{word}",
                    f"{where} memory {word}",
                    f"memory_{word}",
                    "bytes",
                    did if did >= 0 else None,
                    float(values.max()),
                    times=d.ts,
                    values=values,
                )
            )
    return out


def counter_series(
    counter: Counter, t0: float, t1: float, buckets: int
) -> tuple[np.ndarray, np.ndarray]:
    """(starts, values) of the counter over [t0, t1) in `buckets` equal buckets, with
    runs of equal values merged."""
    width = (t1 - t0) / buckets
    compiled = _compiled_series(counter, t0, t1, buckets, width)
    if compiled is not None:
        return compiled
    edges = np.linspace(t0, t1, buckets + 1)
    if counter.union is not None:
        values = counter.union.covered(edges[:-1], edges[1:]) / width
        values = np.clip(values, 0.0, 1.0)
    else:
        assert counter.times is not None and counter.values is not None
        times, samples = counter.times, counter.values
        # The value in force at each bucket start, then the highest sample inside it
        # (a sample at an edge is inside the bucket it starts).
        at, before = sample_bounds(times, edges)
        values = np.where(before >= 0, samples[np.maximum(before, 0)], 0.0)
        held = np.flatnonzero(at[1:] > at[:-1])
        if held.size:
            highest = range_max(samples, block_maxima(counter), at[held], at[held + 1])
            values[held] = np.maximum(values[held], highest)
    keep = np.ones(values.size, dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return edges[:-1][keep], values[keep]


def _compiled_series(
    counter: Counter, t0: float, t1: float, buckets: int, width: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """`counter_series` in C (`_passes.c`: the same edges, values and runs, bit for bit;
    a window's four counters were ~40 % of a `trace` answer's CPU in numpy's small
    steps), or None where numpy's passes answer (no compiled helper, an empty union, a
    zero step, other dtypes)."""
    union, times, samples = counter.union, counter.times, counter.values
    if _passes is None or (t1 - t0) / buckets == 0:
        return None
    if union is not None:
        if union.starts.size == 0 or not _all_f64(union.starts, union.ends, union.prefix):
            return None
    elif times is None or samples is None or not _all_f64(times, samples):
        return None
    elif counter.negative_zero is None:
        counter.negative_zero = bool((np.signbit(samples) & (samples == 0)).any())
    if counter.negative_zero:
        return None
    edges = np.empty(buckets + 1)
    _passes.linspace(t0, t1, edges)
    values = np.empty(buckets)
    if union is not None:
        starts, ends = coarse_copies(counter)
        _passes.union_fraction(
            union.starts, union.ends, starts, ends, union.prefix, edges, width, values
        )
    else:
        fine, blocks = fine_maxima(counter), block_maxima(counter)
        (coarse,) = coarse_copies(counter)
        _passes.sample_levels(times, coarse, samples, fine, blocks, edges, values)
    starts = np.empty(buckets)
    runs = _passes.merge_runs(edges, values, starts, values)
    return starts[:runs], values[:runs]


COARSE = 64  # values apart in the coarse copies (as _passes.c)


def coarse_copies(counter: Counter) -> tuple[np.ndarray, ...]:
    """Every COARSE-th sample time, or interval start and end: the compiled series search
    these first (a bucket's search then reads a few cache lines, not one a probe)."""
    if counter.coarse is None:
        union = counter.union
        searched = [union.starts, union.ends] if union is not None else [counter.times]
        counter.coarse = tuple(np.ascontiguousarray(a[::COARSE]) for a in searched if a is not None)
    return counter.coarse


def _all_f64(*arrays: np.ndarray) -> bool:
    return all(a.dtype == np.float64 and a.flags.c_contiguous for a in arrays)


def sample_bounds(times: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per edge: the first sample at or after it, and the last sample at or before it
    (-1: none), searched among the window's samples only, the second found from the first
    (it differs only where samples fall on the edge)."""
    lo, hi = np.searchsorted(times, [edges[0], edges[-1]], side="left").tolist()
    at = lo + np.searchsorted(times[lo:hi], edges, side="left")
    at[-1] = hi
    after = at[:-1].copy()
    while True:
        on_edge = np.flatnonzero(after < times.size)
        on_edge = on_edge[times[after[on_edge]] == edges[:-1][on_edge]]
        if on_edge.size == 0:
            return at, after - 1
        after[on_edge] += 1


BLOCK = 64  # samples a block (as _passes.c): a wide bucket reads its blocks' maxima


def block_maxima(counter: Counter) -> np.ndarray:
    """The highest sample of each BLOCK samples (the last block may be shorter)."""
    if counter.block_max is None:
        counter.block_max = _maxima_of_blocks(counter, BLOCK)
    return counter.block_max


FINE = 8  # samples a fine block (as _passes.c): the compiled series' partial blocks


def fine_maxima(counter: Counter) -> np.ndarray:
    """The highest sample of each FINE samples (the last block may be shorter)."""
    if counter.fine_max is None:
        counter.fine_max = _maxima_of_blocks(counter, FINE)
    return counter.fine_max


def _maxima_of_blocks(counter: Counter, size: int) -> np.ndarray:
    """The highest sample of each `size` samples of the counter."""
    assert counter.values is not None
    return np.maximum.reduceat(counter.values, np.arange(0, counter.values.size, size))


def _segment_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(values[lo_i:hi_i]) of each segment; -inf for an empty one."""
    out = np.full(lo.size, -np.inf)
    full = np.flatnonzero(hi > lo)
    if full.size:
        picked = values[gather_ranges(lo[full], hi[full])]
        starts = np.concatenate([[0], np.cumsum(hi[full] - lo[full])[:-1]])
        out[full] = np.maximum.reduceat(picked, starts)
    return out


def range_max(
    samples: np.ndarray, blocks: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """max(samples[lo_i:hi_i]) of each non-empty range: its whole blocks' maxima, and
    the samples of its partial blocks at either end (fewer than 2 * BLOCK each)."""
    first = -(-lo // BLOCK)  # the range's first whole block
    stop = hi // BLOCK  # one past its last whole block
    whole = stop > first
    head_end = np.where(whole, first * BLOCK, hi)
    tail_start = np.where(whole, stop * BLOCK, hi)
    out = np.maximum(_segment_max(samples, lo, head_end), _segment_max(samples, tail_start, hi))
    inner = np.flatnonzero(whole)
    out[inner] = np.maximum(out[inner], _segment_max(blocks, first[inner], stop[inner]))
    return out
