"""Which host call put each GPU activity on its queue, in exact nanoseconds.

The launch call of a GPU activity (cat kernel, gpu_memcpy, gpu_memset: device-side events
only) is the runtime or driver call with the same correlation id (`common.launches_of`),
whatever its name: so AMD traces (`hipLaunchKernel`, `hipExtModuleLaunchKernel`, ...)
link as NVIDIA ones do. The names say what kind of call it was (`data/launch_apis.json`):
a graph launch's kernels all carry its one correlation id.

Times are int64 nanoseconds from `origin_us`, a whole microsecond at or before the first
event: the model keeps `ts` as float microseconds, and differences from a nearby whole
microsecond round back to the nanoseconds the file wrote (the model's float64 holds them
exactly for relative timestamps, 2024 on; epoch-microsecond files with ns fractions were
already rounded to 0.25 µs when decoded).
"""

from __future__ import annotations

import re
from functools import cache

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.rank_batch import RankBatch, bounds_of, one_rank, rank_of
from ...model.trace_model import TraceModel
from .common import complete_rows, gpu_device_ids, gpu_rows, launch_rows, launches_of, name_flags
from .rules import data_version, load
from .trusted_rows import drop_untrusted

FAMILIES = ("kernel_launch", "graph_launch", "memory", "synchronize")


@cache
def _families() -> dict[str, frozenset[str]]:
    raw = load("launch_apis")["families"]
    return {f: frozenset(raw[f]["nvidia"]) | frozenset(raw[f]["amd"]) for f in FAMILIES}


@cache
def _suffix() -> re.Pattern[str]:
    return re.compile(load("launch_apis")["suffix_pattern"])


def launch_apis_version() -> int:
    return data_version("launch_apis")


@cache
def _family_of_name() -> tuple[dict[str, str], int, frozenset[str]]:
    """Each API name's family (the first of FAMILIES that lists it), the length of the
    shortest name, and the names cut to that length."""
    out: dict[str, str] = {}
    for family, names in _families().items():
        for name in names:
            out.setdefault(name, family)
    shortest = min(map(len, out))
    return out, shortest, frozenset(name[:shortest] for name in out)


def launch_family(name: str) -> str | None:
    """The family of a host API call name (`kernel_launch`, `graph_launch`, `memory`,
    `synchronize`), or None for other calls."""
    family_of, shortest, heads = _family_of_name()
    # The suffix pattern strips the end of a name: an API name is how the name begins.
    # Most names (kernels, operators) begin otherwise and skip the pattern's search, which
    # tries every position of the name.
    if name[:shortest] not in heads:
        return None
    return family_of.get(_suffix().sub("", name))


# Nanosecond counts are exact in the float64 sums of `IntervalUnion` below 2**53 (104 days);
# times past that (a hostile `dur: 1e300`) are clipped there, and such activities dropped.
MAX_NS = float(2**53)


def to_ns(us: np.ndarray, origin_us: float | np.ndarray) -> np.ndarray:
    """Microseconds of the trace → int64 ns from `origin_us` (see the module's note)."""
    with np.errstate(over="ignore", invalid="ignore"):  # clipped just below
        ns = np.asarray(np.rint((np.asarray(us, dtype=np.float64) - origin_us) * 1000.0))
    np.clip(ns, -MAX_NS, MAX_NS, out=ns)  # infinities too
    ns[np.isnan(ns)] = 0.0  # (np.nan_to_num costs more than this whole pass)
    return ns.astype(np.int64)


