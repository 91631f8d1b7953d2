"""Each device's allocated and reserved memory over time: the one rule the Memory view and
the trace view's memory counters share, so both draw the same curves.

A device is a (`Device Type`, `Device Id`) pair of the `[memory]` instants; its series is
its events in time order (file order breaks ties), the level after each.
- Events without a timestamp are left out: they cannot be placed on a time axis.
- Allocated: `Total Allocated` as the trace says when every event carries it. Otherwise
  (torch < 1.10 carries none) the running sum of `Bytes`, raised by the smallest constant
  that keeps it non-negative (frees of memory allocated before the recording started), so
  it is a lower bound; a series is never half one and half the other.
- Reserved: `Total Reserved` when every event carries it and it is not zero throughout;
  otherwise unknown. A flat zero means the allocator does not track it (the CPU's never
  does), not that nothing was reserved.
- CUDA and HIP (AMD) devices are both GPUs.
"""

from __future__ import annotations

import msgspec
import numpy as np

from ...model.categories import DEVICE_PREFIXES, GPU_TYPES
from ...model.trace_model import TraceModel
from ..core.common import distinct


class DeviceLevels(msgspec.Struct):
    name: str  # the key requests name the device by ("GPU0", "CPU"), unique in the trace
    device_type: int
    device_id: int
    events: np.ndarray  # indices into model.memory, in time order
    ts: np.ndarray
    nbytes: np.ndarray
    allocated: np.ndarray  # level after each event
    reserved: np.ndarray | None  # None: the trace does not say
    allocated_source: str  # "trace" or "computed"
    baseline_bytes: float  # added to the running sum when computed

    @property
    def is_gpu(self) -> bool:
        return self.device_type in GPU_TYPES


def device_label(device_type: int, device_id: int) -> str:
    if device_type == 0:
        return "CPU"
    prefix = DEVICE_PREFIXES.get(device_type)
    if prefix is not None and device_id >= 0:
        return f"{prefix}{device_id}"
    return f"device type {device_type} #{device_id}"


def device_levels(model: TraceModel) -> list[DeviceLevels]:
    """Every device with timed memory events: the CPU first, then GPUs, then the others."""
    return model.derived("_memory_levels", _build)


def _build(model: TraceModel) -> list[DeviceLevels]:
    mem = model.memory
    ts = model.events["ts"][mem["row"]]
    timed = np.flatnonzero(np.isfinite(ts))
    dtype = mem["device_type"][timed].astype(np.int64)
    did = mem["device_id"][timed].astype(np.int64)
    key = (dtype << 32) | ((did + 1) & 0xFFFFFFFF)
    devices: list[DeviceLevels] = []
    # The few devices found by numpy's hashing, each one's events by a pass over the keys
    # (no inverse: numpy sorts every key to find it).
    for group_key in distinct(key).tolist():
        dev_type = int(group_key >> 32)
        dev_id = int(group_key & 0xFFFFFFFF) - 1
        if dev_id >= 2**31 - 1:
            dev_id -= 2**32
        members = timed[key == group_key]
        devices.append(_levels(mem, ts, members, dev_type, dev_id))
    _unique_names(devices)
    devices.sort(key=lambda d: (d.device_type != 0, not d.is_gpu, d.device_type, d.device_id))
    return devices


def _unique_names(devices: list[DeviceLevels]) -> None:
    seen: dict[str, int] = {}
    for d in devices:
        seen[d.name] = seen.get(d.name, 0) + 1
    for d in devices:
        if seen[d.name] > 1 and d.device_type not in (0, 1):
            d.name = f"device type {d.device_type} #{d.device_id}"


def _levels(
    mem: dict[str, np.ndarray], ts: np.ndarray, members: np.ndarray, dev_type: int, dev_id: int
) -> DeviceLevels:
    order = members[np.argsort(ts[members], kind="stable")]  # file order breaks ties
    nbytes = np.nan_to_num(mem["bytes"][order], nan=0.0)
    total_alloc = mem["total_allocated"][order]
    total_res = mem["total_reserved"][order]
    baseline = 0.0
    if not np.isnan(total_alloc).any():
        allocated = np.asarray(total_alloc, dtype=np.float64)
        source = "trace"
    else:
        running = np.cumsum(nbytes)
        baseline = max(0.0, -float(running.min()))
        allocated = running + baseline
        source = "computed"
    reserved = None
    if not np.isnan(total_res).any() and total_res.any():
        reserved = np.asarray(total_res, dtype=np.float64)
    return DeviceLevels(
        name=device_label(dev_type, dev_id),
        device_type=dev_type,
        device_id=dev_id,
        events=order,
        ts=ts[order],
        nbytes=nbytes,
        allocated=allocated,
        reserved=reserved,
        allocated_source=source,
        baseline_bytes=baseline,
    )
