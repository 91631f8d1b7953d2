"""The `health` view: what in one trace cannot be trusted, check by check.

Each check has an `id`, a `count` (null when the check cannot run on this trace, with the
reason in `unknown`), a `severity` (`error`: numbers are wrong if it is ignored; `warning`:
some views may mislead; `info`), its `effect` on the numbers (`left_out`: the rows are left
out of every time-based sum, `trusted.py`; `kept`: counted, with this caveat) and up to
`MAX_EXAMPLES` examples, each an event row with its start and lane, for the trace view.
`status` is `errors` when an error check counts any, else `warnings` when a warning check
does, else `ok`. Computed when first asked (the Overview and the side bar ask on opening
a trace) and cached with the trace, so loading costs nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal, TypedDict

import numpy as np

from ....model.trace_model import TraceModel
from ..requests import NoParams
from ..trusted_rows import row_flags
from . import checks, producer_bugs, torch_rules
from .checks import Finding

MAX_EXAMPLES = 20

Severity = Literal["error", "warning", "info"]
Effect = Literal["left_out", "kept"]
Status = Literal["ok", "warnings", "errors"]


class HealthExample(TypedDict):
    row: int  # the event's row (the `event` route's `row`)
    name: str
    ts_us: float  # start, trace microseconds (as the trace view's times)
    dur_us: float | None
    lane: str  # "pid/tid" as in the file


class HealthCheck(TypedDict):
    id: str
    count: int | None  # null: the check cannot run on this trace (`unknown` says why)
    severity: Severity
    effect: Effect
    description: str
    unknown: str | None
    examples: list[HealthExample]
    # The rule of torch's trace validator (`torch/profiler/_trace_validator.py`) this
    # check counts as the validator does: its function's name without the underscore
    torch_rule: str | None


class HealthView(TypedDict):
    status: Status
    checks: list[HealthCheck]
    left_out_rows: int  # rows left out of time-based sums (each row once)
    warnings: list[str]  # the loader's warnings (a file cut short says where)
    trace_start_us: float | None  # the first start of a row not left out (`ts_us`'s axis)


def _flagged(name: str) -> Callable[[TraceModel], Finding]:
    return lambda model: Finding(np.flatnonzero(getattr(row_flags(model), name)))


# id → (severity, effect, what it means, how it is found)
_CHECKS: list[tuple[str, Severity, Effect, str, Callable[[TraceModel], Finding]]] = [
    (
        "truncated_file",
        "error",
        "kept",
        "The file was read only in part (cut short, e.g. by a killed rank): every number "
        "covers only the events before the cut.",
        checks.truncated_file,
    ),
    (
        "zero_timestamps",
        "error",
        "left_out",
        'Events with "ts": 0 and no duration: their time is missing.',
        _flagged("zero_ts"),
    ),
    (
        "negative_duration",
        "error",
        "kept",
        "Events with a negative duration: read as 0 at load (their rows are not kept, so "
        "there are no examples).",
        checks.negative_duration,
    ),
    (
        "duplicate_events",
        "error",
        "left_out",
        "Second and later copies of an event (same category, name, process, thread, start, "
        "duration, correlation and args): each event counts once.",
        _flagged("duplicate"),
    ),
    (
        "clock_outlier",
        "error",
        "left_out",
        "Events that start far from the rest of the trace (another clock).",
        _flagged("clock_outlier"),
    ),
    (
        "kernel_before_launch",
        "error",
        "kept",
        "GPU activities that start before the runtime call that launched them (by more "
        f"than {checks.LAUNCH_TOLERANCE_US:g} µs): their clock is off, so launch delays, "
        "idle causes and GPU-CPU alignment around them are wrong.",
        checks.kernel_before_launch,
    ),
    (
        "overlapping_events",
        "warning",
        "kept",
        "Slices on one thread or stream that overlap without nesting (by more than "
        f"{checks.NEST_TOLERANCE_US:g} µs): busy time on that lane may count twice, and "
        "operator self times around them are approximate.",
        checks.overlapping_events,
    ),
    (
        "outside_profiling_window",
        "warning",
        "kept",
        "Events that start before or end after the profiling window (the profiler's Trace span).",
        checks.outside_profiling_window,
    ),
    (
        "unmatched_flows",
        "info",
        "kept",
        "Flows (CPU-GPU and forward-backward arrows) with a start but no end, or an end "
        "but no start: no arrow is drawn.",
        checks.unmatched_flows,
    ),
    (
        "kernel_overruns_next",
        "error",
        "kept",
        "Kernels whose recorded end runs past the next kernel's start on their stream (by "
        f"more than {checks.NEST_TOLERANCE_US:g} µs), the next one launched so that it "
        "could not start early (a plain launch, or an AMD GPU): the producer recorded a "
        "wrong end (seen on ROCm 2026). Their kernel time is overstated and the next kernel "
        "is drawn under them.",
        lambda m: producer_bugs.overruns(m).bug,
    ),
    (
        "kernel_overlap_maybe_pdl",
        "info",
        "kept",
        "Kernels that run past the next kernel's start on their stream where the next one "
        "may have started early on purpose (Programmatic Dependent Launch: launched with "
        "cudaLaunchKernelEx on compute capability 9 or more), or its launch is not "
        "recorded: nothing tells a producer bug from the overlap asked for.",
        lambda m: producer_bugs.overruns(m).maybe_pdl,
    ),
    (
        "kernels_not_recorded",
        "error",
        "kept",
        f"Runs of at least {producer_bugs.MISSING_RUN} kernel launch calls, one after another, "
        "that no kernel in the trace matches, between launches that do: the producer "
        "stopped recording kernels while the host went on launching them. GPU time, "
        "utilization and kernel counts are low there; no view has those kernels.",
        producer_bugs.kernels_not_recorded,
    ),
    (
        "kernel_before_launch_call",
        "warning",
        "kept",
        "As torch's trace validator counts it: per External id (an op's), its first kernel "
        "starts before its first cudaLaunchKernel, with no tolerance. kernel_before_launch "
        "is the finer check (each GPU activity against its own launch, by correlation).",
        torch_rules.gpu_kernel_causality,
    ),
    (
        "stream_wait_without_record",
        "warning",
        "kept",
        "Stream Wait Event and Event Sync events without the cudaEventRecord they wait for "
        "(wait_on_cuda_event_record_corr_id absent or below 0): the critical path cannot "
        "place them from the event (it infers the wait from the calls around it, or leaves "
        "it out and counts it in its assumptions).",
        torch_rules.stream_wait_corr_id_populated,
    ),
    (
        "stream_sync_during_kernel",
        "warning",
        "kept",
        "Stream Sync events that start while a kernel of their device and stream still runs "
        "(each such kernel counts): the sync's time is misplaced (kineto#1356).",
        torch_rules.stream_sync_overlap,
    ),
    (
        "stream_wait_record_not_before",
        "warning",
        "kept",
        "Stream Wait Events whose record id names no cudaEventRecord in the trace, or one "
        "that starts after the wait: the critical path does not follow that id.",
        torch_rules.stream_wait_corr_id_in_past,
    ),
    (
        "collective_without_metadata",
        "warning",
        "kept",
        "record_param_comms without Collective name, dtype, In msg nelems, Out msg nelems "
        "or Group size: their collectives are matched across ranks without those fields "
        "(by type, size and time), and their bytes and bandwidth may be unknown.",
        torch_rules.nccl_metadata,
    ),
    (
        "shared_backward_sequence",
        "warning",
        "kept",
        "Autograd Sequence numbers shared by evaluate_function ranges of two different "
        "backward ops (each number counts once): the profiler's forward-backward arrows "
        "(fwdbwd flows, drawn as written) may join the wrong ops.",
        torch_rules.backward_seq_id_uniqueness,
    ),
    (
        "unread_categories",
        "info",
        "kept",
        "Events of a category no view reads: one Kineto writes for another purpose (its "
        "profiler overhead, CUDA events, MTIA counters, ...) or one kinetoscope does not "
        "know (a newer producer's). The Trace page draws them; no other page counts them.",
        checks.unread_categories,
    ),
    (
        "stream_ids_are_hsa_queues",
        "info",
        "kept",
        "GPU activities of a ROCm trace whose stream ids are HSA hardware queues, not HIP "
        "streams (Kineto before June 2026, kineto#1424; no `hsa_queue` field): HIP streams "
        "beyond the device's queues (GPU_MAX_HW_QUEUES, default 4) share one, so a stream "
        "track, filter or count is a queue's, holding several streams' work.",
        checks.stream_ids_are_queues,
    ),
]

# The checks that count a rule of torch's trace validator, as it counts it.
TORCH_RULES = {
    "kernel_before_launch_call": "check_gpu_kernel_causality",
    "stream_wait_without_record": "check_stream_wait_corr_id_populated",
    "stream_sync_during_kernel": "check_stream_sync_overlap",
    "stream_wait_record_not_before": "check_stream_wait_corr_id_in_past",
    "collective_without_metadata": "check_nccl_metadata",
    "shared_backward_sequence": "check_backward_seq_id_uniqueness",
}


def findings_of(model: TraceModel) -> list[Finding]:
    """Each check's finding, in `_CHECKS` order, kept with the model (the view and the
    trace view's marks read them)."""
    return model.derived("_health_findings", lambda m: [c[4](m) for c in _CHECKS])


