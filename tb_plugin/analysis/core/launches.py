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


def to_ns(us: np.ndarray, origin_us: float) -> np.ndarray:
    """Microseconds of the trace → int64 ns from `origin_us` (see the module's note)."""
    with np.errstate(over="ignore", invalid="ignore"):  # clipped just below
        ns = np.asarray(np.rint((np.asarray(us, dtype=np.float64) - origin_us) * 1000.0))
    np.clip(ns, -MAX_NS, MAX_NS, out=ns)  # infinities too
    ns[np.isnan(ns)] = 0.0  # (np.nan_to_num costs more than this whole pass)
    return ns.astype(np.int64)


def _durations_ns(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """int64 ns durations of rows that `_fits` kept."""
    return to_ns(model.events["dur"][rows], 0.0)


def _fits(model: TraceModel, rows: np.ndarray, origin_us: float) -> np.ndarray:
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
    return model.derived("_gpu_idle_work", _build_gpu_work)


def _build_gpu_work(model: TraceModel) -> GpuWork:
    ev = model.events
    # The origin of the trusted events: one at ts 0 or hours off would push every time
    # past what int64 ns holds (trace health, `trusted_rows.py`).
    counted = np.isfinite(ev["ts"])
    drop_untrusted(model, counted)
    # Their least start read in place (a copy of the starts was 7 MB at 925k rows).
    least = np.min(ev["ts"], where=counted, initial=np.inf)
    origin = float(np.floor(least)) if counted.any() else 0.0
    rows = gpu_rows(model)
    rows = rows[_fits(model, rows, origin)]
    rows = rows[np.argsort(ev["ts"][rows], kind="stable")]
    start = to_ns(ev["ts"][rows], origin)
    end = start + _durations_ns(model, rows)
    calls = launch_rows(model)
    launch = launches_of(model, rows, calls[_fits(model, calls, origin)])
    linked = launch >= 0
    launch_start = np.zeros(rows.size, dtype=np.int64)
    launch_end = np.zeros(rows.size, dtype=np.int64)
    if linked.any():
        at = launch[linked]
        launch_start[linked] = to_ns(ev["ts"][at], origin)
        launch_end[linked] = launch_start[linked] + _durations_ns(model, at)
    is_graph = name_flags(model, lambda n: launch_family(n) == "graph_launch")
    graph = np.zeros(rows.size, dtype=bool)
    graph[linked] = is_graph[ev["name"][launch[linked]]]
    return GpuWork(
        origin_us=origin,
        rows=rows,
        device=gpu_device_ids(model, rows),
        stream=model.column_at("stream", rows).astype(np.int64),
        start=start,
        end=end,
        launch=launch,
        launch_start=launch_start,
        launch_end=launch_end,
        first_of_launch=_first_of_launch(launch, start),
        graph=graph,
        is_kernel=ev["kind"][rows] == Kind.KERNEL,
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
