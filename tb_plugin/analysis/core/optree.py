"""The operator tree: host ranges nested by time per thread, with their runtime calls and
the GPU work those launched. The Operator and Kernel views both read it.

Rules (the old plugin's, except where marked):

- Nodes are the host ranges: `cpu_op` and `user_annotation` X events (ProfilerStep#N
  ranges included, as parents; they are never operator rows). Nesting is per thread
  (pid, tid; "123" and 123 are one thread): the autograd backward thread's ops form their
  own tree, under no forward range.
- Parent of a node: the innermost node of its thread that contains it, i.e. the latest
  one in (start, -end, file order) order that starts no later and ends no earlier (a
  zero-length node at t is inside a range only if the range ends after t). Ranges that
  overlap without nesting (a child that ends after its parent; data errors) are thus
  placed under the innermost range that does contain them. The old plugin dropped such
  a range (and logged an error); we keep it, and subtract the union of the children, so
  overlapping siblings are not subtracted twice.
- A single child with the same name as its parent (both `cpu_op`) is folded into it, as
  torch.autograd.profiler and the old plugin do: `aten::add_` calling `aten::add_` is one
  call. The folded child's runtimes go to the parent (the old plugin kept only the
  child's).
- A runtime/driver call belongs to the node of its own thread with its `External id`
  when that node contains it in time; otherwise to the innermost node of its thread that
  contains it (the old plugin matched by External id only, anywhere). Time is needed:
  traces of 2022-23 (and 2.x backward threads) write the correlation id as the runtime's
  External id, which then names an unrelated op by chance (corpus `hta/.../critical_path`
  and `cupti_profiler` traces: 48 of 50 such matches are wrong). A call outside every
  node belongs to none, and neither does GPU work without a launching call (matched by
  `correlation` only; the old plugin put those under its root).
- A collective's launch (`collective_owner`): a call whose innermost enclosing node is a
  communication op (`nccl:*`, `record_param_comms`, `c10d::*`, `gloo:*`, ...;
  taxonomy.is_comm_op) belongs to that node, whatever its External id names. libkineto
  gives an NCCL launch the External id of `record_param_comms`, a wrapper around every
  collective alike, while the `nccl:all_reduce` range inside it names the collective and
  is where the call ran: the CPU flame graph's place for it, and where its host time is
  subtracted. So the kernel's op is `nccl:all_reduce` in the Operators, Kernels
  (`group_by=op`) and both flame graphs (docs/metrics.md, "Which op launched a
  collective").
- Host total = duration. Host self = total - union of the direct children's ranges -
  durations of the runtime calls directly inside the node (node.py of the old plugin:
  "From PyTorch 1.8 RC1, cpu_self_time does not include runtime's time"), never below 0.
  Each runtime call is subtracted once, from the innermost host range containing it,
  whichever node it belongs to: when an annotation (`record_param_comms`,
  `Torch-Compiled Region`, `## Call CompiledFxGraph`) sits between an op and its runtime
  calls, the call is inside the annotation, already part of the op's children. The old
  plugin subtracted it from the op (by External id) as well, clipping the op's self time
  to 0 and leaving the annotation's inflated; where the call is directly inside its op
  (the 2021 samples) both rules agree.
- Device self = time of the GPU activities (kernel, memcpy, memset) launched by the
  node's own runtime calls (matched by `correlation`); device total = device self + the
  children's device totals.
- Tensor-core eligible: the name is in data/matrix_core_ops.json, or the node launched a
  tensor-core kernel itself, or any descendant is eligible.

Everything is vectorised: nesting and the runtime calls' containers come from the
host-range index (host_ranges.py), level-by-level sums give the totals. The tree is
memoised on the model.
"""

from __future__ import annotations

import weakref

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import (
    complete_rows,
    gpu_rows,
    launch_rows,
    launches_of,
    name_flags,
    narrow_rows,
    thread_keys,
)
from .host_ranges import host_ranges
from .rules import is_step_name, is_tensor_core_eligible_op
from .runtime_owners import attach_runtimes
from .taxonomy import MATRIX_YES, is_comm_op, name_classes
from .tree_arrays import (
    _nesting,
    levels_from_roots,
    segment_union_length,
    subtree_any,
    subtree_sum,
)