def _durations_ns(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """int64 ns durations of rows that `_fits` kept."""
    return to_ns(model.events["dur"][rows], 0.0)


def _fits(model: TraceModel, rows: np.ndarray, origin_us: float | np.ndarray) -> np.ndarray:
    """Which rows have finite times whose ns from the origin stay below MAX_NS."""
    ev = model.events
    ts, dur = ev["ts"][rows].astype(np.float64), ev["dur"][rows].astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isfinite(ts) & np.isfinite(dur) & (np.abs(ts - origin_us) + dur < MAX_NS / 1000)


def to_us(ns: np.ndarray | int, origin_us: float) -> np.ndarray:
    """int64 ns from the origin → the trace's microseconds (for links into the trace view)."""
    return np.round(origin_us + np.asarray(ns, dtype=np.float64) / 1000.0, 3)


class GpuWork(msgspec.Struct, frozen=True):
    """Every GPU activity of the trace with finite times, sorted by start; per activity
    its launch call (row, or -1), and which of a launch call's activities started first."""

    origin_us: float
    rows: np.ndarray
    device: np.ndarray
    stream: np.ndarray
    start: np.ndarray  # int64 ns from origin_us
    end: np.ndarray
    launch: np.ndarray  # row of the launch call, -1 when none is linked
    launch_start: np.ndarray  # int64 ns; meaningful where launch >= 0
    launch_end: np.ndarray
    first_of_launch: np.ndarray  # bool: the earliest activity of its launch call
    graph: np.ndarray  # bool: launched by a graph launch
    is_kernel: np.ndarray  # bool: cat kernel (not memcpy/memset)

    @property
    def linked(self) -> np.ndarray:
        return self.launch >= 0


def gpu_work(model: TraceModel) -> GpuWork:
    """Memoised on the model (the one memo)."""
    return model.derived("_gpu_idle_work", lambda m: _gpu_work_of_ranks(m, one_rank(m), 0)[0])


def keep_gpu_work(model: TraceModel, work: GpuWork) -> None:
    """Keeps `work` as the model's: found for a batch of ranks and split back
    (`rank_batches.share_tables`), the same."""
    model.derived("_gpu_idle_work", lambda _: work)


def batch_gpu_work(batch: RankBatch) -> list[GpuWork]:
    """Each rank's GPU work from one pass over the batch's rows (kept with the batch's
    model): the same as `gpu_work` of each rank's own model (its origin, rows and
    devices its own)."""
    return batch.model.derived(
        "_rank_gpu_work",
        lambda m: _gpu_work_of_ranks(m, batch.first_rows, batch.device_stride),
    )


def _gpu_work_of_ranks(
    model: TraceModel, first_rows: np.ndarray, device_stride: int
) -> list[GpuWork]:
    """The GPU work of each rank of `model` (rank k: rows from `first_rows[k]`, its
    devices moved by k times `device_stride`)."""
    ev = model.events
    origins = _origins(model, first_rows)
    rows, rank = _sorted_rows(model, first_rows, origins)
    origin_of_row = float(origins[0]) if rank is None else origins[rank]
    start = to_ns(ev["ts"][rows], origin_of_row)
    calls = launch_rows(model)
    fitting = calls[_fits(model, calls, _per_row(origins, calls, first_rows))]
    launch = launches_of(model, rows, fitting)
    launch_start, launch_end = _launch_times(model, launch, origin_of_row)
    linked = launch >= 0
    is_graph = name_flags(model, lambda n: launch_family(n) == "graph_launch")
    graph = np.zeros(rows.size, dtype=bool)
    graph[linked] = is_graph[ev["name"][launch[linked]]]
    device = gpu_device_ids(model, rows)
    if device_stride and rank is not None:
        device = np.where(device >= 0, device - rank * device_stride, device)
    whole = GpuWork(
        origin_us=0.0,
        rows=rows,
        device=device,
        stream=model.column_at("stream", rows).astype(np.int64),
        start=start,
        end=start + _durations_ns(model, rows),
        launch=launch,
        launch_start=launch_start,
        launch_end=launch_end,
        first_of_launch=_first_of_launch(launch, start),
        graph=graph,
        is_kernel=ev["kind"][rows] == Kind.KERNEL,
    )
    return [
        _rank_part(whole, lo, hi, int(first), float(origin))
        for (lo, hi), first, origin in zip(
            bounds_of(rows, first_rows), first_rows.tolist(), origins.tolist()
        )
    ]


def _sorted_rows(
    model: TraceModel, first_rows: np.ndarray, origins: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    """The GPU rows whose times fit, by rank, then start (stable), and the rank of each
    (None: one rank)."""
    ts = model.events["ts"]
    rows = gpu_rows(model)
    if origins.size == 1:
        rows = rows[_fits(model, rows, float(origins[0]))]
        return rows[np.argsort(ts[rows], kind="stable")], None
    rank = rank_of(rows, first_rows)
    fits = _fits(model, rows, origins[rank])
    rows, rank = rows[fits], rank[fits]
    order = np.lexsort((ts[rows], rank))
    return rows[order], rank[order]


def _launch_times(
    model: TraceModel, launch: np.ndarray, origin_of_row: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per activity, its launch call's start and end (ns from its rank's origin; 0 where
    no call is linked)."""
    ev = model.events
    linked = launch >= 0
    launch_start = np.zeros(launch.size, dtype=np.int64)
    launch_end = np.zeros(launch.size, dtype=np.int64)
    if linked.any():
        at = launch[linked]
        origin = origin_of_row[linked] if isinstance(origin_of_row, np.ndarray) else origin_of_row
        launch_start[linked] = to_ns(ev["ts"][at], origin)
        launch_end[linked] = launch_start[linked] + _durations_ns(model, at)
    return launch_start, launch_end


def _origins(model: TraceModel, first_rows: np.ndarray) -> np.ndarray:
    """Per rank, the origin of its trusted events: a whole microsecond at or before the
    least start (0: none). One at ts 0 or hours off would push every time past what
    int64 ns holds (trace health, `trusted_rows.py`)."""
    ev = model.events
    counted = np.isfinite(ev["ts"])
    drop_untrusted(model, counted)
    if first_rows.size == 2:  # one rank: the least read in place (a copy was 7 MB at 925k rows)
        least = np.array([np.min(ev["ts"], where=counted, initial=np.inf)])
    else:
        ts = np.where(counted, ev["ts"], np.inf)
        bounds = first_rows.tolist()
        least = np.array([ts[lo:hi].min(initial=np.inf) for lo, hi in zip(bounds, bounds[1:])])
    return np.where(np.isfinite(least), np.floor(least), 0.0)


def _per_row(origins: np.ndarray, rows: np.ndarray, first_rows: np.ndarray) -> float | np.ndarray:
    """The origin of each of `rows`' ranks (one rank: its one origin)."""
    if origins.size == 1:
        return float(origins[0])
    return origins[rank_of(rows, first_rows)]


def _rank_part(whole: GpuWork, lo: int, hi: int, first: int, origin: float) -> GpuWork:
    """Entries [lo, hi) of `whole` (one rank's), its rows counted from its `first` row."""
    if lo == 0 and hi == whole.rows.size and first == 0:
        return msgspec.structs.replace(whole, origin_us=origin)
    launch = whole.launch[lo:hi]
    return GpuWork(
        origin_us=origin,
        rows=whole.rows[lo:hi] - first,
        device=whole.device[lo:hi],
        stream=whole.stream[lo:hi],
        start=whole.start[lo:hi],
        end=whole.end[lo:hi],
        launch=np.where(launch >= 0, launch - first, launch),
        launch_start=whole.launch_start[lo:hi],
        launch_end=whole.launch_end[lo:hi],
        first_of_launch=whole.first_of_launch[lo:hi],
        graph=whole.graph[lo:hi],
        is_kernel=whole.is_kernel[lo:hi],
    )


def _first_of_launch(launch: np.ndarray, start: np.ndarray) -> np.ndarray:
    """True for the earliest-starting activity of each launch call (all of a graph
    replay's kernels share one call); False for the rest and for unlinked activities."""
    out = np.zeros(launch.size, dtype=bool)
    linked = np.flatnonzero(launch >= 0)
    if linked.size:
        order = linked[np.lexsort((start[linked], launch[linked]))]
        first = np.concatenate([[True], launch[order][1:] != launch[order][:-1]])
        out[order[first]] = True
    return out


def sync_intervals(model: TraceModel, origin_us: float) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) ns of the calls in which the host blocked on the GPU: runtime/driver
    calls of the `synchronize` family and the profiler's own `cuda_sync` events."""
    ev = model.events
    calls = launch_rows(model)
    is_sync = name_flags(model, lambda n: launch_family(n) == "synchronize")
    rows = np.concatenate([calls[is_sync[ev["name"][calls]]], complete_rows(model, Kind.SYNC)])
    rows = rows[_fits(model, rows, origin_us)]
    start = to_ns(ev["ts"][rows], origin_us)
    return start, start + _durations_ns(model, rows)
