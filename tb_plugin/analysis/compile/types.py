"""The `compile` view's wire types: what a run's TORCH_TRACE compile logs say, joined to its
traces (the TypeScript types and the docs' examples are checked against them).

Times: `*_us` durations in microseconds; `start_us`/`end_us` epoch microseconds, the
logs' own clock; `trace_start_us` the same instant on the aligned trace's clock (the
`ts` of its file, what the trace view's `t0`/`t1` take for one worker). None is unknown,
never zero."""

from __future__ import annotations

from typing import Literal, TypedDict


class CompileStages(TypedDict):
    """The entire-frame compile time cut by stage, each without the stages inside it
    (torch times them nested: entire frame ⊇ backend ⊇ Inductor ⊇ code generation)."""

    dynamo_us: float | None  # Dynamo: bytecode tracing, guards (entire frame − backend)
    aot_autograd_us: float | None  # the backend outside Inductor: AOTAutograd, partitioning
    inductor_us: float | None  # Inductor outside code generation: lowering, scheduling
    code_gen_us: float | None  # Inductor's code generation (and compiling that code)


class CompileCache(TypedDict):
    """What the compile found in torch's caches (local and remote counters summed)."""

    state: str | None  # "hit", "miss", "partial" (hits and misses), None: the log says nothing
    inductor_hits: int | None  # FX graph cache
    inductor_misses: int | None
    aot_hits: int | None  # AOTAutograd cache
    aot_misses: int | None
    time_saved_us: float | None  # what the hits saved, as torch estimates it


class SourceLine(TypedDict):
    file: str | None
    line: int | None
    name: str | None


class CompileFailure(TypedDict):
    compile_id: str
    rank: int | None
    frame: str | None
    fail_type: str  # the exception's type (BackendCompilerFailed, Unsupported, ...)
    reason: str | None
    user: SourceLine | None  # the user frame the failure names (a backend failure names none)
    suppressed: bool | None  # config.suppress_errors: the frame ran eagerly instead


class BackwardCompile(TypedDict):
    """The lazily compiled backward graph of a compile (same compile id)."""

    start_us: float | None
    dur_us: float | None
    inductor_us: float | None  # as CompileStages: Inductor outside code generation
    code_gen_us: float | None
    cache: CompileCache
    failed: bool


class Compile(TypedDict):
    compile_id: str  # "frame/compile" as torch writes it ("0/1": frame 0's second compile)
    rank: int | None
    log: str  # the log file it comes from
    frame: str | None  # the compiled function (`co_name`)
    file: str | None  # its source file and first line
    line: int | None
    attempts: int  # tries of this compile (a graph break restarts the analysis)
    status: Literal["compiled", "failed", "unknown"]
    reason: str | None  # why it compiled again (its recompile reason); None: a first compile
    start_us: float | None
    end_us: float | None
    dur_us: float | None  # the log's entire-frame compile time
    stages: CompileStages
    cache: CompileCache
    backward: BackwardCompile | None
    guard_count: int | None
    graph_op_count: int | None
    graph_breaks: int | None  # `num_graph_breaks`
    cudagraph_records: int  # CUDA graphs recorded for it (more than one: re-records)
    cudagraph_skip_reason: str | None
    kernels: list[str]  # kernels its generated code defines
    worker: str | None  # the trace it is aligned with (None: none)
    trace_start_us: float | None
    step: int | None  # the profiler step it ran in (None: outside every step, or no trace)


class Recompile(TypedDict):
    compile_id: str
    rank: int | None
    frame: str | None
    file: str | None
    line: int | None
    reasons: list[str]  # each cache entry's failed guard, the newest entry first
    kind: str  # of the first reason: shape, stride, tensor, value, type, id, length, other
    guard: str | None  # the guard that failed, as torch prints it
    detail: str | None  # shape: "tensor 'x' dim 0: 8 → 4"
    source: SourceLine | None  # the user line the guard comes from, when the reason names it
    start_us: float | None
    trace_start_us: float | None
    step: int | None