class OpTree(msgspec.Struct):
    """Nodes in (thread, start, -end, file order) order; indices below are node indices.

    Node indices are int32 where the tree's nodes fit (the tree is held through most
    views). The sums that one or two views read once (host total, device and tensor-core
    self and total, runtime time) are computed when asked, from the model's durations
    (`model`, weakly: the tree is kept with its model) and the owners below, the same
    sums in the same order: the tree holds 5 MB where it held 13 (a 253 MB trace)."""

    rows: np.ndarray  # event row of each node
    thread: np.ndarray  # canonical thread key
    parent: np.ndarray  # parent node after folding, -1 for roots (and for folded nodes)
    folded: np.ndarray  # bool: folded into its parent, not a call of its own
    is_step: np.ndarray  # bool: a ProfilerStep#N range
    host_self: np.ndarray
    device_total: np.ndarray
    tc_eligible: np.ndarray  # bool
    gpu: np.ndarray  # GPU activity rows (kernel, memcpy, memset)
    gpu_node: np.ndarray  # owning node of each, -1 when unknown
    gpu_tc: np.ndarray  # bool per GPU activity: a tensor-core kernel
    runtimes: np.ndarray  # runtime/driver call rows (sorted)
    runtime_node: np.ndarray  # owning node of each, -1 when none
    runtime_inner: np.ndarray  # per runtime call: the node its time is subtracted from, -1
    levels: list[np.ndarray]  # the nodes by depth under `parent`, the roots first
    model: weakref.ref[TraceModel]

    @property
    def op_mask(self) -> np.ndarray:
        """Nodes that are operator rows: not folded, not a ProfilerStep."""
        return ~self.folded & ~self.is_step

    @property
    def host_total(self) -> np.ndarray:
        """Per node, its duration."""
        return self._durations()[self.rows].astype(np.float64)

    @property
    def runtime(self) -> np.ndarray:
        """Per node, the time of the runtime/driver calls directly inside it."""
        return _sums(self.runtime_inner, self._durations()[self.runtimes], self.rows.size)

    @property
    def device_self(self) -> np.ndarray:
        """Per node, the time of the GPU activities its own runtime calls launched."""
        return _sums(self.gpu_node, self._durations()[self.gpu], self.rows.size)

    @property
    def tc_self(self) -> np.ndarray:
        """Per node, the tensor-core kernel time its own runtime calls launched."""
        node = np.where(self.gpu_tc, self.gpu_node, -1)
        return _sums(node, self._durations()[self.gpu], self.rows.size)

    @property
    def tc_total(self) -> np.ndarray:
        if not self.gpu_tc.any():  # no tensor-core kernel (a V100 trace): all zeros
            return np.zeros(self.rows.size)
        return subtree_sum(self.parent, self.levels, self.tc_self)

    def _durations(self) -> np.ndarray:
        model = self.model()
        if model is None:
            raise RuntimeError("the op tree's model is gone")
        dur: np.ndarray = model.events["dur"]
        return dur

    def __len__(self) -> int:
        return int(self.rows.size)


def op_tree(model: TraceModel) -> OpTree:
    return model.derived("_op_tree", build_op_tree)


# --- the tree -----------------------------------------------------------------------


