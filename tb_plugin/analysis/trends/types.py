"""The `trend` view's types (the route's JSON, the CLI's `--format json`)."""

from __future__ import annotations

from typing import Literal, TypedDict


class NamedTime(TypedDict):
    name: str
    us: float  # per step


class TrendRun(TypedDict):
    """One run of the logdir, in trace start order."""

    run: str
    index: int  # position in the order
    workers: list[str]  # the workers summarised (each one's span `span`)
    start_us: float | None  # epoch µs of the earliest worker's first event; None: unknown
    device_type: str | None
    devices: list[str]
    step_count: int
    step_mean_us: float | None  # None: no steps (or the run failed)
    step_median_us: float | None
    phases_us: dict[str, float]  # mean per step (the Overview's parts)
    op_metric: str | None  # device_self_us (GPU) or host_self_us (CPU-only)
    top_ops: list[NamedTime]  # µs per step, the top 50 (highest first)
    top_kernels: list[NamedTime]  # compute kernels (communication is in collectives)
    top_collectives: list[NamedTime]
    memory_peak_bytes: dict[str, float]  # memory device key → peak allocated
    errors: list[str]  # files that could not be summarised (their run is left out if all)
    workload: int | None  # index into TrendView.workloads; None: the run failed


class TrendChange(TypedDict):
    metric: Literal["step", "phase", "op", "kernel", "collective", "memory_peak"]
    name: str  # the phase, op, kernel, collective type or memory device ("step" for step)
    first_run: str
    change_pct: float | None  # None: it was 0 before (new)
    baseline: float  # the baseline's value (median of the rolling window, or the run's)
    value: float  # the value at first_run
    threshold: float  # the change needed to be named, in the metric's unit
    unit: Literal["us", "bytes"]
    # The Diff of first_run against the run of its workload before it (None for the first).
    diff_base_run: str | None
    diff_target_run: str
    workload: int  # the workload whose series changed
    # A later run stayed beyond the threshold too; False: named at the last run of its
    # workload and not yet confirmed by another.
    confirmed: bool


class TrendWorkload(TypedDict):
    """Runs of one workload (same devices and workers, mostly the same ops): each metric's
    series is compared within a workload only."""

    index: int
    label: str  # its devices and workers, and its biggest ops
    runs: list[str]  # in trace start order
    compared: bool  # False: fewer than two runs, nothing to compare


class TrendRule(TypedDict):
    mode: Literal["rolling", "baseline"]
    baseline_run: str | None
    window: int
    floor_pct: float
    spread_k: float
    envelope_k: float
    min_step_pct: float
    min_memory_bytes: float
    min_history: int


class TrendView(TypedDict):
    span: str
    rule: TrendRule
    runs: list[TrendRun]
    workloads: list[TrendWorkload]
    notes: list[str]  # runs left out of every comparison, and why
    regressions: list[TrendChange]
    improvements: list[TrendChange]


class TrendLoading(TypedDict):
    """`trend` answers 202 with this while the traces are summarised."""

    state: Literal["loading"]
    files_done: int
    files_total: int


class TrendParams(TypedDict, total=False):
    span: str  # each worker's span of that name (default "1", else its first)
    baseline: str  # a run: every run compared with it (default: the rolling baseline)
    window: int  # runs in the rolling baseline (default 5)
    floor_pct: float  # the smallest relative change named (default 5)
