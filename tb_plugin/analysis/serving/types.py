"""The serving view's wire types: its response (the TypeScript types and the docs'
examples are checked against them)."""

from __future__ import annotations

from typing import TypedDict

from ..core.source_frames import SourceFrame


class TopKernel(TypedDict):
    name: str
    calls: int
    total_us: float
    # Graph-replayed: what it was captured as (its CUDA-graph annotations' label, else its
    # profiled capture's op; the one with most time). None: not replayed, or not known
    captured_as: str | None
    # Graph-replayed: where it was captured, the first model-code frame around the op that
    # launched its longest replayed call in its profiled capture (with_stack=True). None:
    # not replayed, not matched to a capture, or the capture recorded no Python frames
    captured_at: SourceFrame | None


class Iteration(TypedDict):
    """One iteration: its host span (the engine's marker), the GPU work it launched, and
    what the engine said of it. `None`: unknown (never 0 for unknown)."""

    index: int
    phase: str  # prefill, decode, mixed, idle, unknown
    phase_from: str  # what decided the phase, in words
    marker: str  # the name of the range the iteration was found from
    start_us: float  # the marker's start (the trace's time, as the trace view's)
    dur_us: float  # start to the later of the marker's end and its GPU work's end
    host_dur_us: float  # the marker's own duration
    gpu_start_us: float | None  # first GPU activity it launched (None: it launched none)
    gpu_end_us: float | None
    gpu_busy_us: float  # union of its GPU activities
    gpu_idle_us: float | None  # its GPU span less the busy time (None: no GPU work)
    kernel_us: float  # sum of its kernels' durations
    graph_replayed_us: float  # of which kernels of graph replays
    graph_replayed_pct: float | None  # share of kernel time (None: no kernels)
    scheduling_us: float | None  # start to its first launch call (None: no launch)
    # First launch call to first GPU activity: its work waited behind earlier GPU work
    queue_us: float | None
    gap_before_us: float | None  # since the previous iteration ended (None: the first)
    gpu_gap_before_us: float | None  # GPU idle since the previous iteration's GPU work
    tokens: int | None
    requests: int | None
    # "engine annotation", "op shapes" (inferred from the ops' input shapes), None: none
    counts_from: str | None
    context_requests: int | None
    context_tokens: int | None
    generation_requests: int | None
    generation_tokens: int | None
    collective_calls: int
    collective_us: float
    top_kernels: list[TopKernel]


class Stat(TypedDict):
    """A time over a phase's iterations (None: no iteration has it)."""

    median: float | None
    p90: float | None  # linear interpolation between ranks (numpy's default)
    mean: float | None
    total: float | None


class Estimate(TypedDict):
    value_us: float | None
    assumption: str


class PhaseStats(TypedDict):
    count: int
    dur_us: Stat
    gpu_busy_us: Stat
    scheduling_us: Stat
    gap_before_us: Stat
    tokens: int | None  # over the iterations whose tokens are known
    requests: int | None
    iterations_with_tokens: int
    tokens_per_s: float | None  # tokens / their iterations' summed dur_us
    kernel_us: float
    classes_us: dict[str, float]  # taxonomy class -> kernel time (unknown: within other)
    graph_replayed_pct: float | None
    collective_calls: int
    collective_us: float
    collective_types: dict[str, int]
    first_token_us: Estimate  # prefill only (else value None)
    per_output_token_us: Estimate  # decode only (else value None)


class Capture(TypedDict):
    batch: int
    mode: str


class ServingParams(TypedDict, total=False):
    offset: int  # the first iteration of the page (default 0)
    limit: int  # at most this many iterations (default and most: 10,000)


class ServingView(TypedDict):
    engine: str | None  # vllm, sglang, xdit; None: no engine named
    source: str | None  # annotations, python_frames, graph_launches; None: none found
    reason: str | None  # why there are no iterations (None when there are)
    rank: int | None  # distributedInfo (tensor-parallel: each rank's file is one view)
    world_size: int | None
    iteration_count: int
    window_us: list[float]  # [first start, last end]; [] without iterations
    iterations: list[Iteration]  # the page [offset, offset + limit) of them
    offset: int
    limit: int
    phases: dict[str, PhaseStats]  # phases that occur, in PHASES order
    captures: list[Capture]  # graph captures the trace records (capture_{B}_{MODE})
    notes: list[str]  # the assumptions behind the numbers
