"""Two producer bugs of 2026 that torch's validator does not catch, and that hide kernels
in every viewer:

- a kernel whose recorded end runs past the next kernel's start on its stream (seen on
  MI355 ROCm traces: the first kernel's duration is wrong, and the one after it is drawn
  under it). Programmatic Dependent Launch (Hopper and later) overlaps kernels of one
  stream on purpose: the next kernel launched with the extended API (`cudaLaunchKernelEx*`,
  `cuLaunchKernelEx`, the only way to ask for it) on a device of compute capability 9 or
  more may be one; such overlaps, and those whose next kernel has no recorded launch
  (nothing tells), are counted apart (`kernel_overlap_maybe_pdl`), not as the bug;
- windows where kernels stop being recorded while launches go on: a run of at least
  MISSING_RUN kernel launch calls, one after another in time, none linked to a kernel,
  with linked ones before and after it (the GPU ran work the trace does not hold: every
  GPU number is low there). A trace with no kernel at all (CUPTI's range profiler, GPU
  activities off) has no such window, nor does the end of a profile (work still queued
  when the profiler stopped)."""

from __future__ import annotations

import numpy as np

from ....model.categories import Kind
from ....model.trace_model import TraceModel
from ..common import complete_rows, launch_rows, launches_of, name_flags
from ..launches import launch_family
from .checks import NEST_TOLERANCE_US, Finding

MISSING_RUN = 50
_NONE = np.empty(0, dtype=np.int64)


class Overruns:
    """The kernels whose end runs past the next one's start on their stream, split by
    whether the next one may be a Programmatic Dependent Launch."""

    def __init__(self, model: TraceModel) -> None:
        kernels = complete_rows(model, Kind.KERNEL)
        ev = model.events
        device = model.column_at("device", kernels).astype(np.int64)
        stream = model.column_at("stream", kernels).astype(np.int64)
        start = ev["ts"][kernels]
        end = start + ev["dur"][kernels]
        order = np.lexsort((start, stream, device))
        kernels, device, stream = kernels[order], device[order], stream[order]
        start, end = start[order], end[order]
        same = (device[1:] == device[:-1]) & (stream[1:] == stream[:-1])
        over = np.flatnonzero(same & (end[:-1] > start[1:] + NEST_TOLERANCE_US))
        launched = launches_of(model, kernels[over + 1]) >= 0
        maybe = _maybe_pdl(model, kernels[over + 1], device[over + 1])
        self.bug = Finding(np.sort(kernels[over[launched & ~maybe]]))
        why = None
        if over.size and not launched.any():
            why = (
                f"{over.size} kernels run past the next one's start on their stream, and no "
                "launch of those is recorded (an accelerator whose events are not launched "
                "kernels): nothing tells an overlap asked for from a wrong end"
            )
        self.maybe_pdl = Finding(np.sort(kernels[over[launched & maybe]]), unknown=why)


def overruns(model: TraceModel) -> Overruns:
    return model.derived("_health_overruns", Overruns)


def _is_extended_launch(name: str) -> bool:
    return "LaunchKernelEx" in name


def _maybe_pdl(model: TraceModel, nxt: np.ndarray, device: np.ndarray) -> np.ndarray:
    """Per overlapped kernel with a recorded launch: launched with the extended API on a
    Hopper-or-later device: it may have been launched early on purpose."""
    if nxt.size == 0:
        return np.zeros(0, dtype=bool)
    launch = launches_of(model, nxt)
    known = launch >= 0
    extended = np.zeros(nxt.size, dtype=bool)
    names = model.events["name"][launch[known]]
    extended[known] = name_flags(model, _is_extended_launch)[names]
    return extended & _hopper_or_later(model, device)


def _hopper_or_later(model: TraceModel, device: np.ndarray) -> np.ndarray:
    """Per device id: compute capability 9 or more, or not said (NVIDIA's `computeMajor`
    in `deviceProperties`); never on AMD (no such launch)."""
    majors = {}
    for p in model.device_properties():
        if isinstance(p.get("id"), int) and isinstance(p.get("computeMajor"), int):
            majors[p["id"]] = p["computeMajor"]
    return np.array([majors.get(int(d), 9) >= 9 for d in device.tolist()], dtype=bool)


def _launches_kernels(name: str) -> bool:
    return launch_family(name) in ("kernel_launch", "graph_launch")


def kernels_not_recorded(model: TraceModel) -> Finding:
    calls = launch_rows(model)
    calls = calls[name_flags(model, _launches_kernels)[model.events["name"][calls]]]
    kernels = complete_rows(model, Kind.KERNEL)
    if calls.size < MISSING_RUN or kernels.size == 0:
        return Finding(_NONE)
    linked_calls = launches_of(model, kernels)
    linked = np.isin(calls, linked_calls[linked_calls >= 0])
    order = np.argsort(model.events["ts"][calls], kind="stable")
    calls, linked = calls[order], linked[order]
    edges = np.diff(np.concatenate([[1], linked.astype(np.int8), [1]]))
    run_start = np.flatnonzero(edges == -1)  # first orphan of each run
    run_end = np.flatnonzero(edges == 1)  # one past its last
    inside = (run_start > 0) & (run_end < calls.size)  # linked calls on both sides
    long = (run_end - run_start >= MISSING_RUN) & inside
    if not long.any():
        return Finding(_NONE)
    rows = np.concatenate([calls[a:b] for a, b in zip(run_start[long], run_end[long])])
    return Finding(np.sort(rows))