def build_op_tree(model: TraceModel) -> OpTree:
    nodes_file = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    runtimes = launch_rows(model)
    if nodes_file.size == 0:
        return _empty_tree(model, gpu_rows(model))
    rt_thread = thread_keys(model, runtimes)
    rows, thread, parent, rt_container = _nest(model, runtimes, rt_thread)
    names = model.events["name"][rows]
    is_step = name_flags(model, is_step_name)[names]
    folded, rep, eff_parent = _fold(model, rows, names, parent)
    del parent
    rt_node = attach_runtimes(model, (runtimes, rt_thread), (rows, thread), rt_container)
    del rt_thread
    rt_node = collective_owner(model, names, rt_node, rt_container)
    rt_node = np.where(rt_node >= 0, rep[np.maximum(rt_node, 0)], -1)
    rt_inner = np.where(rt_container >= 0, rep[np.maximum(rt_container, 0)], -1)
    del rt_container, rep
    host_self = _host_self(model, rows, eff_parent, runtimes, rt_inner)
    gpu, gpu_node, gpu_tc = _gpu_owners(model, runtimes, rt_node)
    levels = levels_from_roots(eff_parent)
    dur = model.events["dur"]
    tc_self = _sums(np.where(gpu_tc, gpu_node, -1), dur[gpu], rows.size)
    own_eligible = name_flags(model, is_tensor_core_eligible_op)[names] | (tc_self > 0)
    own_eligible &= ~folded
    del tc_self, names
    device_self = _sums(gpu_node, dur[gpu], rows.size)
    return OpTree(
        rows=rows,
        thread=thread,
        parent=narrow_rows(model, eff_parent),
        folded=folded,
        is_step=is_step,
        host_self=host_self,
        device_total=subtree_sum(eff_parent, levels, device_self),
        tc_eligible=subtree_any(eff_parent, levels, own_eligible),
        gpu=gpu,
        gpu_node=narrow_rows(model, gpu_node),
        gpu_tc=gpu_tc,
        runtimes=runtimes,
        runtime_node=narrow_rows(model, rt_node),
        runtime_inner=narrow_rows(model, rt_inner),
        levels=levels,
        model=weakref.ref(model),
    )


def _sums(node: np.ndarray, values: np.ndarray, n_nodes: int) -> np.ndarray:
    """Per node, the `values` of the items it owns (`node`, -1: none) summed in item
    order (as `np.add.at` into zeros adds them: the same floats)."""
    owned = node >= 0
    if not owned.any():
        return np.zeros(n_nodes)
    return np.bincount(node[owned], weights=values[owned], minlength=n_nodes)


