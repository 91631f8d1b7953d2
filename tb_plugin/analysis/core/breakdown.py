"""The step-time breakdown, shared by the Overview and the Distributed view's rank summaries.

Each instant of a step belongs to the highest-priority activity running then, in the order
Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec; what is left is
Other, so the parts add up to the step exactly. The exclusive share of a role is |union of
it and every role above| - |union of the roles above|, computed once per role for all steps
with prefix sums.
"""

from __future__ import annotations

import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, name_flags
from .intervals import IntervalUnion
from .kernel_classes import kernel_classes
from .rules import is_dataloader_range, is_step_name
from .steps import Steps
from .taxonomy import is_comm_op, is_host_transfer_op

ROLES = ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec")
ALL_PARTS = ROLES + ("other",)


def role_intervals(model: TraceModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Start/end arrays of every role's events, before exclusivity."""
    ev = model.events
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def span(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = ev["ts"][rows]
        return start, start + ev["dur"][rows]  # `ends`, with the starts gathered once

    classes = kernel_classes(model)
    kernels = classes.rows
    comm_kernel = classes.comm
    out["kernel"] = span(kernels[~comm_kernel])
    out["memcpy"] = span(complete_rows(model, Kind.MEMCPY))
    out["memset"] = span(complete_rows(model, Kind.MEMSET))
    host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    host_names = ev["name"][host]
    is_step = name_flags(model, is_step_name)[host_names]
    is_loader = name_flags(model, is_dataloader_range)[host_names]
    is_transfer = name_flags(model, is_host_transfer_op)[host_names]
    host_comm = is_transfer
    if kernels.size == 0:
        # A CPU-only rank: the time its threads spend inside collective calls
        # (`c10d::allreduce_` waiting on gloo included) is its communication, as in the
        # Distributed view.
        host_comm = is_transfer | name_flags(model, is_comm_op)[host_names]
    comm_rows = np.concatenate([kernels[comm_kernel], host[host_comm & ~is_step]])
    out["communication"] = span(comm_rows)
    out["runtime"] = span(complete_rows(model, Kind.RUNTIME, Kind.DRIVER))
    out["dataloader"] = span(host[is_loader & ~is_step])
    out["cpu_exec"] = span(host[~is_step & ~is_loader & ~host_comm])
    return out


def breakdown(
    model: TraceModel,
    steps: Steps,
    intervals: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> np.ndarray:
    """Exclusive time per step (rows) and part (columns, in ALL_PARTS order); `intervals`,
    the model's `role_intervals` where the caller has them already."""
    n = len(steps)
    result = np.zeros((n, len(ALL_PARTS)))
    if n == 0:
        return result
    lo, hi = steps.starts, steps.ends
    intervals = intervals if intervals is not None else role_intervals(model)
    covered_before = np.zeros(n)
    cumulative: IntervalUnion | None = None
    for j, role in enumerate(ROLES):
        if not intervals[role][0].size:
            continue  # its share is 0 and the union above unchanged (many roles are empty)
        # The union of this role and every role above: one union is one set of merged
        # intervals however it is built, so add the role to the merged ones above (few)
        # rather than merge every raw interval again.
        role_union = IntervalUnion(*intervals[role])
        cumulative = role_union if cumulative is None else cumulative.union(role_union)
        covered = cumulative.covered(lo, hi)
        result[:, j] = covered - covered_before
        covered_before = covered
    result[:, -1] = (hi - lo) - covered_before
    return np.clip(result, 0.0, None)
