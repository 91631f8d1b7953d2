"""The checks of a trace's health that need more than one row's own values: nesting on a
lane, GPU work against its launch, flows, the profiling window. Each returns a `Finding`:
the rows it flags (for examples and counts) and, where the check cannot run on this trace,
why (its count is then unknown, never 0).

Tolerances, in trace microseconds (documented in docs/http_api.md, `health`):
- `NEST_TOLERANCE_US`: slices on one lane that cross by at most this much still nest.
  Traces to 2023 round starts and durations to whole microseconds, so a child may end up
  to 1 µs after its parent.
- `LAUNCH_TOLERANCE_US`: a GPU activity may start this much before its launch call and
  still count as on time (rounding, and the CPU-GPU clock sync of CUPTI and roctracer,
  which is good to about a microsecond).
- `WINDOW_TOLERANCE_US`: an event may start this much outside the profiling window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....ingest.columns import negative_durations
from ....model.categories import Kind, Phase
from ....model.trace_model import TraceModel
from ..common import gpu_rows, launches_of, thread_keys
from ..tree_arrays import nesting_order
from ..trusted_rows import untrusted_mask
from .nesting import lane_crossings

NEST_TOLERANCE_US = 1.0
LAUNCH_TOLERANCE_US = 1.0
WINDOW_TOLERANCE_US = 1.0
# Sync events (`cuda_sync`) sit on a stream lane over the work they wait for: not a slice.
_NOT_NESTED = (Kind.FLOW, Kind.TRACE_SPAN, Kind.COUNTER, Kind.MEMORY, Kind.SYNC)


@dataclass(frozen=True)
class Finding:
    rows: np.ndarray  # the flagged rows, in file order
    count: int | None = None  # None: len(rows)
    unknown: str | None = None  # why the check could not run on this trace

    @property
    def total(self) -> int | None:
        if self.unknown is not None:
            return None
        return int(self.rows.size) if self.count is None else self.count


_NONE = np.empty(0, dtype=np.int64)


def overlapping_events(model: TraceModel) -> Finding:
    """`X` events that start inside an earlier slice of their lane (process and thread)
    and end after it, by more than `NEST_TOLERANCE_US` each side: every such crossing
    counts, also between two slices nested in a longer one. Per lane, slices by (start,
    longer first, file order): a slice crosses when an earlier one of its lane ends after
    its start and before its end, by more than the tolerance each side (slices that start
    together always nest). Python frames (`python_function`) are a lane of their own
    beside their thread's ops: a `record_function` range starts inside its `__enter__`
    frame and ends inside its `__exit__` frame, by construction. Rows left out of time
    sums are not compared."""
    ev = model.events
    complete = (ev["ph"] == Phase.COMPLETE) & ~np.isin(ev["kind"], np.array(_NOT_NESTED, "u1"))
    ts = ev["ts"].astype(np.float64, copy=False)
    finite = np.isfinite(ev["dur"]) & np.isfinite(ts)
    rows = np.flatnonzero(complete & finite & ~untrusted_mask(model))
    if rows.size < 2:
        return Finding(_NONE)
    lane = thread_keys(model, rows) * 2 + (ev["kind"][rows] == Kind.PYTHON)
    starts = ts[rows]
    ends = starts + ev["dur"][rows]
    order = nesting_order(lane, starts, ends)  # file order breaks ties
    # Sorted in place of the unsorted (let go before the walks' own arrays are made).
    rows, lane, starts, ends = rows[order], lane[order], starts[order], ends[order]
    del order
    crossing = lane_crossings(lane, starts, ends, NEST_TOLERANCE_US)
    return Finding(np.sort(rows[crossing]))


def kernel_before_launch(model: TraceModel) -> Finding:
    """GPU activities (kernels, copies, sets) that start more than `LAUNCH_TOLERANCE_US`
    before the runtime call that launched them (linked by correlation id). None on a trace
    without GPU activity (a CPU-only trace: 0, not unknown); unknown when there is some but
    none is linked to its launch."""
    gpu = gpu_rows(model)
    gpu = gpu[~untrusted_mask(model)[gpu]]
    if gpu.size == 0:
        return Finding(_NONE)
    launch = launches_of(model, gpu)
    linked = launch >= 0
    if not linked.any():
        return Finding(_NONE, unknown="no GPU activity is linked to a launch call")
    ts = model.events["ts"]
    early = ts[gpu[linked]] < ts[launch[linked]] - LAUNCH_TOLERANCE_US
    return Finding(gpu[linked][early])


def unmatched_flows(model: TraceModel) -> Finding:
    """Flow events whose flow (category and id) has no start (`s`) or no end (`f`). The
    count is of flows; the rows are their events."""
    ev = model.events
    rows = np.flatnonzero(ev["kind"] == Kind.FLOW)
    if rows.size == 0:
        return Finding(_NONE)
    key = ev["cat"][rows].astype(np.int64) * (1 << 40) + ev["flow_id"][rows]
    flows, which = np.unique(key, return_inverse=True)
    ph = ev["ph"][rows]
    starts = np.bincount(which, weights=ph == Phase.FLOW_START, minlength=flows.size)
    finishes = np.bincount(which, weights=ph == Phase.FLOW_END, minlength=flows.size)
    broken = (starts == 0) | (finishes == 0)
    return Finding(rows[broken[which]], count=int(broken.sum()))


def outside_profiling_window(model: TraceModel) -> Finding:
    """Events (not the window itself) that start before the profiling window (the
    profiler's `Trace` span, "PyTorch Profiler (0)", up to its "Record Window End" mark
    when that comes later) or end after it, by more than `WINDOW_TOLERANCE_US`. Unknown
    for a trace without the span."""
    ev = model.events
    spans = np.flatnonzero((ev["kind"] == Kind.TRACE_SPAN) & (ev["ph"] == Phase.COMPLETE))
    if spans.size == 0:
        return Finding(_NONE, unknown="the trace has no profiling window (Trace span)")
    start = float(ev["ts"][spans].min())
    end = float((ev["ts"][spans] + ev["dur"][spans]).max())
    mark = model.name_code("Record Window End")
    if mark >= 0:
        end = max(end, float(np.nanmax(np.where(ev["name"] == mark, ev["ts"], -np.inf))))
    ends = ev["ts"] + np.where(ev["dur"] > 0, ev["dur"], 0)
    outside = (ev["ts"] < start - WINDOW_TOLERANCE_US) | (ends > end + WINDOW_TOLERANCE_US)
    outside &= (ev["kind"] != Kind.TRACE_SPAN) & (ev["name"] != mark) & ~untrusted_mask(model)
    return Finding(np.flatnonzero(outside))


def negative_duration(model: TraceModel) -> Finding:
    """Events whose `dur` was negative: the loader reads them as 0 and counts them in its
    warnings (`ingest/columns.negative_duration_warning`); which rows they were is not
    kept, so there are no examples."""
    return Finding(_NONE, count=negative_durations(model.warnings))


def truncated_file(model: TraceModel) -> Finding:
    """The file was read only in part (cut short, or past a limit): 1, else 0."""
    return Finding(_NONE, count=1 if model.partial else 0)
