"""Cross-stream waits a trace records only as runtime calls: a `cudaEventRecord` (or
`hipEventRecord`) then a `cudaStreamWaitEvent` (`hipStreamWaitEvent`), with no `cuda_sync`
event saying which stream waited for which (the profiler's default settings record none).

Which work a wait call made wait is inferred, and every inferred edge is said:

- **by timing**: the first activity the thread launched after the wait call (a stream is
  made to wait right before the work that needs it: c10d's collectives, DDP's buckets,
  `Stream.wait_stream`) started later than its own stream and launch allowed, within
  CONFIRM_US after an activity of another stream of its device ended, one that a record
  call captured before the wait (a record captures the last work launched to its stream):
  that activity is what it waited for (a wait on an event recorded long before, DDP's
  gradient copies waiting for each bucket's all-reduce);
- **by call order** when the timing cannot tell (the wait was met before the work could
  start): the thread's last record call before the wait captured the last activity the
  thread launched before it (the record of its current stream: c10d records the current
  stream and makes the collective's stream wait on it), and the wait held the first
  activity the thread launched after it on another stream (a wait on a stream's own
  event holds nothing);
- otherwise the wait is not placed (the waiting work keeps its recorded delay after its
  own stream and launch), and counted: as met at once where that work started within
  CONFIRM_US of what its own stream and launch allowed (no wait shows: a wait on a stream
  that ran no work, as c10d's of a one-rank group), else as not placed.

An inferred edge never contradicts the recorded times: the waited activity ends before the
waiting one starts (ORDER_SLACK_US for clocks rounded apart)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import launch_rows, name_flags, thread_keys
from ..core.host_ranges import snap_ns
from .device import Activities

CONFIRM_US = 20.0  # a waiting activity starts this soon after the work it waited for
ORDER_SLACK_US = 0.5  # device times rounded apart by less than this are taken as in order


@dataclass
class InferredWaits:
    waited: np.ndarray  # activity index (Activities order)
    waiting: np.ndarray
    by_timing: np.ndarray  # bool per edge: confirmed by timing (else by call order)
    calls: int  # wait calls with no recorded sync event
    no_work: int  # no work launched after them on their thread: nothing waited
    met: int  # not placed, but the work after them was not held: no wait shows
    unplaced: int  # could not be placed, and the work after them started late

    @property
    def placed(self) -> int:
        return int(self.waited.size)

    def said(self) -> str:
        """The counts as the answer's assumptions say them."""
        timed = int(self.by_timing.sum())
        text = (
            f"{self.calls} cudaStreamWaitEvent calls without a cuda_sync event that names "
            f"what they wait for: {self.placed} cross-stream waits inferred ({timed} by "
            f"timing: the waiting work started within {CONFIRM_US:g} µs after the other "
            "stream's work a record call captured, later than its own stream and launch "
            f"allowed; {self.placed - timed} by call order: the thread's last record before "
            "the wait, of its current stream, held its next work on another stream)"
        )
        if self.no_work:
            text += f"; {self.no_work} with no work launched after them"
        if self.met:
            text += (
                f"; {self.met} held nothing that shows: the work after them started within "
                f"{CONFIRM_US:g} µs of what its own stream and launch allowed"
            )
        if self.unplaced:
            text += (
                f"; {self.unplaced} could not be placed: the work after them keeps its "
                "recorded delay after its own stream and launch"
            )
        return text


def is_stream_wait(name: str) -> bool:
    return name.startswith(("cudaStreamWaitEvent", "hipStreamWaitEvent"))


def is_event_record(name: str) -> bool:
    return name.startswith(("cudaEventRecord", "hipEventRecord"))


def _no_waits(calls: int = 0, no_work: int = 0) -> InferredWaits:
    empty = np.zeros(0, np.int64)
    return InferredWaits(empty, empty, np.zeros(0, bool), calls, no_work, 0, 0)


def inferred_waits(
    model: TraceModel, acts: Activities, origin: float, recorded: np.ndarray
) -> InferredWaits:
    """The waits of the wait calls whose correlation id is not in `recorded` (those with a
    `cuda_sync` event, placed from it)."""
    ev = model.events
    calls = launch_rows(model)
    names = ev["name"][calls]
    waits = calls[name_flags(model, is_stream_wait)[names]]
    if waits.size and recorded.size:
        corr = model.column_at("correlation", waits)
        waits = waits[~np.isin(corr, recorded)]
    if waits.size == 0:
        return _no_waits()
    if len(acts) == 0:
        return _no_waits(int(waits.size), int(waits.size))
    records = calls[name_flags(model, is_event_record)[names]]
    ctx = _Context(model, acts, origin, records)
    wait_time = snap_ns(ev["ts"][waits], origin)
    wait_thread = thread_keys(model, waits)
    return ctx.place(wait_thread, wait_time)