class GraphBreak(TypedDict):
    compile_id: str  # the compile of the frame that broke
    rank: int | None
    frame: str | None
    file: str | None  # where Dynamo stopped (may be library code)
    line: int | None
    reason: str  # the graph break's type ("Call to `torch._dynamo.graph_break()`")
    explanation: str | None
    hints: list[str]
    user: SourceLine | None  # the innermost frame of the user's own code
    stack: list[SourceLine]  # the user code traceback, outermost first


class CudaGraphNote(TypedDict):
    compile_id: str
    rank: int | None
    kind: Literal["skipped", "rerecorded"]
    reason: str | None
    count: int


class CompileLogInfo(TypedDict):
    file: str
    rank: int | None
    size: int
    pid: int | None  # the process that wrote it
    torch_version: str | None
    records: int  # records read (of the kinds the view reads)
    lines: int
    skipped: int  # damaged lines or records skipped
    partial: bool  # the read stopped early (cut, limit)
    warnings: list[str]
    error: str | None  # why it could not be read at all
    error_kind: str | None  # empty_file, not_a_log, missing, io, outside_logdir, ...


class CompileAlignment(TypedDict):
    """How one log's times were placed on one trace's clock, and how well that held."""

    log: str
    rank: int | None
    worker: str | None  # None: no trace matched
    span: str | None
    matched_by: str | None  # rank, pid, only (one log, one trace) or None
    time_origin_us: float | None  # the trace's origin: trace ts + origin = epoch µs
    checked: int  # compile phases the trace recorded as well, compared
    median_error_us: float | None  # the trace's start of a phase minus the log's
    max_error_us: float | None
    in_window: int  # compiles inside the trace's time
    outside_window: int
    note: str


class StepCompilePart(TypedDict):
    compile_id: str
    frame: str | None
    file: str | None
    line: int | None
    backward: bool
    us: float  # of this compile inside the step


class StepCompileTime(TypedDict):
    worker: str
    step: int | None
    name: str
    start_us: float  # epoch µs (the logs' clock)
    trace_start_us: float  # the step's start on its trace's clock
    step_us: float
    compile_us: float  # compiling inside the step (forward and backward compiles)
    compiles: list[StepCompilePart]
    text: str  # "step 1: 11.7 s compiling frame 0/0 (`forward`, model.py:5)"


class KernelSite(TypedDict):
    compile_id: str
    rank: int | None
    wrappers: list[str]  # the names of its generated files that define the kernel


class CompiledKernel(TypedDict):
    name: str
    compiles: list[KernelSite]  # the compiles whose generated code defines a kernel so named


class CompileEvent(TypedDict):
    """A phase of a compile (torch's `dynamo_timed` chromium events), for the trace view."""

    name: str
    compile_id: str | None
    rank: int | None
    worker: str | None  # the trace its log is aligned with (None: none)
    start_us: float  # epoch µs
    dur_us: float  # 0 for an instant (a cache hit or miss)
    depth: int


class CompileAdvice(TypedDict):
    rule: str  # docs/compile.md names each rule
    text: str
    compile_ids: list[str]
    rank: int | None
    file: str | None
    line: int | None


class CompileResponse(TypedDict):
    run: str
    state: Literal["ready"]
    logs: list[CompileLogInfo]
    compiles: list[Compile]
    recompiles: list[Recompile]
    graph_breaks: list[GraphBreak]
    failures: list[CompileFailure]
    cudagraphs: list[CudaGraphNote]
    alignments: list[CompileAlignment]
    steps: list[StepCompileTime]
    kernels: list[CompiledKernel]
    events: list[CompileEvent]
    events_total: int  # phases in the logs (`events` keeps the first MAX_EVENTS)
    advice: list[CompileAdvice]
    total_compile_us: float  # every compile's entire-frame time and its backward's
