"""Module view: the tree of `nn.Module` calls, with host and device time per module.

Where modules come from: traces recorded with `with_stack=True` have a `python_function`
event per Python call, and the Python tracer names a module's forward call
`nn.Module: <Class>_<i>` (`i` numbers the instances of a class). The `Module Hierarchy`
arg of ops is filled for TorchScript models only: it is an empty string in every corpus
trace that has it, so it makes no tree and is not read.

Rules:
- A node is a module path: the chain of module calls enclosing a call, on its thread
  (`BertModel_0/BertEncoder_0/BertLayer_1`). Calls of the same path are one node, so a
  module called every step is one row with its call count.
- Host total = the calls' durations; host self = total - the union of the directly
  nested module calls (so a node's self plus its children's totals is its total).
- Device self = the device self time (op tree, `optree.py`) of the operator rows whose
  innermost module call is this node's; device total = self + the children's totals. The
  numbers are thus the Operators view's: GPU work launched outside any operator counts
  nowhere, as there.
- A node's ops are its outermost operator rows (an op whose parent op lies in the same
  module call is counted in its parent), by name, most device time first.
"""

from __future__ import annotations

import re
from typing import TypedDict

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import name_flags, unique_inverse
from ..core.optree import OpTree, op_tree
from ..core.python_stacks import PythonStacks, chain_ids, python_stacks
from ..core.requests import NoParams
from ..core.rules import MODULE_PREFIX, is_module_name
from ..core.tree_arrays import (
    inherit_missing_at,
    levels_from_roots,
    segment_union_length,
    subtree_sum,
)

TOP_OPS = 5
NO_PYTHON = (
    "No module information: this trace has no python_function events. Record it with "
    "torch.profiler.profile(with_stack=True) to see its nn.Module calls."
)
NO_MODULES = (
    "No module information: this trace's python_function events include no nn.Module "
    "calls (the `Module Hierarchy` arg is filled for TorchScript models only)."
)
_INSTANCE = re.compile(r"_\d+$")


class ModuleOp(TypedDict):
    name: str
    calls: int
    host_total_us: float
    device_total_us: float


class ModuleRow(TypedDict):
    id: int  # position in `modules`
    parent: int  # id of the parent row, -1 for a root
    depth: int
    name: str  # the instance, `BertLayer_1`
    module_type: str  # its class, `BertLayer`
    path: str  # names from the root, joined by "/"
    calls: int
    host_self_us: float
    host_total_us: float
    device_self_us: float
    device_total_us: float
    first_start_us: float  # the first call, in the trace's time (as the trace view's)
    first_end_us: float
    first_row: int  # its event row
    ops: list[ModuleOp]  # the outermost operators, most device time first (TOP_OPS)


class ModulesView(TypedDict):
    available: bool
    reason: str | None  # why there is no tree
    module_count: int
    call_count: int
    host_total_us: float  # of the root modules
    device_total_us: float
    modules: list[ModuleRow]  # depth first; siblings by host total, largest first


class _Calls(msgspec.Struct):
    """The module calls among the python events, and per call its enclosing call and
    path; per python event the innermost module call at or around it."""

    events: np.ndarray  # positions in `stacks.rows`
    parent: np.ndarray  # enclosing module call, -1
    path: np.ndarray  # path id
    owner: np.ndarray  # per frame around an op or a call: innermost module call at it, -1


def modules_view(model: TraceModel, params: NoParams) -> ModulesView:
    """The route's compute (no parameters)."""
    return modules(model)


def modules(model: TraceModel) -> ModulesView:
    tree = op_tree(model)
    stacks = python_stacks(model, tree)
    if stacks is None:
        return _unavailable(NO_PYTHON)
    calls = _module_calls(model, stacks)
    if calls.events.size == 0:
        return _unavailable(NO_MODULES)
    return _view(model, tree, stacks, calls)


def _unavailable(reason: str) -> ModulesView:
    return {
        "available": False,
        "reason": reason,
        "module_count": 0,
        "call_count": 0,
        "host_total_us": 0.0,
        "device_total_us": 0.0,
        "modules": [],
    }


