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

import re

import msgspec
import numpy as np

from ....ingest.columns import negative_durations
from ....model.categories import Kind, Phase, kind_mask
from ....model.trace_model import TraceModel
from .. import rocm_streams
from ..common import (
    distinct,
    gpu_rows,
    launches_of,
    name_flags,
    nonzero_rows,
    thread_keys,
    unique_inverse,
)
from ..taxonomy import is_host_transfer_op
from ..tree_arrays import _nesting, grouped_nesting_order
from ..trusted_rows import drop_untrusted, trusted_only
from .nesting import lane_crossings

NEST_TOLERANCE_US = 1.0
LAUNCH_TOLERANCE_US = 1.0
WINDOW_TOLERANCE_US = 1.0
# Sync events (`cuda_sync`) sit on a stream lane over the work they wait for: not a slice.
_NOT_NESTED = (Kind.FLOW, Kind.TRACE_SPAN, Kind.COUNTER, Kind.MEMORY, Kind.SYNC)


class Finding(msgspec.Struct, frozen=True):
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
    frame and ends inside its `__exit__` frame, by construction. So are the ranges of CPU
    collective backends (`gloo:*`, `mpi:*`, `ucc:*`: their work's range starts inside
    its `c10d::*` op and ends when the transfer does, after the op returned), and
    torch.compile's metadata ranges (`<phase>_data: compile_id=...`, which `dynamo_timed`
    records beside the phase's range). Rows left
    out of time sums are not compared."""
    ev = model.events
    keep = ev["ph"] == Phase.COMPLETE
    keep &= ~kind_mask(ev["kind"], _NOT_NESTED)
    keep &= np.isfinite(ev["dur"])
    keep &= np.isfinite(ev["ts"])
    drop_untrusted(model, keep)
    rows = nonzero_rows(model, keep)  # held through the walks
    del keep
    if rows.size < 2:
        return Finding(_NONE)
    lane = _lane_codes(model, rows)
    # Rows and lanes put in lane order once (file order inside each): each batch is a
    # slice of them (not a copy made beside an order, which all the batches' walks held).
    rows, lane = _by_lane(rows, lane)
    cuts = np.append(np.flatnonzero(lane[1:] != lane[:-1]) + 1, lane.size)
    found = [_crossing_rows(model, rows[a:b], lane[a:b]) for a, b in _batches(cuts)]
    return Finding(np.sort(np.concatenate(found)).astype(np.int64))


# Slices are checked in batches of about this many (whole lanes, or parts of a lane that
# no slice crosses from one to the next): the walks' arrays are a batch's, not the trace's.
_BATCH_SLICES = 1 << 16


def _lane_codes(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """Per row, a small code of its lane: its thread, its Python frames, its CPU backends'
    transfers and torch.compile's metadata ranges apart (uint16 where the trace has few
    lanes, which numpy's stable sort takes by radix)."""
    key = thread_keys(model, rows)
    key *= 4
    key += model.events["kind"][rows] == Kind.PYTHON
    names = model.events["name"][rows]
    key += 2 * name_flags(model, is_host_transfer_op)[names]
    key += 3 * name_flags(model, is_compile_metadata)[names]
    if int(key.max()) >= 1 << 24:
        return key
    present = np.bincount(key) > 0
    code = np.cumsum(present) - 1
    return code.astype(np.uint16 if int(code[-1]) < 1 << 16 else np.int64)[key]


# Up to this many lanes, rows are put in lane order lane by lane (a pass each), not by an
# argsort, whose int64 order (8 bytes a slice beside the rows) was the check's peak.
_LANES_BY_PASSES = 16