def _nest(
    model: TraceModel, runtimes: np.ndarray, rt_thread: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Nodes in tree order (rows, threads), each node's parent and each runtime call's
    innermost containing node (node indices, -1 when none): the host-range index."""
    ranges = host_ranges(model)  # the op tree's nodes are its ranges
    rt_container = np.empty(0, dtype=np.int64)
    if runtimes.size:
        t0 = model.events["ts"][runtimes].astype(np.float64, copy=False)  # a gather: a copy
        t1 = t0 + model.events["dur"][runtimes]
        rt_container = ranges.enclosing(rt_thread, t0, t1)
    return ranges.rows, ranges.thread, ranges.parent, rt_container


def _fold(
    model: TraceModel, rows: np.ndarray, names: np.ndarray, parent: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fold a single same-named child into its parent (`names`: the nodes' name codes):
    (folded, the node each node counts as, the parents after folding)."""
    n_nodes = rows.size
    kinds = model.events["kind"][rows]
    has_parent = parent >= 0
    n_children = np.bincount(parent[has_parent], minlength=n_nodes)
    p = np.maximum(parent, 0)
    folded = (
        has_parent
        & (n_children[p] == 1)
        & (names == names[p])
        & (kinds == Kind.CPU_OP)
        & (kinds[p] == Kind.CPU_OP)
    )
    rep = np.arange(n_nodes, dtype=np.int64)
    # Only the folded nodes' entries move: their chains jump (doubling) over them alone,
    # not over every node, until they reach a node that is not folded.
    at = np.flatnonzero(folded)
    reps = parent[at].astype(np.int64)
    rep[at] = reps
    while True:
        nxt = rep[reps]
        if np.array_equal(nxt, reps):
            break
        rep[at] = reps = nxt
    eff_parent = np.where(has_parent & ~folded, rep[p], -1)
    eff_parent[folded] = -1
    return folded, rep, eff_parent


def _host_self(
    model: TraceModel,
    rows: np.ndarray,
    eff_parent: np.ndarray,
    runtimes: np.ndarray,
    rt_inner: np.ndarray,
) -> np.ndarray:
    """Per node, its host self time: its duration less the union of its children and
    the runtime calls directly inside it (`rt_inner`: the node of each), never below 0."""
    ev = model.events
    starts = ev["ts"][rows]
    durs = ev["dur"][rows]
    children_cover = children_union_length(eff_parent, starts, starts + durs)
    del starts
    host_self = durs.astype(np.float64)
    host_self -= children_cover
    host_self -= _sums(rt_inner, ev["dur"][runtimes], rows.size)
    return np.clip(host_self, 0.0, None, out=host_self)


def children_union_length(parent: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per node, the length of the union of its children's [start, end): in one pass in
    node order where built (`_nesting.children_cover`: the children of a tree sorted by
    (thread, start) come by start, no sort), else the children sorted by (parent, start)
    and `segment_union_length`; the same floats."""
    if _nesting is not None and start.dtype == end.dtype == np.float64:
        out = np.zeros(parent.size)
        parents = np.ascontiguousarray(parent, np.int64)
        if _nesting.children_cover(
            parents, np.ascontiguousarray(start), np.ascontiguousarray(end), out
        ):
            return out
    child = np.flatnonzero(parent >= 0)  # already in (thread, start) order
    child = child[_by_parent_then_start(parent[child], start[child])]
    return segment_union_length(parent[child], start[child], end[child], parent.size)


def _by_parent_then_start(parent: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The order `np.lexsort((start, parent))` gives. Nodes in (thread, start) order have
    each parent's children by start already: a stable sort by parent alone, checked (a
    NaN start compares false: the lexsort then)."""
    order = np.argsort(parent, kind="stable")
    grouped, ordered = parent[order], start[order]
    in_order = (ordered[1:] >= ordered[:-1]) | (grouped[1:] != grouped[:-1])
    if bool(in_order.all()):
        return order
    return np.lexsort((start, parent))


def _gpu_owners(
    model: TraceModel, runtimes: np.ndarray, rt_node: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GPU activity rows, the node owning each (-1: the node of the runtime call that
    launched it), and whether each is a tensor-core kernel."""
    ev = model.events
    gpu = gpu_rows(model)
    launcher = launches_of(model, gpu) if gpu.size else np.empty(0, np.int64)
    rt_index = np.full(launcher.shape, -1, dtype=np.int64)
    if gpu.size and runtimes.size:
        pos = np.searchsorted(runtimes, launcher)  # runtimes are sorted row numbers
        ok = launcher >= 0
        rt_index[ok] = pos[ok]
    # No runtime rows (a trace cut before them): no GPU work has an owner.
    gpu_node = (
        np.where(rt_index >= 0, rt_node[np.maximum(rt_index, 0)], -1) if rt_node.size else rt_index
    )
    gpu_tc = (
        _matrix_core_names(model)[ev["name"][gpu]] & (ev["kind"][gpu] == Kind.KERNEL)
        if gpu.size
        else np.zeros(0, bool)
    )
    return gpu, gpu_node, gpu_tc


def _empty_tree(model: TraceModel, gpu: np.ndarray) -> OpTree:
    ints, floats, flags = np.empty(0, np.int64), np.empty(0), np.empty(0, bool)
    return OpTree(
        rows=ints,
        thread=ints,
        parent=ints,
        folded=flags,
        is_step=flags,
        host_self=floats,
        device_total=floats,
        tc_eligible=flags,
        gpu=gpu,
        gpu_node=np.full(gpu.size, -1, np.int64),
        gpu_tc=np.zeros(gpu.size, bool),
        runtimes=ints,
        runtime_node=ints,
        runtime_inner=ints,
        levels=[],
        model=weakref.ref(model),
    )


def collective_owner(
    model: TraceModel, node_names: np.ndarray, owner: np.ndarray, container: np.ndarray
) -> np.ndarray:
    """The one rule for which op launched a collective: per runtime call, its innermost
    containing node (`container`) when that node is a communication op, else `owner`.
    `node_names`: the nodes' name codes (the tree's gather of them, not another)."""
    if node_names.size == 0 or container.size == 0:
        return owner
    comm = name_flags(model, is_comm_op)[node_names]
    inner_comm = container >= 0
    inner_comm[inner_comm] = comm[container[inner_comm]]
    return np.where(inner_comm, container, owner)


def _matrix_core_names(model: TraceModel) -> np.ndarray:
    """Per interned name: the kernel taxonomy says it runs on matrix cores."""
    return np.array([c.matrix_core == MATRIX_YES for c in name_classes(model)], dtype=bool)