CHECK_IDS = [c[0] for c in _CHECKS]


ROW_CHECKS_KEY = "_health_row_checks"  # the model's derived structure of `row_checks`


def row_checks(model: TraceModel) -> np.ndarray:
    """Per row, bit i set when check `CHECK_IDS[i]` flags it (uint32; the trace view's
    marks)."""

    def build(m: TraceModel) -> np.ndarray:
        bits = np.zeros(len(m), dtype=np.uint32)
        for i, finding in enumerate(findings_of(m)):
            bits[finding.rows] |= np.uint32(1 << i)
        return bits

    return model.derived(ROW_CHECKS_KEY, build)


def checks_of_row(model: TraceModel, row: int) -> list[str]:
    """The ids of the checks that flag this row."""
    bits = int(row_checks(model)[row])
    return [check_id for i, check_id in enumerate(CHECK_IDS) if bits >> i & 1]


def health(model: TraceModel) -> HealthView:
    out: list[HealthCheck] = []
    for (check_id, severity, effect, description, _), finding in zip(_CHECKS, findings_of(model)):
        out.append(
            {
                "id": check_id,
                "count": finding.total,
                "severity": severity,
                "effect": effect,
                "description": description,
                "unknown": finding.unknown,
                "examples": examples(model, finding.rows),
                "torch_rule": TORCH_RULES.get(check_id),
            }
        )
    return {
        "status": status_of(out),
        "checks": out,
        "left_out_rows": _left_out(model),
        "warnings": list(model.warnings),
        "trace_start_us": _first_start(model),
    }


