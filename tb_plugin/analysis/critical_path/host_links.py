"""Links between host threads that a CPU collective backend makes and the trace does not
record: which op issued each host collective (a `gloo:all_reduce` range runs on the
backend's own thread, started by `c10d::allreduce_` on the training thread), and where
the issuing thread waited for it (`work.wait()` is no op: the wait shows as a gap on the
issuing thread that ends just after the collective does).

Both are inferred, and said so in the view's `assumptions`:
- the n-th host collective of a type is issued by the earliest communication op of that
  type (outermost, on another thread) that started before it and issued none yet;
- a gap of the issuing thread, after the issuing op, that contains the collective's end
  and ends at most WAIT_SLACK_US after it, is a wait for that collective."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import name_flags
from ..core.host_ranges import host_ranges
from ..core.rules import collective_type
from ..core.taxonomy import is_comm_op, is_host_transfer_op
from .host import Pieces

WAIT_SLACK_US = 5000.0  # a waiting thread wakes late on a busy machine (4.8 ms seen)


@dataclass
class Issue:
    """A host collective (its range position) and the op that issued it (position)."""

    transfer: int
    op: int


def issues(model: TraceModel) -> list[Issue]:
    ranges = host_ranges(model)
    if len(ranges) == 0:
        return []
    names = model.events["name"][ranges.rows]
    transfer = name_flags(model, is_host_transfer_op)[names]
    if not transfer.any():
        return []
    comm = name_flags(model, is_comm_op)[names] & ~transfer
    parent = ranges.parent
    outermost = comm & ~((parent >= 0) & comm[np.maximum(parent, 0)])
    ops = np.flatnonzero(outermost)
    ops = ops[np.argsort(ranges.start[ops], kind="stable")]
    op_types = [collective_type(model.names[int(names[i])]) for i in ops.tolist()]
    used = np.zeros(ops.size, dtype=bool)
    out = []
    transfers = np.flatnonzero(transfer)
    for t in transfers[np.argsort(ranges.start[transfers], kind="stable")].tolist():
        kind = collective_type(model.names[int(names[t])])
        for j in range(ops.size):
            if ranges.start[ops[j]] > ranges.start[t]:
                break
            same = op_types[j] is None or kind is None or op_types[j] == kind
            if not used[j] and same and ranges.thread[ops[j]] != ranges.thread[t]:
                used[j] = True
                out.append(Issue(int(t), int(ops[j])))
                break
    return out


@dataclass
class Wait:
    """A gap [start, end] of `thread` taken as waiting for host collective `transfer`
    (range position)."""

    thread: int
    start: float
    end: float
    transfer: int


def waits(model: TraceModel, pieces: Pieces, found: list[Issue]) -> list[Wait]:
    ranges = host_ranges(model)
    out = []
    for issue in found:
        thread = int(ranges.thread[issue.op])
        t_end = float(ranges.end[issue.transfer])
        lo = int(np.searchsorted(pieces.thread, thread, side="left"))
        hi = int(np.searchsorted(pieces.thread, thread, side="right"))
        ends = pieces.end[lo:hi]
        k = lo + int(np.searchsorted(ends, t_end, side="right")) - 1
        if k < lo or k + 1 >= hi:
            continue
        gap_start, gap_end = float(pieces.end[k]), float(pieces.start[k + 1])
        after_issue = gap_start >= float(ranges.end[issue.op])
        if after_issue and gap_start <= t_end <= gap_end and gap_end - t_end <= WAIT_SLACK_US:
            out.append(Wait(thread, gap_start, gap_end, issue.transfer))
    return out