def _module_calls(model: TraceModel, stacks: PythonStacks) -> _Calls:
    names = model.events["name"][stacks.rows]
    events = np.flatnonzero(name_flags(model, is_module_name)[names])
    # Per frame: its call, and below its owner, as the stacks' positions are (int32 where
    # they fit: two int64 columns of every frame were the view's peak, 7 MB at 0.46M).
    call_of = np.full(stacks.rows.size, -1, dtype=stacks.parent.dtype)
    call_of[events] = np.arange(events.size)
    up = stacks.parent[events]
    # Owners are read for the frames around ops and the calls' parents only (a tenth of
    # the frames of a 250 MB trace): found for those alone.
    asked = np.zeros(stacks.rows.size, dtype=bool)
    asked[stacks.node_frame[stacks.node_frame >= 0]] = True
    asked[up[up >= 0]] = True
    nodes = np.flatnonzero(asked)
    owner = np.full(stacks.rows.size, -1, dtype=call_of.dtype)
    owner[nodes] = inherit_missing_at(stacks.parent, call_of, nodes)
    del call_of
    parent = np.where(up >= 0, owner[np.maximum(up, 0)], -1).astype(np.int64)
    return _Calls(events, parent, chain_ids(parent, names[events]), owner)


def _view(model: TraceModel, tree: OpTree, stacks: PythonStacks, calls: _Calls) -> ModulesView:
    ev = model.events
    rows = stacks.rows[calls.events]
    start = ev["ts"][rows].astype(np.float64, copy=False)
    dur = ev["dur"][rows].astype(np.float64, copy=False)
    n_paths = int(calls.path.max()) + 1
    path_parent = np.full(n_paths, -1, dtype=np.int64)
    nested = calls.parent >= 0
    path_parent[calls.path[nested]] = calls.path[calls.parent[nested]]
    op_call = _op_calls(stacks, calls)
    device_self = np.bincount(
        calls.path, weights=_per_call_device(tree, op_call, calls.events.size), minlength=n_paths
    )
    sums = {
        "calls": np.bincount(calls.path, minlength=n_paths),
        "host_total": np.bincount(calls.path, weights=dur, minlength=n_paths),
        "host_self": np.bincount(
            calls.path, weights=_host_self(calls.parent, start, dur), minlength=n_paths
        ),
        "device_self": device_self,
        "device_total": subtree_sum(path_parent, levels_from_roots(path_parent), device_self),
    }
    first = _first_calls(calls.path, start, n_paths)
    sums["first_start"] = start[first]
    sums["first_end"] = start[first] + dur[first]
    sums["first_row"] = rows[first]
    labels = [model.names[c][len(MODULE_PREFIX) :] for c in ev["name"][rows[first]].tolist()]
    out = _rows(path_parent, sums, labels, _top_ops(model, tree, op_call, calls.path, n_paths))
    roots = path_parent < 0
    return {
        "available": True,
        "reason": None,
        "module_count": n_paths,
        "call_count": int(calls.events.size),
        "host_total_us": _us(sums["host_total"][roots].sum()),
        "device_total_us": _us(sums["device_total"][roots].sum()),
        "modules": out,
    }


def _us(x: float) -> float:
    return round(float(x), 3)


