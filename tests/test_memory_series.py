"""One memory series rule: the Memory view and the trace view's memory counters derive each
device's allocated/reserved levels from `analysis/memory/series.py`, so they agree. Each
test is a case where the two used to differ (the counters had their own copy)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from builders import CPU_PID, CPU_TID, TraceBuilder
from kinetoscope.analysis.memory import view as mem
from kinetoscope.analysis.memory.series import device_levels
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.trace_view.counters import build_counters
from kinetoscope.trace_view.workers import WorkerTrace


def memory_event(b: TraceBuilder, ts: Any, nbytes: int, addr: int, **totals: int) -> None:
    """A GPU0 memory event carrying only the totals given (`Total Allocated` etc.)."""
    args = {"Device Type": 1, "Device Id": 0, "Bytes": nbytes, "Addr": addr}
    args.update({name.replace("_", " ").title(): v for name, v in totals.items()})
    event = {"ph": "i", "s": "t", "name": "[memory]", "pid": CPU_PID, "tid": CPU_TID}
    if ts is not None:
        event["ts"] = ts
    b.events.append({**event, "args": args})


def memory_counters(model: TraceModel) -> dict[str, tuple[list[float], list[float]]]:
    return {
        c.id: (c.times.tolist(), c.values.tolist())
        for c in build_counters(model)
        if c.times is not None and c.values is not None
    }


def curve(model: TraceModel, device: str) -> dict[str, Any]:
    return mem.memory_curve(model, {"device": device})


def test_a_partly_missing_total_allocated_gives_one_computed_series(tmp_path: Path) -> None:
    """One event without `Total Allocated`: the whole series is the running sum of Bytes in
    both views (the counters used to keep only the events that carried the total, so the
    trace view drew a different curve from the Memory view)."""
    b = TraceBuilder()
    b.op("x", 0, 100)
    memory_event(b, 10, 100, 0xA, total_allocated=100, total_reserved=512)
    memory_event(b, 20, 50, 0xB, total_reserved=512)  # no Total Allocated
    memory_event(b, 30, -100, 0xA, total_allocated=50, total_reserved=512)
    model = b.model(tmp_path)
    gpu = curve(model, "GPU0")
    assert gpu["allocated_bytes"] == [100.0, 150.0, 50.0]
    counters = memory_counters(model)
    assert counters["mem.1.0.allocated"] == (gpu["t_us"], gpu["allocated_bytes"])
    assert mem.memory(model, {})["devices"][0]["allocated_source"] == "computed"


def test_a_flat_zero_total_reserved_is_unknown_on_a_gpu_too(tmp_path: Path) -> None:
    """`Total Reserved` 0 throughout means the allocator does not track it: no reserved
    curve in either view (the Memory view used to draw a zero line on GPUs while the
    counters left the track out)."""
    b = TraceBuilder()
    b.op("x", 0, 100)
    b.memory(10, 100, 0xA, total_allocated=100, total_reserved=0)
    b.memory(20, -100, 0xA, total_allocated=0, total_reserved=0)
    model = b.model(tmp_path)
    view = mem.memory(model, {})
    (gpu,) = view["devices"]
    assert gpu["reserved_known"] is False and gpu["peak_reserved_bytes"] is None
    assert curve(model, "GPU0")["reserved_bytes"] is None
    assert set(memory_counters(model)) == {"mem.1.0.allocated"}
    assert "GPU 0: the trace has no Total Reserved; reserved is unknown" in view["notes"]


def test_amd_gpu_memory_counters_come_before_the_cpu(tmp_path: Path) -> None:
    """HIP devices (type 6) are GPUs in the counters' order too (it used to put only CUDA
    first, so an AMD GPU's memory tracks followed the CPU's)."""
    b = TraceBuilder()
    b.op("x", 0, 100)
    b.memory(10, 64, 0xA, total_allocated=64, device_type=0, device_id=-1)
    b.memory(20, 128, 0xB, total_allocated=128, total_reserved=1024, device_type=6)
    model = b.model(tmp_path)
    endpoint = ENDPOINTS["tracks"]
    tracks = endpoint.of_traces([WorkerTrace(None, model)], endpoint.decode({}))["tracks"]
    ids = [t["id"] for t in tracks if t["id"].startswith("mem.")]
    assert ids == ["mem.6.0.allocated", "mem.6.0.reserved", "mem.0.allocated"]


def test_an_event_without_a_timestamp_is_left_out_of_both(tmp_path: Path) -> None:
    """It cannot be placed in time: both views leave it out of the levels."""
    b = TraceBuilder()
    b.op("x", 0, 100)
    b.memory(10, 100, 0xA, total_allocated=100, total_reserved=512)
    memory_event(b, None, 900, 0xC, total_allocated=1000, total_reserved=2048)
    b.memory(30, -100, 0xA, total_allocated=0, total_reserved=512)
    model = b.model(tmp_path)
    if np.isfinite(model.events["ts"][model.memory["row"]]).all():
        return  # the decoder dropped the event itself: nothing left to disagree on
    (levels,) = device_levels(model)
    assert levels.ts.tolist() == [10.0, 30.0]
    gpu = curve(model, "GPU0")
    assert gpu["peak_allocated_bytes"] == 100.0 and gpu["peak_reserved_bytes"] == 512.0
    assert memory_counters(model)["mem.1.0.reserved"] == ([10.0, 30.0], [512.0, 512.0])
