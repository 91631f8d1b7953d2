"""When each GPU activity entered its stream's queue (CUPTI's `queued`), on the file's time
axis: what the Kernels view's queue wait and the GPU-idle view's causes read.

libkineto writes `queued` on every kernel: 0 unless CUPTI's latency timestamps were enabled
(libkineto never enables them), in µs before kineto #907 (April 2024) and on CUPTI's ns
clock since. A trace's values are used only where they land between each kernel's launch
call and its start on the file's time axis (`baseTimeNanoseconds` + `ts`), the unit tried
both ways; otherwise they are on a clock the file's times were converted from, and no
answer reads them (docs/formats.md)."""

from __future__ import annotations

from typing import Literal, Union

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from .common import launches_of

QueuedTimes = Literal["not recorded", "recorded", "other clock"]
# A value at most this far outside [launch call start, kernel start] still lands there: the
# file's times are µs with 3 decimals, the host's and the GPU's clocks drift by ~µs.
_SLACK_NS = 2_000.0
_LANDED_SHARE = 0.9  # of the calls with a value: the clock is the file's
_SAMPLE = 256  # activities read first: a trace records `queued` on all or none


class _Queued(msgspec.Struct, gc=False):
    queued: Union[int, float, None] = None


class QueuedNs(msgspec.Struct):
    """Per activity asked, the ns from `origin_us` it was queued at (float64, NaN: none),
    and how the trace's `queued` reads."""

    at: np.ndarray
    state: QueuedTimes
    origin_us: float = 0.0  # what `at` counts from

    def waits_ns(self, model: TraceModel, rows: np.ndarray) -> np.ndarray:
        """Per activity asked (`rows`, as asked), ns from entering its queue to its start
        (NaN: none)."""
        start = (model.events["ts"][rows].astype(np.float64) - self.origin_us) * 1000.0
        return np.maximum(start - self.at, 0.0)


def queued_times(
    model: TraceModel,
    rows: np.ndarray,
    launchers: np.ndarray | None = None,
    origin_us: float | None = None,
) -> QueuedNs:
    """`rows` GPU activities, `launchers` their launch calls (-1: none), `origin_us` a
    whole µs at or before them all; either found here when not given, and only when the
    trace records `queued`."""
    none = QueuedNs(np.full(rows.size, np.nan), "not recorded")
    sample = model.args_of(rows[:_SAMPLE], _Queued)
    if not any(_count(a.queued) for a in sample):
        return none
    queued = np.array([_count(a.queued) for a in model.args_of(rows, _Queued)], dtype=np.int64)
    if launchers is None:
        launchers = launches_of(model, rows)
    if origin_us is None:
        origin_us = first_whole_us(model, rows)
    at = _on_file_axis(model, rows, launchers, queued, origin_us)
    if at is None:
        return QueuedNs(none.at, "other clock", origin_us)
    return QueuedNs(at, "recorded", origin_us)


def _count(value: object) -> int:
    """A `queued` value as a whole count (0: none; past int64 or negative: none)."""
    if isinstance(value, (int, float)) and 0 < value < 2**62:
        return int(value)
    return 0


def _on_file_axis(
    model: TraceModel,
    rows: np.ndarray,
    launchers: np.ndarray,
    queued: np.ndarray,
    origin_us: float,
) -> Union[np.ndarray, None]:
    """Each value in ns from `origin_us` (a whole µs of the file's axis; NaN where it has
    none or does not land), on the unit whose values land between their launch calls and
    their activities' starts; None when neither does."""
    ts = model.events["ts"]
    base = model.header.get("baseTimeNanoseconds")
    # Subtracted in integers first: epoch ns as doubles are only good to ~256 ns.
    origin_ns = (int(base) if isinstance(base, (int, float)) else 0) + int(origin_us) * 1000
    start = (ts[rows].astype(np.float64) - origin_us) * 1000.0
    linked = launchers >= 0
    call = np.full(rows.size, np.nan)
    call[linked] = (ts[launchers[linked]].astype(np.float64) - origin_us) * 1000.0
    known = queued > 0
    for scale in (1, 1000):  # ns since kineto #907, µs before
        if int(queued.max()) > np.iinfo(np.int64).max // scale:
            continue  # not µs: too large to be
        at = (queued * scale - origin_ns).astype(np.float64)
        after_call = ~linked | (at >= call - _SLACK_NS)
        landed = known & after_call & (at <= start + _SLACK_NS)
        if landed.sum() >= _LANDED_SHARE * known.sum():
            return np.where(landed, np.minimum(at, start), np.nan)
    return None


def first_whole_us(model: TraceModel, rows: np.ndarray) -> float:
    """The whole µs at or before the first of `rows`' starts (0 when none is finite)."""
    times = model.events["ts"][rows].astype(np.float64)
    finite = times[np.isfinite(times)]
    return float(np.floor(finite.min())) if finite.size else 0.0
