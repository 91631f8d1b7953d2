"""What the Kernel view reads of the kernel fields CUPTI writes beside the launch
configuration (docs/formats.md, "Kernel fields"):

- `occupancy.limitingFactors` (kineto #1322, PyTorch 2.12+): what bounds the kernel's
  theoretical occupancy ("REGS", "SMEM", "WARPS", "BLOCKS", "BARRIERS", joined by "|";
  "none"); a row shows its longest call's, as it shows that call's grid and block.
- `priority` (kineto #1361, built with CUDA 13.1+): the stream priority the kernel ran at
  (lower is more urgent); the longest call's.
- `queued`: when the launch entered the stream's queue (`core/queued_times.py`: how it
  is read, and when not). A row's `queue_mean_us` is queued → start, the wait behind the
  stream's earlier work; the view says how the trace's values read (`queued_times`).

`channel` / `channel_type` (kineto #1420) are not read: a hardware channel id answers
none of the view's questions."""

from __future__ import annotations

from typing import Union

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from ..core.queued_times import QueuedTimes, queued_times


class _Occupancy(msgspec.Struct, gc=False):
    limiting: Union[str, None] = msgspec.field(default=None, name="limitingFactors")


class _CuptiArgs(msgspec.Struct, gc=False):
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
    model: TraceModel, rows: np.ndarray, group: np.ndarray, longest: np.ndarray, n: int
) -> CuptiFields:
    """`rows` the kernels, `group` each row's group of `n`, `longest` each group's longest
    call (a position in `rows`)."""
    firsts = model.args_of(rows[longest], _CuptiArgs)
    priority = [a.priority for a in firsts]
    limited = [_limit_of(a.occupancy) for a in firsts]
    queue = np.full(n, np.nan)
    found = queued_times(model, rows)
    if found.state != "recorded":
        return CuptiFields(priority, limited, queue, found.state)
    wait = found.waits_ns(model, rows)
    has = np.isfinite(wait)
    total = np.bincount(group[has], weights=wait[has], minlength=n)
    count = np.bincount(group[has], minlength=n)
    queue[count > 0] = total[count > 0] / count[count > 0]
    return CuptiFields(priority, limited, queue, "recorded")


def _limit_of(occupancy: object) -> Union[str, None]:
    if isinstance(occupancy, _Occupancy) and isinstance(occupancy.limiting, str):
        return occupancy.limiting or None
    return None