def _left_out(model: TraceModel) -> int:
    flags = row_flags(model)
    return int(flags.untrusted.sum()) if flags.any_untrusted else 0


def _first_start(model: TraceModel) -> float | None:
    """The trace's start: its first event's, of the rows not left out (a `"ts": 0` event
    is not where the trace starts)."""
    flags, ts = row_flags(model), model.events["ts"]
    if flags.any_untrusted:  # most traces leave no row out: no copy of every start
        ts = ts[~flags.untrusted]
    least = np.fmin.reduce(ts) if ts.size else np.nan  # NaN starts passed over
    return None if np.isnan(least) else float(least)


def status_of(found: Sequence[Mapping[str, object]]) -> Status:
    """Of this trace's checks, or of a run's (the `distributed` view's `health`)."""
    counted = {c["severity"] for c in found if c["count"]}
    if "error" in counted:
        return "errors"
    return "warnings" if "warning" in counted else "ok"


def examples(model: TraceModel, rows: np.ndarray) -> list[HealthExample]:
    """The earliest `MAX_EXAMPLES` of the rows (then by lane and name): the events a
    trace holds, not the order a writer put them in, choose them."""
    ev = model.events
    out: list[HealthExample] = []
    for row in _first_rows(model, rows).tolist():
        dur = float(ev["dur"][row])
        pid, tid = model.pids[ev["pid"][row]], model.tids[ev["tid"][row]]
        out.append(
            {
                "row": int(row),
                "name": model.names[ev["name"][row]],
                "ts_us": float(ev["ts"][row]),
                "dur_us": None if np.isnan(dur) else dur,
                "lane": f"{pid}/{tid}",
            }
        )
    out.sort(key=lambda e: (e["ts_us"], e["lane"], e["name"], e["row"]))
    return out[:MAX_EXAMPLES]


def _first_rows(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """The rows of the `MAX_EXAMPLES` earliest starts (all the rows of a tie)."""
    if len(rows) <= MAX_EXAMPLES:
        return rows
    ts = model.events["ts"][rows]
    ts = np.where(np.isnan(ts), np.inf, ts)
    cutoff = np.partition(ts, MAX_EXAMPLES - 1)[MAX_EXAMPLES - 1]
    return rows[ts <= cutoff]


def health_view(model: TraceModel, params: NoParams) -> HealthView:
    return health_of(model)


def health_of(model: TraceModel) -> HealthView:
    """`health(model)`, kept with the model (the Overview's recommendations read it too)."""
    return model.derived("_health_view", health)


def caveat(view: HealthView) -> str | None:
    """What may distort numbers drawn from a trace with errors (None when it has none)."""
    named = [
        f"{c['count']} {c['id']}" for c in view["checks"] if c["count"] and c["severity"] == "error"
    ]
    if not named:
        return None
    named_text = ", ".join(named)
    return f"This trace has errors that may distort this: {named_text} (see Trace health)."