def _by_lane(rows: np.ndarray, lane: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`rows` and `lane` sorted stably by lane (file order inside each lane)."""
    counts = np.bincount(lane) if lane.dtype == np.uint16 else None
    if counts is None or rows.size == 0:
        by_lane = np.argsort(lane, kind="stable")
        rows = rows[by_lane]
        return rows, lane[by_lane]
    codes = np.flatnonzero(counts)
    if codes.size > _LANES_BY_PASSES:
        rows = _placed_by_lane(rows, lane, counts)
    else:
        rows = np.concatenate([rows[lane == code] for code in codes.tolist()])
    return rows, np.repeat(codes.astype(lane.dtype), counts[codes])


def _placed_by_lane(rows: np.ndarray, lane: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """`rows` stably by `lane` (`counts`: its bincount), a block of rows at a time each
    put at its lane's next places: an order of a block, not of all rows (the int64 order
    of all, 5.8 MB of the 253 MB H100 trace, was the Overview's peak)."""
    out = np.empty_like(rows)
    next_place = np.cumsum(counts) - counts  # per lane: where its next row goes
    for a in range(0, rows.size, _BATCH_SLICES):
        block = lane[a : a + _BATCH_SLICES]
        order = np.argsort(block, kind="stable")
        block = block[order]
        in_block = np.bincount(block, minlength=counts.size)
        # Each row's place: its lane's next, plus how many of its lane precede it here.
        place = np.arange(block.size) - (np.cumsum(in_block) - in_block)[block]
        place += next_place[block]
        out[place] = rows[a : a + _BATCH_SLICES][order]
        next_place += in_block
    return out


def _batches(cuts: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of runs of consecutive pieces (`cuts`: where each piece ends, the
    last at the end) of about `_BATCH_SLICES` slices: each ends at the last cut before
    a multiple of it (a piece longer than that makes one batch of its own)."""
    n = int(cuts[-1])
    marks = np.arange(_BATCH_SLICES, n, _BATCH_SLICES)
    taken = np.searchsorted(cuts, marks, side="right") - 1
    ends = distinct(np.append(cuts[taken[taken >= 0]], n))
    return list(zip([0, *ends[:-1].tolist()], ends.tolist()))


def _crossing_rows(model: TraceModel, rows: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """The rows (grouped by lane, file order inside each) that cross an earlier slice."""
    starts, ends = _times(model, rows)
    order = grouped_nesting_order(lane, starts, ends)  # file order breaks ties
    if order is not None:
        # The times gathered again in the new order, not copied beside the old ones.
        del starts, ends
        rows = rows[order]
        lane = lane[order]
        del order
        starts, ends = _times(model, rows)
    if rows.size <= _BATCH_SLICES or _nesting is not None:
        # The compiled walk holds 4 bytes a slice, less than the cuts below would.
        return rows[lane_crossings(lane, starts, ends, NEST_TOLERANCE_US)]
    # A slice that starts when every earlier one of its lane has ended (by its low) has no
    # witness before it, nor has any slice after it: the lane is cut there.
    free = np.maximum.accumulate(ends)[:-1] <= starts[1:] + NEST_TOLERANCE_US
    free |= lane[1:] != lane[:-1]
    cuts = np.append(np.flatnonzero(free) + 1, rows.size)
    del free
    return np.concatenate(
        [
            rows[a:b][lane_crossings(lane[a:b], starts[a:b], ends[a:b], NEST_TOLERANCE_US)]
            for a, b in _batches(cuts)
        ]
    )


def _times(model: TraceModel, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The slices' starts and ends (start + duration, summed into the durations read:
    the same floats, one array fewer)."""
    starts = model.events["ts"][rows].astype(np.float64, copy=False)
    ends = model.events["dur"][rows].astype(np.float64, copy=False)
    ends += starts
    return starts, ends


_COMPILE_METADATA = re.compile(r"_data: compile_id=")


def is_compile_metadata(name: str) -> bool:
    """torch.compile's `dynamo_timed` metadata ranges (`<phase>_data: compile_id=0/0`): a
    record_function beside its timed range, not inside it, by construction."""
    return _COMPILE_METADATA.search(name) is not None


def kernel_before_launch(model: TraceModel) -> Finding:
    """GPU activities (kernels, copies, sets) that start more than `LAUNCH_TOLERANCE_US`
    before the runtime call that launched them (linked by correlation id). None on a trace
    without GPU activity (a CPU-only trace: 0, not unknown); unknown when there is some but
    none is linked to its launch."""
    gpu = trusted_only(model, gpu_rows(model))
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
    # One integer per (category, id), in a range as narrow as the ids' own: grouped by
    # marking (unique_inverse), not sorted.
    flow_id = model.column_at("flow_id", rows).astype(np.int64)
    low = int(flow_id.min())
    flow_id -= low
    key = ev["cat"][rows].astype(np.int64) * (int(flow_id.max()) + 1) + flow_id
    del flow_id
    flows, which = unique_inverse(key)
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
    if mark >= 0:  # the marks' starts alone, not a column of -inf beside every start
        marks = np.append(ev["ts"][ev["name"] == mark], -np.inf)
        end = max(end, float(np.nanmax(marks)))
    # A negative or NaN duration counts as none (np.fmax passes NaN over). The ends a
    # block of rows at a time: a column of them (7 MB at 925k rows) was the Overview's peak.
    ts, dur = ev["ts"], ev["dur"]
    outside = np.empty(ts.size, dtype=bool)
    for a in range(0, ts.size, _BATCH_SLICES):
        ends = np.fmax(dur[a : a + _BATCH_SLICES], 0.0)
        ends += ts[a : a + _BATCH_SLICES]
        np.greater(ends, end + WINDOW_TOLERANCE_US, out=outside[a : a + _BATCH_SLICES])
    outside |= ts < start - WINDOW_TOLERANCE_US
    outside &= (ev["kind"] != Kind.TRACE_SPAN) & (ev["name"] != mark)
    drop_untrusted(model, outside)
    return Finding(np.flatnonzero(outside))


def negative_duration(model: TraceModel) -> Finding:
    """Events whose `dur` was negative: the loader reads them as 0 and counts them in its
    warnings (`ingest/columns.negative_duration_warning`); which rows they were is not
    kept, so there are no examples."""
    return Finding(_NONE, count=negative_durations(model.warnings))


def truncated_file(model: TraceModel) -> Finding:
    """The file was read only in part (cut short, or past a limit): 1, else 0."""
    return Finding(_NONE, count=1 if model.partial else 0)


def unread_categories(model: TraceModel) -> Finding:
    """Slices whose category no view reads (`Kind.OTHER`): a category Kineto writes that no
    view reads (`KNOWN_UNREAD_CATEGORIES`), or one unknown to kinetoscope. Instants (drawn
    as marks), metadata, flows and counters take their kind from their phase."""
    ev = model.events
    phases = (Phase.COMPLETE, Phase.BEGIN)
    other = (ev["kind"] == Kind.OTHER) & np.isin(ev["ph"], np.array(phases, dtype=ev["ph"].dtype))
    return Finding(np.flatnonzero(other))


def stream_ids_are_queues(model: TraceModel) -> Finding:
    """The GPU activities of a ROCm trace whose stream ids are HSA queues (`rocm_streams`)."""
    if not rocm_streams.stream_ids_are_queues(model):
        return Finding(_NONE)
    return Finding(gpu_rows(model))
