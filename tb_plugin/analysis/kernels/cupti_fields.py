"""What the Kernel view reads of the kernel fields CUPTI writes beside the launch
configuration (docs/formats.md, "Kernel fields"):

- `occupancy.limitingFactors` (kineto #1322, PyTorch 2.12+): what bounds the kernel's
  theoretical occupancy ("REGS", "SMEM", "WARPS", "BLOCKS", "BARRIERS", joined by "|";
  "none"); a row shows its longest call's, as it shows that call's grid and block.
- `priority` (kineto #1361, built with CUDA 13.1+): the stream priority the kernel ran at
  (lower is more urgent); the longest call's.
- `queued`: when the launch entered the stream's queue. libkineto writes it on every
  kernel, 0 unless CUPTI's latency timestamps were enabled (libkineto never enables them),
  in µs before kineto #907 (April 2024) and on CUPTI's ns clock since. A row's
  `queue_mean_us` (queued → start: the wait behind the stream's earlier work) is given
  only where the trace's values land between each kernel's launch call and its start
  (the unit tried both ways; on the file's time axis, `baseTimeNanoseconds` + `ts`);
  otherwise the view says why not (`queued_times`).

`channel` / `channel_type` (kineto #1420) are not read: a hardware channel id answers
none of the view's questions."""

from __future__ import annotations

from typing import Literal, Union

import msgspec
import numpy as np

from ...model.trace_model import TraceModel

QueuedTimes = Literal["not recorded", "recorded", "other clock"]
# A value at most this far outside [launch call start, kernel start] still lands there: the
# file's times are µs with 3 decimals, the host's and the GPU's clocks drift by ~µs.
_SLACK_NS = 2_000.0
_LANDED_SHARE = 0.9  # of the calls with a value: the clock is the file's


class _Occupancy(msgspec.Struct, gc=False):
    limiting: Union[str, None] = msgspec.field(default=None, name="limitingFactors")


class _CuptiArgs(msgspec.Struct, gc=False):
    queued: Union[int, float, None] = None
    priority: Union[int, None] = None
    occupancy: Union[_Occupancy, float, str, None] = None


class CuptiFields(msgspec.Struct):
    """Per group (the Kernel view's), its longest call's priority and occupancy limit,
    and its mean queue wait (ns, NaN: none known); how the trace's `queued` reads."""

    priority: list[Union[int, None]]
    limited_by: list[Union[str, None]]
    queue_mean_ns: np.ndarray
    queued_times: QueuedTimes


def cupti_fields(
    model: TraceModel, rows: np.ndarray, launchers: np.ndarray, group: np.ndarray,
    longest: np.ndarray, n: int,
) -> CuptiFields:  # fmt: skip
    """`rows` the kernels, `launchers` their launch calls (-1: none), `group` each row's
    group of `n`, `longest` each group's longest call (a position in `rows`)."""
    firsts = model.args_of(rows[longest], _CuptiArgs)
    priority = [a.priority for a in firsts]
    limited = [_limit_of(a.occupancy) for a in firsts]
    queue = np.full(n, np.nan)
    if not any(isinstance(a.queued, (int, float)) and a.queued > 0 for a in firsts):
        return CuptiFields(priority, limited, queue, "not recorded")
    every = model.args_of(rows, _CuptiArgs)
    queued = np.array([_ns_count(a.queued) for a in every], dtype=np.int64)
    wait = _queue_wait_ns(model, rows, launchers, queued)
    if wait is None:
        return CuptiFields(priority, limited, queue, "other clock")
    has = np.isfinite(wait)
    total = np.bincount(group[has], weights=wait[has], minlength=n)
    count = np.bincount(group[has], minlength=n)
    queue[count > 0] = total[count > 0] / count[count > 0]
    return CuptiFields(priority, limited, queue, "recorded")


def _ns_count(value: object) -> int:
    """A `queued` value as a whole count (0: none; past int64 or negative: none)."""
    if isinstance(value, (int, float)) and 0 < value < 2**62:
        return int(value)
    return 0


def _limit_of(occupancy: object) -> Union[str, None]:
    if isinstance(occupancy, _Occupancy) and isinstance(occupancy.limiting, str):
        return occupancy.limiting or None
    return None


def _queue_wait_ns(
    model: TraceModel, rows: np.ndarray, launchers: np.ndarray, queued: np.ndarray
) -> Union[np.ndarray, None]:
    """Per kernel, its start - `queued` in ns (NaN where it has none), on the unit (ns or
    µs) whose values land between their launch calls and their kernels' starts; None when
    neither does."""
    ts = model.events["ts"]
    base = model.header.get("baseTimeNanoseconds")
    # In ns after the first kernel's whole µs, subtracted in integers first: epoch ns as
    # doubles are only good to ~256 ns.
    times = ts[rows].astype(np.float64)
    if not np.isfinite(times).any():
        return None
    first_us = float(np.floor(np.nanmin(times)))
    origin_ns = (int(base) if isinstance(base, (int, float)) else 0) + int(first_us) * 1000
    start = (times - first_us) * 1000.0
    linked = launchers >= 0
    call = np.full(rows.size, np.nan)
    call[linked] = (ts[launchers[linked]].astype(np.float64) - first_us) * 1000.0
    known = queued > 0
    for scale in (1, 1000):  # ns since kineto #907, µs before
        if int(queued.max()) > np.iinfo(np.int64).max // scale:
            continue  # not µs: too large to be
        at = (queued * scale - origin_ns).astype(np.float64)
        after_call = ~linked | (at >= call - _SLACK_NS)
        landed = known & after_call & (at <= start + _SLACK_NS)
        if known.any() and landed.sum() >= _LANDED_SHARE * known.sum():
            return np.where(landed, np.maximum(start - at, 0.0), np.nan)
    return None
