"""Graphs captured in a trace: the launch calls recorded while a CUDA/HIP graph was
captured, with the op that made each (see `graph_replay.py` for how replays use them).

- A capture: the kernel-launch calls of one host thread between a `…StreamBeginCapture`
  and the next `…StreamEndCapture` of that thread, in call order. While capturing, a
  launch runs nothing: its kernel never appears, the call is all there is. Its op is the
  op tree's owner of the call (`optree.py`), so the capture-time op, its input shapes and
  its stack are that op's.
- What kernel a captured call launched: HIP writes the kernel name, grid and block on
  the call. CUDA writes none; there it is taken from the warm-up run that capture
  recipes (torch.cuda.graphs, vLLM, SGLang) make just before capturing: the kernel that
  the latest same-named op launched at the same position (its n-th launch) before the
  capture began. A call with no such warm-up keeps an unknown kernel.
"""

from __future__ import annotations

import bisect
import re
from typing import Union

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import launch_rows, name_flags, thread_keys
from .launches import launch_family
from .optree import OpTree, op_tree
from .rules import is_step_name

_BEGIN = re.compile(r"^(cuda|hip|cu)StreamBeginCapture")
_END = re.compile(r"^(cuda|hip|cu)StreamEndCapture")
_Dims = Union[tuple[int, ...], None]
Key = tuple[Union[str, None], _Dims, _Dims]


class LaunchDetails(msgspec.Struct, gc=False):
    kernel: Union[str, None] = None
    grid: _Dims = None
    block: _Dims = None
    node_id: Union[int, None] = msgspec.field(default=None, name="graph node id")


class Capture(msgspec.Struct):
    """One captured graph: its launch calls in order, in the model that recorded them."""

    model: TraceModel
    launches: np.ndarray  # launch-call rows, in call order
    keys: list[Key]  # (kernel name, grid, block) as the call knows them (None: unknown)
    op_rows: np.ndarray  # the op owning each call (-1: none)
    op_names: list[str | None]
    node_ids: list[int | None]


def _is_kernel_launch(name: str) -> bool:
    return launch_family(name) == "kernel_launch"


def _is_begin(name: str) -> bool:
    return _BEGIN.match(name) is not None


def _is_end(name: str) -> bool:
    return _END.match(name) is not None


def captures_in(model: TraceModel) -> list[Capture]:
    """The graphs captured in `model`: per host thread, the kernel-launch calls between a
    begin-capture call and the next end-capture call."""
    runtimes = launch_rows(model)
    if runtimes.size == 0:
        return []
    names = model.events["name"][runtimes]
    begin = name_flags(model, _is_begin)[names]
    if not begin.any():
        return []
    end = name_flags(model, _is_end)[names]
    launch = name_flags(model, _is_kernel_launch)[names]
    threads = thread_keys(model, runtimes)
    order = np.lexsort((model.events["ts"][runtimes], threads))
    tree = op_tree(model)
    warmup = _Warmup(model, tree)
    out: list[Capture] = []
    current: list[int] | None = None
    thread = None
    for i in order.tolist():
        if threads[i] != thread:
            current, thread = None, threads[i]
        if begin[i]:
            current = []
        elif end[i] and current is not None:
            if current:
                out.append(_capture(model, tree, warmup, runtimes[np.array(current, np.int64)]))
            current = None
        elif launch[i] and current is not None:
            current.append(i)
    return out


def _capture(model: TraceModel, tree: OpTree, warmup: _Warmup, rows: np.ndarray) -> Capture:
    details = model.args_of(rows, LaunchDetails)
    node = np.full(rows.size, -1, np.int64)
    if tree.runtimes.size:
        pos = np.minimum(np.searchsorted(tree.runtimes, rows), tree.runtimes.size - 1)
        hit = tree.runtimes[pos] == rows
        node[hit] = tree.runtime_node[pos[hit]]
    op_rows = np.where(node >= 0, tree.rows[np.maximum(node, 0)], -1)
    is_step = name_flags(model, is_step_name)
    op_names: list[str | None] = []
    for r in op_rows.tolist():
        code = int(model.events["name"][r]) if r >= 0 else -1
        op_names.append(model.names[code] if code >= 0 and not is_step[code] else None)
    op_rows = np.where([n is not None for n in op_names], op_rows, -1)
    keys: list[Key] = [(d.kernel, d.grid, d.block) for d in details]
    if any(k[0] is None for k in keys):
        keys = warmup.keys(rows, node, keys)
    return Capture(
        model=model,
        launches=rows,
        keys=keys,
        op_rows=op_rows,
        op_names=op_names,
        node_ids=[d.node_id for d in details],
    )


class _OpDims(msgspec.Struct, gc=False):
    dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input Dims")


_OpKey = tuple[int, bytes, int]


class _Warmup:
    """The kernels that ran (not captured) per (op name, input dims, n-th launch of the op
    call), in time order: what a captured CUDA launch of the same op call at the same
    position most likely launched (cuBLAS picks its kernel by shape)."""

    def __init__(self, model: TraceModel, tree: OpTree) -> None:
        self.model, self.tree = model, tree
        self.index: dict[_OpKey, tuple[list[float], list[Key]]] | None = None

    def _build(self) -> dict[_OpKey, tuple[list[float], list[Key]]]:
        model, tree, ev = self.model, self.tree, self.model.events
        ran = np.flatnonzero((tree.gpu_node >= 0) & (ev["kind"][tree.gpu] == Kind.KERNEL))
        kernels, nodes = tree.gpu[ran], tree.gpu_node[ran]
        order = np.lexsort((ev["ts"][kernels], ev["ts"][tree.rows[nodes]]))
        kernels, nodes = kernels[order], nodes[order]
        details = model.args_of(kernels, LaunchDetails)
        dims = self._dims(nodes)
        index: dict[_OpKey, tuple[list[float], list[Key]]] = {}
        last, nth = -1, 0
        for k, node, d, shape in zip(kernels.tolist(), nodes.tolist(), details, dims):
            nth = nth + 1 if node == last else 0
            last = node
            name = int(ev["name"][tree.rows[node]])
            times, keys = index.setdefault((name, shape, nth), ([], []))
            times.append(float(ev["ts"][tree.rows[node]]))
            keys.append((model.names[int(ev["name"][k])], d.grid, d.block))
        return index

    def _dims(self, nodes: np.ndarray) -> list[bytes]:
        """The raw `Input Dims` of each node's op (b"" for none, or node -1)."""
        rows = self.tree.rows[np.maximum(nodes, 0)] if nodes.size else nodes
        args = self.model.args_of(rows, _OpDims)
        return [bytes(a.dims) if n >= 0 else b"" for a, n in zip(args, nodes.tolist())]

    def keys(self, rows: np.ndarray, node: np.ndarray, keys: list[Key]) -> list[Key]:
        if self.index is None:
            self.index = self._build()
        ev = self.model.events
        begin = float(ev["ts"][rows[0]]) if rows.size else 0.0
        out, last, nth = list(keys), -1, 0
        dims = self._dims(node)
        for i, n in enumerate(node.tolist()):
            nth = nth + 1 if n == last and n >= 0 else 0
            last = n
            if n < 0 or keys[i][0] is not None:
                continue
            key = (int(ev["name"][self.tree.rows[n]]), dims[i], nth)
            times, seen = self.index.get(key, ([], []))
            before = bisect.bisect_left(times, begin) - 1
            if before >= 0:
                out[i] = seen[before]
        return out
