"""The Kernels view's wire types: its query parameters and its response (the TypeScript
types and the docs' examples are checked against them)."""

from __future__ import annotations

from typing import Literal, TypedDict

from ..core.replay_ops import GraphReplaySummary
from ..core.roofline.metrics import Roof, RooflineFields
from ..core.source_frames import SourceFrame


class KernelsParams(TypedDict, total=False):
    group_by: Literal["name", "op"]
    device: int
    stream: int


class _KernelRowBase(RooflineFields):
    name: str
    device: int | None
    stream: int | None
    calls: int
    total_us: float
    mean_us: float
    min_us: float
    max_us: float
    blocks_per_sm: float | None
    occupancy_pct: float | None
    registers_per_thread: int | None
    shared_memory: int | None
    grid: list[int] | None
    block: list[int] | None
    tensor_cores_used: bool | None
    op_tensor_core_eligible: bool
    work: str
    launch_delay_mean_us: float | None
    launch_delay_p90_us: float | None
    priority: int | None  # the longest call's stream priority (CUDA 13.1+ traces)
    occupancy_limited_by: str | None  # the longest call's occupancy limit ("REGS|SMEM")
    queue_mean_us: float | None  # queued -> start, where `queued` is on the file's clock
    graph_annotations: list[str] | None  # CUDA-graph annotations of its calls, most time first


class KernelRow(_KernelRowBase, total=False):
    op_name: str | None  # only with group_by=op: the launching op, None when none did
    replayed: bool  # only with group_by=op: the calls ran in a CUDA/HIP graph replay
    fused_ops: list[str]  # only for Inductor kernels: the aten ops fused in it
    fused_ops_from: str  # only for Inductor kernels: "wrapper" or "kernel_name"
    wrapper_unread: str | None  # only for Inductor kernels: why the wrapper was not read
    source: list[SourceFrame]  # only for Inductor kernels: model code first
    # only for CUDA/HIP-graph replayed kernels whose profiled capture recorded Python
    # frames: the code around the op that captured them, model code first
    captured_source: list[SourceFrame]


class AnnotationsNote(TypedDict):
    source: str | None  # "trace args", the annotations pickle's name, None: none found
    unread: str | None  # why an annotations pickle found was not read


class KernelsView(TypedDict):
    group_by: str
    device: int | None
    stream: int | None
    rows: list[KernelRow]
    kernel_count: int
    total_us: float
    tensor_core_time_us: float
    non_tensor_core_time_us: float
    tensor_core_pct: float | None
    tensor_core_unknown_time_us: float
    matrix_core_name: str
    devices: list[int]
    device_labels: list[str]  # of `devices`, in order: "GPU 0", "XPU 0" (devices.py)
    streams: list[int]
    graph_replay: GraphReplaySummary | None
    left_out_events: int  # kernels left out (trace health: duplicates, ts 0, off-clock)
    queued_times: Literal["not recorded", "recorded", "other clock"]  # kernels' `queued`
    graph_annotations: AnnotationsNote | None  # None: the trace replays no CUDA graph
    roofs: list[Roof]