class _Context:
    """What placing a wait reads: each thread's launches in order, its record calls, and
    per activity the time a record call first captured it (inf: none did)."""

    def __init__(
        self, model: TraceModel, acts: Activities, origin: float, records: np.ndarray
    ) -> None:
        ev = model.events
        self.acts = acts
        launched = np.flatnonzero(acts.launch >= 0)
        thread = thread_keys(model, acts.launch[launched])
        order = np.lexsort((acts.launch_start[launched], thread))
        self.launched = launched[order]
        self.launch_thread = thread[order]
        self.launch_time = acts.launch_start[self.launched]
        rec_time = snap_ns(ev["ts"][records], origin) if records.size else np.zeros(0)
        rec_thread = thread_keys(model, records) if records.size else np.zeros(0, np.int64)
        rec_order = np.lexsort((rec_time, rec_thread))
        self.rec_thread, self.rec_time = rec_thread[rec_order], rec_time[rec_order]
        self.captured = _captured_at(acts, np.sort(rec_time))
        self.by_end = np.argsort(acts.end, kind="stable")
        self.ends = acts.end[self.by_end]
        previous = acts.previous_on_stream()
        self.own_ready = np.where(previous >= 0, acts.end[np.maximum(previous, 0)], -np.inf)
        self.own_ready = np.fmax(self.own_ready, acts.launch_start)

    def place(self, wait_thread: np.ndarray, wait_time: np.ndarray) -> InferredWaits:
        waited: list[int] = []
        waiting: list[int] = []
        timed: list[bool] = []
        no_work = met = unplaced = 0
        for thread, t in zip(wait_thread.tolist(), wait_time.tolist()):
            lo = int(np.searchsorted(self.launch_thread, thread, side="left"))
            hi = int(np.searchsorted(self.launch_thread, thread, side="right"))
            i = lo + int(np.searchsorted(self.launch_time[lo:hi], t, side="right"))
            if i >= hi:
                no_work += 1
                continue
            n = int(self.launched[i])
            k = self._by_timing(n, t)
            if k >= 0:
                waited.append(k)
                waiting.append(n)
                timed.append(True)
                continue
            pair = self._by_order(thread, t, lo, i, hi)
            if pair is None:
                held = self.acts.start[n] > self.own_ready[n] + CONFIRM_US
                unplaced += int(held)
                met += int(not held)
                continue
            waited.append(pair[0])
            waiting.append(pair[1])
            timed.append(False)
        return InferredWaits(
            np.array(waited, np.int64),
            np.array(waiting, np.int64),
            np.array(timed, bool),
            int(wait_thread.size),
            no_work,
            met,
            unplaced,
        )

    def _by_timing(self, n: int, wait_at: float) -> int:
        """The activity of another stream of `n`'s device that ended last, at most
        CONFIRM_US before `n` started, captured by a record before the wait, when it
        ended later than `n`'s own stream and launch allowed `n` to start; else -1."""
        acts = self.acts
        start = float(acts.start[n])
        lo = int(np.searchsorted(self.ends, start - CONFIRM_US, side="left"))
        hi = int(np.searchsorted(self.ends, start + ORDER_SLACK_US, side="right"))
        for j in range(hi - 1, lo - 1, -1):
            k = int(self.by_end[j])
            if self.ends[j] <= self.own_ready[n]:
                return -1
            if (
                acts.device[k] == acts.device[n]
                and acts.stream[k] != acts.stream[n]
                and self.captured[k] < wait_at
            ):
                return k
        return -1

    def _by_order(
        self, thread: int, wait_at: float, lo: int, after: int, hi: int
    ) -> tuple[int, int] | None:
        """(the last activity `thread` launched before its last record call before the
        wait: what the record of its current stream captured, the first activity it
        launched after the wait on another stream of that device: a wait on a stream's
        own event holds nothing), or None."""
        r_lo = int(np.searchsorted(self.rec_thread, thread, side="left"))
        r_hi = int(np.searchsorted(self.rec_thread, thread, side="right"))
        r = r_lo + int(np.searchsorted(self.rec_time[r_lo:r_hi], wait_at, side="left")) - 1
        if r < r_lo:
            return None
        before = lo + int(np.searchsorted(self.launch_time[lo:after], self.rec_time[r])) - 1
        if before < lo:
            return None
        acts = self.acts
        k = int(self.launched[before])
        later = self.launched[after:hi]
        other = later[
            (acts.stream[later] != acts.stream[k]) & (acts.device[later] == acts.device[k])
        ]
        if other.size == 0:
            return None
        n = int(other[0])
        if acts.end[k] > acts.start[n] + ORDER_SLACK_US:
            return None  # the waiting work started first: not this record
        return k, n


def _captured_at(acts: Activities, record_times: np.ndarray) -> np.ndarray:
    """Per activity, the first record call after its launch and before the next launch to
    its stream (which a later record would capture instead); inf when none."""
    out = np.full(len(acts), np.inf)
    if record_times.size == 0:
        return out
    launch = acts.launch_start
    pos = np.searchsorted(record_times, launch, side="right")
    has = (pos < record_times.size) & np.isfinite(launch)
    first = np.full(len(acts), np.inf)
    first[has] = record_times[pos[has]]
    following = np.full(len(acts), np.inf)
    same = np.zeros(len(acts), dtype=bool)
    same[:-1] = (acts.device[1:] == acts.device[:-1]) & (acts.stream[1:] == acts.stream[:-1])
    following[:-1] = np.where(same[:-1], launch[1:], np.inf)
    following = np.where(np.isnan(following), np.inf, following)
    keep = first < following
    out[keep] = first[keep]
    return out