def _host_self(parent: np.ndarray, start: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """Per call: its duration less the union of the module calls directly inside it."""
    child = np.flatnonzero(parent >= 0)
    child = child[np.lexsort((start[child], parent[child]))]
    cover = segment_union_length(
        parent[child], start[child], start[child] + dur[child], parent.size
    )
    return np.clip(dur - cover, 0.0, None)


def _op_calls(stacks: PythonStacks, calls: _Calls) -> np.ndarray:
    """Per op-tree node: the innermost module call around it, -1."""
    frame = stacks.node_frame
    return np.where(frame >= 0, calls.owner[np.maximum(frame, 0)], -1).astype(np.int64)


def _per_call_device(tree: OpTree, op_call: np.ndarray, n_calls: int) -> np.ndarray:
    """Device self time of the operator rows directly in each module call."""
    inside = tree.op_mask & (op_call >= 0)
    return np.bincount(op_call[inside], weights=tree.device_self[inside], minlength=n_calls)


def _first_calls(path: np.ndarray, start: np.ndarray, n_paths: int) -> np.ndarray:
    """Per path, the call that starts first."""
    order = np.lexsort((start, path))
    firsts = np.ones(order.size, dtype=bool)
    firsts[1:] = path[order][1:] != path[order][:-1]
    out = np.empty(n_paths, dtype=np.int64)
    out[path[order][firsts]] = order[firsts]
    return out


def _top_ops(
    model: TraceModel, tree: OpTree, op_call: np.ndarray, call_path: np.ndarray, n_paths: int
) -> list[list[ModuleOp]]:
    """Per path, its outermost operator rows by name (TOP_OPS, most device time first)."""
    parent_call = np.where(tree.parent >= 0, op_call[np.maximum(tree.parent, 0)], -1)
    outer = np.flatnonzero(tree.op_mask & (op_call >= 0) & (parent_call != op_call))
    out: list[list[ModuleOp]] = [[] for _ in range(n_paths)]
    if outer.size == 0:
        return out
    names = model.events["name"][tree.rows[outer]].astype(np.int64)
    key = call_path[op_call[outer]] * np.int64(len(model.names)) + names
    uniq, group = unique_inverse(key)
    count = np.bincount(group, minlength=uniq.size)
    host = np.bincount(group, weights=tree.host_total[outer], minlength=uniq.size)
    device = np.bincount(group, weights=tree.device_total[outer], minlength=uniq.size)
    order = np.lexsort((-host, -device)).tolist()
    # Python numbers, read once: no numpy scalar per op (the same values).
    keys, counts, hosts, devices = uniq.tolist(), count.tolist(), host.tolist(), device.tolist()
    for i in order:
        path, name = divmod(int(keys[i]), len(model.names))
        if len(out[path]) < TOP_OPS:
            out[path].append(
                {
                    "name": model.names[name],
                    "calls": int(counts[i]),
                    "host_total_us": _us(hosts[i]),
                    "device_total_us": _us(devices[i]),
                }
            )
    return out


_US_COLUMNS = (
    "host_self",
    "host_total",
    "device_self",
    "device_total",
    "first_start",
    "first_end",
)


def _rows(
    path_parent: np.ndarray,
    sums: dict[str, np.ndarray],
    labels: list[str],
    ops: list[list[ModuleOp]],
) -> list[ModuleRow]:
    """The paths depth first, siblings by host total (largest first, then by name);
    `sums` holds the per-path numbers."""
    children: list[list[int]] = [[] for _ in range(path_parent.size)]
    for p, up in enumerate(path_parent.tolist()):
        if up >= 0:
            children[up].append(p)
    host_total = sums["host_total"].tolist()
    # Each column read once as Python numbers (no numpy scalar per row and column): the
    # same floats as `float()` of each element, rounded by `_us`.
    calls, first_row = sums["calls"].tolist(), sums["first_row"].tolist()
    us = {key: [_us(x) for x in sums[key].tolist()] for key in _US_COLUMNS}

    def ranked(paths: list[int]) -> list[int]:
        return sorted(paths, key=lambda p: (-host_total[p], labels[p]))

    out: list[ModuleRow] = []
    stack = [(p, -1, 0, "") for p in reversed(ranked(np.flatnonzero(path_parent < 0).tolist()))]
    while stack:
        p, parent_id, depth, prefix = stack.pop()
        path = f"{prefix}/{labels[p]}" if prefix else labels[p]
        row: ModuleRow = {
            "id": len(out),
            "parent": parent_id,
            "depth": depth,
            "name": labels[p],
            "module_type": _INSTANCE.sub("", labels[p]),
            "path": path,
            "calls": int(calls[p]),
            "host_self_us": us["host_self"][p],
            "host_total_us": us["host_total"][p],
            "device_self_us": us["device_self"][p],
            "device_total_us": us["device_total"][p],
            "first_start_us": us["first_start"][p],
            "first_end_us": us["first_end"][p],
            "first_row": int(first_row[p]),
            "ops": ops[p],
        }
        out.append(row)
        stack.extend((c, row["id"], depth + 1, path) for c in reversed(ranked(children[p])))
    return out
