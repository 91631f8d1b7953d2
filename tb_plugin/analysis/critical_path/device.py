"""GPU activities as nodes: kernels, copies, fills and communication kernels, with their
stream order, and the waits between streams the trace records (`cuda_sync` events of kind
"Stream Wait Event": which stream's work, up to which `cudaEventRecord`, the waiting stream
waited for). Launches link through the correlation id (`core/launches.py`): a graph
replay's kernels all hang off their one graph launch call."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.common import complete_rows, launch_rows, name_flags
from ..core.host_ranges import snap_ns
from ..core.kernel_classes import kernel_classes
from ..core.launches import gpu_work, launch_family
from .graph import COLLECTIVE, KERNEL, MEMCPY, MEMSET

_KINDS = {int(Kind.KERNEL): KERNEL, int(Kind.MEMCPY): MEMCPY, int(Kind.MEMSET): MEMSET}


@dataclass
class Activities:
    """GPU activities sorted by (device, stream, start)."""

    rows: np.ndarray
    kind: np.ndarray  # graph node kinds
    device: np.ndarray
    stream: np.ndarray
    start: np.ndarray  # µs on the host pieces' grid
    end: np.ndarray
    launch: np.ndarray  # launch call row, -1
    launch_start: np.ndarray  # µs, NaN where no launch

    def __len__(self) -> int:
        return int(self.rows.size)

    def previous_on_stream(self) -> np.ndarray:
        """Index of the activity before each on its stream, -1 for the first."""
        same = np.zeros(self.rows.size, dtype=bool)
        same[1:] = (self.device[1:] == self.device[:-1]) & (self.stream[1:] == self.stream[:-1])
        return np.where(same, np.arange(self.rows.size) - 1, -1)


def activities(model: TraceModel, origin: float) -> Activities:
    work = gpu_work(model)
    ev = model.events
    rows = work.rows
    start = snap_ns(ev["ts"][rows], origin)
    end = snap_ns(ev["ts"][rows] + ev["dur"][rows], origin)
    kind = _activity_kind(ev["kind"][rows])
    classes = kernel_classes(model)
    if classes.rows.size and rows.size:
        pos = np.minimum(np.searchsorted(classes.rows, rows), classes.rows.size - 1)
        comm = (classes.rows[pos] == rows) & classes.comm[pos]
        kind[comm] = COLLECTIVE
    launch_start = np.full(rows.size, np.nan)
    linked = work.launch >= 0
    launch_start[linked] = snap_ns(ev["ts"][work.launch[linked]], origin)
    order = np.lexsort((start, work.stream, work.device))
    return Activities(
        rows=rows[order],
        kind=kind[order],
        device=work.device[order],
        stream=work.stream[order],
        start=start[order],
        end=end[order],
        launch=work.launch[order],
        launch_start=launch_start[order],
    )


def _activity_kind(event_kind: np.ndarray) -> np.ndarray:
    """Per GPU event, its activity kind (`_KINDS`; any other kind: a kernel)."""
    table = np.full(max(_KINDS) + 1, KERNEL, np.int8)
    table[list(_KINDS)] = list(_KINDS.values())
    known = (event_kind >= 0) & (event_kind < table.size)
    return np.where(known, table[np.where(known, event_kind, 0)], KERNEL).astype(np.int8)


class SyncArgs(msgspec.Struct, gc=False):
    """What a `cuda_sync` event says it waited for."""

    sync_kind: object = msgspec.field(default=None, name="cuda_sync_kind")
    wait_on_stream: object = None
    record_corr: object = msgspec.field(default=None, name="wait_on_cuda_event_record_corr_id")


@dataclass
class EventWaits:
    """Cross-stream waits the trace records (`cuda_sync` events): activity `waited`
    (index) ends before `waiting` starts; the wait calls they placed (correlation ids);
    how many could not be linked (no record id, one in the future or not in the trace:
    their calls are left to `stream_waits.py`), and how many had no work to wait for or
    to hold (a stream with no activity on one side: nothing to link)."""

    waited: np.ndarray
    waiting: np.ndarray
    calls: np.ndarray  # correlation ids of the wait calls with a recorded sync event
    unlinked: int
    no_work: int


def event_waits(model: TraceModel, acts: Activities, origin: float) -> EventWaits:
    calls = launch_rows(model)
    syncs = complete_rows(model, Kind.SYNC)
    empty = np.zeros(0, np.int64)
    if syncs.size == 0:
        return EventWaits(empty, empty, empty, 0, 0)
    corr = model.column_at("correlation", calls)
    order = np.argsort(corr, kind="stable")
    sorted_corr, by_corr = corr[order], calls[order]
    waited: list[int] = []
    waiting: list[int] = []
    wait_calls: list[int] = []
    unlinked = no_work = 0
    for row, args in zip(syncs.tolist(), model.args_of(syncs, SyncArgs)):
        if args.sync_kind != "Stream Wait Event":
            continue
        wait_corr = int(model.column_at("correlation", row))
        record = _call_start(sorted_corr, by_corr, args.record_corr, model, origin)
        call = _call_start(sorted_corr, by_corr, wait_corr, model, origin)
        if record is not None and call is not None and record > call:
            record = None  # a record id in the future (a producer bug): not followed
        device, stream = int(model.column_at("device", row)), int(model.column_at("stream", row))
        pair = _linked(acts, device, args.wait_on_stream, stream, record, call)
        if pair is None:
            unlinked += 1  # its call is left to the inference from the calls around it
            continue
        wait_calls.append(wait_corr)
        if pair == NO_WORK:
            no_work += 1
        else:
            waited.append(pair[0])
            waiting.append(pair[1])
    return EventWaits(
        np.array(waited, np.int64),
        np.array(waiting, np.int64),
        np.array(wait_calls, np.int64),
        unlinked,
        no_work,
    )


NO_WORK = (-1, -1)  # a wait with no activity on one of its streams: nothing to link


def _call_start(
    sorted_corr: np.ndarray, rows: np.ndarray, corr: object, model: TraceModel, origin: float
) -> float | None:
    if not isinstance(corr, int) or corr < 0 or sorted_corr.size == 0:
        return None
    i = int(np.searchsorted(sorted_corr, corr))
    if i >= sorted_corr.size or sorted_corr[i] != corr:
        return None
    return float(snap_ns(np.array([model.events["ts"][rows[i]]]), origin)[0])


def _linked(
    acts: Activities,
    device: int,
    recorded_stream: object,
    waiting_stream: int,
    record_at: float | None,
    wait_at: float | None,
) -> tuple[int, int] | None:
    """(the last activity of the recorded stream launched before the record call, the
    first of the waiting stream launched after the wait call); NO_WORK when one side has
    no such activity; None when the calls are not in the trace."""
    if record_at is None or wait_at is None or not isinstance(recorded_stream, int):
        return None
    on_device = acts.device == device
    recorded = np.flatnonzero(on_device & (acts.stream == recorded_stream))
    recorded = recorded[acts.launch_start[recorded] <= record_at]
    after = np.flatnonzero(on_device & (acts.stream == waiting_stream))
    after = after[acts.launch_start[after] >= wait_at]
    if recorded.size == 0 or after.size == 0:
        return NO_WORK
    return int(recorded[-1]), int(after[0])


def blocking_targets(
    acts: Activities, call_start: np.ndarray, call_end: np.ndarray, slack_us: float
) -> np.ndarray:
    """Per host call that may block on the GPU (a synchronize, a copy), the activity it
    waited for: the latest-ending one launched at or before the call's start that ended
    inside the call, no more than `slack_us` before the call returned; -1 when none (the
    call did not wait on any work the trace shows)."""
    out = np.full(call_start.size, -1, dtype=np.int64)
    if len(acts) == 0 or call_start.size == 0:
        return out
    by_end = np.argsort(acts.end, kind="stable")
    ends = acts.end[by_end]
    launched = acts.launch_start[by_end]
    upto = np.searchsorted(ends, call_end, side="right")
    for i, (k, t0, t1) in enumerate(zip(upto.tolist(), call_start.tolist(), call_end.tolist())):
        j = k - 1
        while j >= 0 and ends[j] > t0 and not launched[j] <= t0:
            j -= 1
        if j >= 0 and ends[j] > t0 and t1 - ends[j] <= slack_us:
            out[i] = by_end[j]
    return out


def blocking_candidates(model: TraceModel, runtime_rows: np.ndarray) -> np.ndarray:
    """Which of these calls may block the host until GPU work ends: synchronize calls and
    copies (a copy to pageable host memory returns when it is done, async or not)."""
    names = model.events["name"][runtime_rows]
    return name_flags(model, _may_block)[names]


def _may_block(name: str) -> bool:
    family = launch_family(name)
    return family == "synchronize" or (family == "memory" and "Memcpy" in name)
