"""What the Kernel view reads of each kernel's launch: its launch configuration (grid,
block, registers, shared memory; from the launching runtime call where the kernel's own
args lack it, as on AMD), the op that launched it (a replayed kernel's capturing op), and
the work it inherits from that op (roofline)."""

from __future__ import annotations

from typing import Any, Union

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import name_flags
from ..core.graph_replay import GraphReplay
from ..core.optree import op_tree
from ..core.replay_ops import replayed_kernel_ops
from ..core.roofline.work import gpu_costs, take
from ..core.rules import is_step_name

Dims = Union[tuple[int, ...], None]


class _LaunchArgs(msgspec.Struct, gc=False):
    grid: Dims = None
    block: Dims = None
    registers: Union[int, None] = msgspec.field(default=None, name="registers per thread")
    shared_memory: Union[int, None] = msgspec.field(default=None, name="shared memory")


Config = tuple[Dims, Dims, Union[int, None], Union[int, None]]


def launch_configs(
    model: TraceModel, kernels: np.ndarray, launchers: np.ndarray
) -> tuple[np.ndarray, list[Config]]:
    """A code per kernel row for its (grid, block, registers per thread, shared memory),
    and the distinct configurations. What the kernel's args lack comes from its
    launching runtime call (row in `launchers`, or -1): AMD traces put it there."""
    own = model.args_of(kernels, _LaunchArgs)
    need = [
        i
        for i, a in enumerate(own)
        if (a.grid is None or a.block is None or a.shared_memory is None) and launchers[i] >= 0
    ]
    if need:
        for i, b in zip(need, model.args_of(launchers[need], _LaunchArgs)):
            a = own[i]
            own[i] = _LaunchArgs(
                a.grid if a.grid is not None else b.grid,
                a.block if a.block is not None else b.block,
                a.registers if a.registers is not None else b.registers,
                a.shared_memory if a.shared_memory is not None else b.shared_memory,
            )
    ids: dict[Config, int] = {}
    codes = np.fromiter(
        (ids.setdefault((a.grid, a.block, a.registers, a.shared_memory), len(ids)) for a in own),
        dtype=np.int64,
        count=len(own),
    )
    return codes, list(ids)


def tree_positions(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """Where each of `rows` sits among the op tree's GPU rows (`np.searchsorted`): found
    once for the kernels and read by `kernel_costs` and `launching_ops`."""
    return np.searchsorted(op_tree(model).gpu, rows)


def kernel_costs(model: TraceModel, rows: np.ndarray, pos: np.ndarray) -> Any:
    """The work each kernel inherits from its launching op (roofline/work.py); `pos`:
    `tree_positions(model, rows)`."""
    gpu = op_tree(model).gpu
    pc = np.minimum(pos, max(gpu.size - 1, 0))
    found = (pos < gpu.size) & (gpu[pc] == rows) if gpu.size else np.zeros(rows.size, bool)
    return take(gpu_costs(model), np.where(found, pc, -1))


def launching_ops(
    model: TraceModel, rows: np.ndarray, replay: GraphReplay | None, pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Per kernel, the name code of the op that launched it (-1: none, or a ProfilerStep;
    a replayed kernel's capturing op, past the model's names: the returned list), whether
    that op is tensor-core eligible, and whether the kernel ran in a graph replay; `pos`:
    `tree_positions(model, rows)`."""
    ev = model.events
    tree = op_tree(model)
    node = np.full(rows.size, -1, dtype=np.int64)
    if tree.gpu.size and rows.size:
        node = tree.gpu_node[np.minimum(pos, tree.gpu.size - 1)]
    has_op = node >= 0
    op_code = np.full(rows.size, -1, dtype=np.int64)
    op_code[has_op] = ev["name"][tree.rows[node[has_op]]]
    is_step = name_flags(model, is_step_name)
    stepped = has_op & is_step[np.maximum(op_code, 0)]
    op_code[stepped] = -1
    op_eligible = np.zeros(rows.size, dtype=bool)
    op_eligible[has_op] = tree.tc_eligible[node[has_op]]
    op_eligible[stepped] = False
    replayed, extra_ops = replayed_kernel_ops(model, rows, replay, op_code, op_eligible)
    return op_code, op_eligible, replayed, extra_ops
