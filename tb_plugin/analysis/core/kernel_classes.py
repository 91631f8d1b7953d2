"""Each kernel's class (work, matrix-core use, collective, family) from its name class
(`taxonomy`) and its launching op chain (the op tree): a kernel no name rule calls
communication or matrix work, launched inside a communication op, is communication. Every
view reads `kernel_classes`, so the pages agree. Kept apart from `taxonomy` because the op
tree itself reads name classes."""

from __future__ import annotations

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, name_flags
from .optree import op_tree
from .rules import collective_type
from .taxonomy import (
    MATRIX_NO,
    MATRIX_UNKNOWN,
    MATRIX_YES,
    WORKS,
    NameClass,
    is_comm_op,
    name_classes,
)
from .tree_arrays import inherit_missing


class KernelClasses(msgspec.Struct):
    """Per kernel row (`rows`, ascending): work code (index into WORKS), matrix-core use,
    the collective type (None when not communication or unknown) and the family id."""

    rows: np.ndarray
    work: np.ndarray  # int8, index into WORKS
    matrix: np.ndarray  # int8: 1 yes, 0 no, -1 unknown
    collective: list[str | None]
    family: list[str | None]
    via_op: np.ndarray  # bool: communication because of the launching op chain

    @property
    def comm(self) -> np.ndarray:
        return self.work == WORKS.index("communication")


def kernel_classes(model: TraceModel) -> KernelClasses:
    return model.derived("_kernel_classes", _classify_kernels)


def keep_kernel_classes(model: TraceModel, classes: KernelClasses) -> None:
    """Keeps `classes` as the model's: found for a batch of ranks and split back
    (`rank_batches.share_tables`), the same classes."""
    model.derived("_kernel_classes", lambda _: classes)


def _classify_kernels(model: TraceModel) -> KernelClasses:
    rows = complete_rows(model, Kind.KERNEL)
    by_name = name_classes(model)
    codes = model.events["name"][rows]
    work_of_name = np.array([WORKS.index(c.work) for c in by_name], dtype=np.int8)
    matrix_of_name = np.array([c.matrix_core for c in by_name], dtype=np.int8)
    work = work_of_name[codes] if rows.size else np.zeros(0, np.int8)
    matrix = matrix_of_name[codes] if rows.size else np.zeros(0, np.int8)
    # Per name, then per kernel by one object-array lookup (not a Python pass per kernel).
    collective: list[str | None] = _per_name(by_name, "collective")[codes].tolist()
    family: list[str | None] = _per_name(by_name, "family")[codes].tolist()
    comm_code = WORKS.index("communication")
    # The op chain says communication only where the name says neither communication nor
    # matrix work: where every kernel's name says one (a job of NCCL and GEMM kernels), the
    # op tree is not built for it.
    open_to_op = (work != comm_code) & (matrix != MATRIX_YES)
    op_names = np.full(rows.size, -1, dtype=np.int64)
    if open_to_op.any():
        op_names = _launching_comm_op(model, rows)
    via_op = (op_names >= 0) & open_to_op
    for i in np.flatnonzero(via_op).tolist():
        op_name = model.names[int(op_names[i])]
        collective[i] = collective_type(op_name)
        family[i] = "launched_by_communication_op"
    work[via_op] = comm_code
    matrix[via_op] = MATRIX_NO
    return KernelClasses(rows, work, matrix, collective, family, via_op)


def _per_name(by_name: list[NameClass], field: str) -> np.ndarray:
    out = np.empty(len(by_name), dtype=object)
    out[:] = [getattr(c, field) for c in by_name]
    return out


def _launching_comm_op(model: TraceModel, kernels: np.ndarray) -> np.ndarray:
    """For each kernel row, the name code of the innermost communication op in its
    launching op chain, or -1."""
    out = np.full(kernels.size, -1, dtype=np.int64)
    comm_name = name_flags(model, is_comm_op)
    # No communication op among the trace's names (a one-GPU job): no chain holds one, and
    # the op tree is not built for it here (~0.13 s of a 1 GB trace's 0.45 s Overview).
    if kernels.size == 0 or not comm_name.any():
        return out
    tree = op_tree(model)
    if len(tree) == 0 or tree.gpu.size == 0:
        return out
    names = model.events["name"][tree.rows]
    own = comm_name[names]
    inside = inherit_missing(tree.parent, tree.levels, np.where(own, names, -1).astype(np.int64))
    pos = np.searchsorted(tree.gpu, kernels)
    pos = np.minimum(pos, tree.gpu.size - 1)
    found = tree.gpu[pos] == kernels
    node = np.where(found, tree.gpu_node[pos], -1)
    has = node >= 0
    out[has] = inside[node[has]]
    return out


def matrix_share(dur: np.ndarray, matrix: np.ndarray) -> tuple[float, float, float, float | None]:
    """(yes time, no time, unknown time, yes share of the known time or None)."""
    yes = float(dur[matrix == MATRIX_YES].sum())
    no = float(dur[matrix == MATRIX_NO].sum())
    unknown = float(dur[matrix == MATRIX_UNKNOWN].sum())
    known = yes + no
    return yes, no, unknown, (yes / known if known > 0 else None)
