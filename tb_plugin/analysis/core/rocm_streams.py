"""What a ROCm trace's GPU `stream` ids are. Kineto's rocprofiler path named each kernel
and copy by its HSA hardware queue until kineto #1424 (June 2026): HIP streams beyond the
device's queues (GPU_MAX_HW_QUEUES, default 4) share one, so a "stream" there is a queue
holding several streams' work. Since #1424 the id is the HIP stream (a small per-device
index), and since #1425 each GPU activity also carries its queue as `hsa_queue`; the
roctracer path (removed in #1419) wrote queue ids as well. So an AMD trace whose GPU
activities carry no `hsa_queue` has queue ids (the few days between #1424 and #1425
excepted: told apart by nothing in the file)."""

from __future__ import annotations

from typing import Union

import msgspec

from ...model.trace_model import TraceModel
from .common import gpu_rows
from .devices import trace_vendor

_SAMPLE = 256  # GPU activities read: libkineto writes `hsa_queue` on every one or none


class _Queue(msgspec.Struct, gc=False):
    hsa_queue: Union[int, None] = None


def stream_ids_are_queues(model: TraceModel) -> bool:
    """Whether the trace's GPU stream ids are HSA queues (an AMD trace without `hsa_queue`)."""
    return bool(model.derived("_rocm_stream_ids_are_queues", _queues))


def _queues(model: TraceModel) -> bool:
    if trace_vendor(model) != "amd":
        return False
    rows = gpu_rows(model)
    if rows.size == 0:
        return False
    return not any(a.hsa_queue is not None for a in model.args_of(rows[:_SAMPLE], _Queue))
