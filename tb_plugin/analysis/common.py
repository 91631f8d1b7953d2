"""Small helpers every view uses: name predicates over the interned table, GPU↔launch links."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..store.categories import GPU_ACTIVITY_KINDS, LAUNCH_KINDS
from ..store.model import TraceModel


def name_flags(model: TraceModel, predicate: Callable[[str], bool]) -> np.ndarray:
    """predicate over the interned names: one call per distinct name, not per event."""
    return np.fromiter((predicate(n) for n in model.names), dtype=bool, count=len(model.names))


def rows_named(model: TraceModel, rows: np.ndarray, predicate: Callable[[str], bool]) -> np.ndarray:
    """The subset of `rows` whose name satisfies `predicate`."""
    if rows.size == 0:
        return rows
    flags = name_flags(model, predicate)
    return rows[flags[model.events["name"][rows]]]


def ends(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    ev = model.events
    return ev["ts"][rows] + ev["dur"][rows]


def gpu_rows(model: TraceModel) -> np.ndarray:
    return model.complete_rows(*GPU_ACTIVITY_KINDS)


def launch_rows(model: TraceModel) -> np.ndarray:
    return model.complete_rows(*LAUNCH_KINDS)


def launches_of(model: TraceModel, gpu: np.ndarray, launches: np.ndarray) -> np.ndarray:
    """For each GPU activity row, the row of the runtime/driver call that launched it
    (same `correlation`), or -1."""
    corr = model.events["correlation"]
    launch_corr = corr[launches]
    valid = launch_corr >= 0
    launches, launch_corr = launches[valid], launch_corr[valid]
    order = np.argsort(launch_corr, kind="stable")
    sorted_corr = launch_corr[order]
    gpu_corr = corr[gpu]
    pos = np.searchsorted(sorted_corr, gpu_corr)
    pos_clipped = np.minimum(pos, max(sorted_corr.size - 1, 0))
    found = (sorted_corr.size > 0) & (gpu_corr >= 0)
    if sorted_corr.size:
        found &= sorted_corr[pos_clipped] == gpu_corr
    out = np.full(gpu.shape, -1, dtype=np.int64)
    out[found] = launches[order[pos_clipped[found]]]
    return out


def gpu_device_ids(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """Device of GPU rows: the `device` arg, else the pid when it is a small integer
    (2020-21 traces put the device id in pid)."""
    dev = model.events["device"][rows].astype(np.int64)
    missing = dev < 0
    if missing.any():
        pid_values = np.array(
            [p if isinstance(p, int) and 0 <= p < 4096 else -1 for p in model.pids], dtype=np.int64
        )
        dev[missing] = pid_values[model.events["pid"][rows[missing]]]
    return dev


def thread_keys(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """One int per (pid, tid) of `rows`; a pid or tid written as "123" and as 123 is one
    thread (2021 traces wrote op tids as strings and memory-event tids as numbers)."""
    pid_canon = _canonical(model.pids)
    tid_canon = _canonical(model.tids)
    ev = model.events
    width = np.int64(max(len(model.tids), 1))
    return pid_canon[ev["pid"][rows]] * width + tid_canon[ev["tid"][rows]]


def _canonical(values: list[object]) -> np.ndarray:
    first: dict[str, int] = {}
    out = np.zeros(max(len(values), 1), dtype=np.int64)
    for i, v in enumerate(values):
        out[i] = first.setdefault(str(v), i)
    return out
