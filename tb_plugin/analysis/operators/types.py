"""The Operators view's and its call stacks' wire types: their query parameters and their
responses (the TypeScript types and the docs' examples are checked against them)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ..core.python_stacks import Frame
from ..core.roofline.metrics import Roof, RooflineFields
from ..core.source_frames import SourceFrame


class OperatorsParams(TypedDict, total=False):
    group_by: Literal["name", "shape"]


class _OperatorName(TypedDict):
    name: str


class CallStacksParams(_OperatorName, total=False):
    input_shape: str  # the JSON of a `shape` row's input_shape ("null": ops without one)


class _Stats(TypedDict):
    calls: int
    host_self_us: float
    host_total_us: float
    device_self_us: float
    device_total_us: float
    host_self_avg_us: float
    host_total_avg_us: float
    device_self_avg_us: float
    device_total_avg_us: float
    tensor_core_eligible: bool
    tensor_core_self_us: float
    tensor_core_total_us: float


class _RowBase(_Stats, RooflineFields):
    name: str
    has_call_stack: bool
    # device time of kernels replayed from a CUDA/HIP graph this op captured (in device
    # self and total; 0: none). A row of 0 calls has only that: no host call in this span.
    replayed_us: float


class OperatorRow(_RowBase, total=False):
    input_shape: Any  # the `Input Dims` value (a list), or None when not recorded
    # only on a row with replayed kernels whose profiled capture recorded Python frames:
    # where the op captured them (the first model-code frame, of its longest kernel)
    captured_at: SourceFrame


class OperatorsView(TypedDict):
    group_by: str
    rows: list[OperatorRow]
    op_count: int
    host_self_us: float
    device_self_us: float
    call_stack_source: str | None
    kernel_view_absent_reason: str | None
    roofs: list[Roof]


class StackRow(_Stats):
    frames: list[Frame]


class CallStacksView(TypedDict):
    name: str
    input_shape: Any
    source: str | None
    calls: int
    stacks: list[StackRow]
