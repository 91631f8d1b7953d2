"""The diff view's types: every compared number as base, target, delta and delta %."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class DiffParams(TypedDict, total=False):
    """Besides the pair of spans (`Scope.PAIR`): operators matched by name, or by name
    and input shape."""

    group_by: Literal["name", "shape"]


class Compared(TypedDict):
    """One number of both sides. `None` is unknown (the side has no such data), never 0:
    `delta` is None when a side is unknown, `delta_pct` also when the base is 0."""

    base: float | None
    target: float | None
    delta: float | None
    delta_pct: float | None


class SideSummary(TypedDict):
    device_type: str  # "GPU" or "CPU" (the overview's)
    devices: list[str]  # device names (the overview's device identity), in id order
    steps_source: str
    has_kernels: bool
    has_memory: bool
    has_communication: bool


class StepsDiff(TypedDict):
    step_count: Compared
    average_step_us: Compared


class BreakdownDiff(TypedDict):
    part: str  # kernel, memcpy, memset, communication, runtime, dataloader, cpu_exec, other
    average_us: Compared  # per step
    share_pct: Compared  # of the average step


class GpuDiff(TypedDict):
    """One device id: the overview's GPU summary of both sides (None: absent on a side)."""

    id: int
    short_label: str  # "GPU 0", "XPU 0" (the sides' own, joined by " / " when they differ)
    base_name: str | None
    target_name: str | None
    utilization_pct: Compared
    sm_efficiency_pct: Compared
    achieved_occupancy_pct: Compared
    tensor_core_pct: Compared
    kernel_time_us: Compared


class MemoryDiff(TypedDict):
    device: str  # the memory view's device key ("GPU0", "CPU")
    peak_allocated_bytes: Compared
    peak_reserved_bytes: Compared


class CollectiveDiff(TypedDict):
    """A collective type, from the distributed view's single-rank statistics."""

    name: str
    calls: Compared
    bytes: Compared
    total_us: Compared
    avg_us: Compared
    algbw_gbps: Compared
    busbw_gbps: Compared


class _RowDiffBase(TypedDict):
    name: str
    status: Literal["added", "removed", "changed", "same"]
    calls: Compared


class _OperatorDiffBase(_RowDiffBase):
    host_self_us: Compared
    host_total_us: Compared
    device_self_us: Compared  # unknown (None) on a CPU-only side
    device_total_us: Compared


class OperatorDiff(_OperatorDiffBase, total=False):
    input_shape: Any  # only with group_by=shape: the operators view's input_shape


class KernelDiff(_RowDiffBase):
    total_us: Compared
    mean_us: Compared


class TopChange(TypedDict):
    """A bar of the chart of the largest changes: an operator's main time or a kernel's."""

    kind: Literal["operator", "kernel"]
    name: str
    input_shape: Any  # group_by=shape operators; else None
    metric: str  # the compared field: `operator_metric` or "total_us"
    base: float | None
    target: float | None
    delta: float


class WorkSide(TypedDict):
    calls: int
    total_us: float
    kernels: list[str]  # the kernel names with the most time (3 at most)
    kernel_names: int  # how many kernel names the side has in the pair


class WorkPair(TypedDict):
    """Kernels of both sides paired by what they do (`by_work.py`)."""

    work: str  # the taxonomy's work class: gemm, attention, conv, communication, other
    op: str | None  # the launching op ("" for none); None when paired by work alone
    input_shape: Any  # the op's Input Dims when paired by shape, else None
    match: Literal["shape", "op", "work", "base_only", "target_only"]
    base: WorkSide | None  # None: the side has no such kernels
    target: WorkSide | None
    total_us: Compared  # a side without such kernels: 0
    ratio: float | None  # target / base time; None when a side is 0
    # Per profiled step (each side's total over its own step count: sides that profiled
    # a different number of steps compare); unknown on a side without steps.
    per_step_us: Compared


class ServingPhaseDiff(TypedDict):
    """A phase of both sides' serving views: a phase absent from a side ran 0 iterations
    there (its times unknown)."""

    phase: str  # prefill, decode, mixed, idle, unknown
    iterations: Compared
    median_us: Compared  # of the iterations' dur_us
    p90_us: Compared
    gpu_busy_median_us: Compared
    tokens_per_s: Compared  # unknown where the engine gave no tokens
    per_token_us: Compared  # prefill: the first-token estimate; decode: per output token
    classes_per_iteration_us: dict[str, Compared]  # kernel taxonomy class -> time per iteration


class ModuleRatio(TypedDict):
    path: str  # the Modules view's path, the same on both sides
    module_type: str
    depth: int
    metric: Literal["device_total_us", "host_total_us"]
    time_us: Compared
    ratio: float | None  # target / base


class DiffView(TypedDict):
    group_by: str
    base: SideSummary
    target: SideSummary
    devices_differ: bool
    notes: list[str]
    steps: StepsDiff
    breakdown: list[BreakdownDiff]
    gpu: list[GpuDiff]  # empty when a side has no GPU (`notes` says so)
    memory: list[MemoryDiff]
    communication: list[CollectiveDiff]
    operator_metric: str  # the time operators are sorted by: device_self_us or host_self_us
    operators: list[OperatorDiff]
    kernels: list[KernelDiff]  # empty unless both sides ran kernels
    top_changes: list[TopChange]
    vendors: list[str]  # base's and target's kernel vendor ("nvidia", "amd", "" unknown)
    kernels_by_work: list[WorkPair]  # empty unless both sides ran kernels
    modules: list[ModuleRatio]  # modules on both sides, by path
    serving: list[ServingPhaseDiff]  # empty unless both sides have serving iterations
