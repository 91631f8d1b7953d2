"""The collectives of one trace: type, process group, sequence number, time, bytes.

A collective instance is
- on GPU ranks, one communication kernel (the kernel taxonomy, `taxonomy.py`: NCCL/RCCL,
  MSCCL, NVSHMEM, DeepEP, symmetric memory, custom all-reduce kernels, and kernels launched
  inside communication ops); its time is the kernel's;
- on CPU ranks (and CPU process groups of GPU jobs), one range of a host collective backend
  (`gloo:*`, `mpi:*`, `ucc:*`, rule `is_host_transfer_op`); its time is the range's.

What it is comes from, in order: the kernel's own args (2.x libkineto copies the
collective's `Collective name`, `In msg nelems`, `dtype`, `Process Group Name`, `Seq` onto
the kernel), then the communication ops (`is_comm_op`: `record_param_comms`, `nccl:*`,
`c10d::*`) that were running on the launching thread when the kernel was launched,
innermost first (the host ranges containing the launching runtime call's start, closed,
host_ranges.py; else by `External id`), then the taxonomy's collective type (from the
kernel name, or from the launching communication op). Bytes are `In msg nelems` x the
size of `dtype`, else the first tensor of `Input Dims` x the size of `Input type` of the
innermost op that has both; unknown bytes are -1. Group size is the `Group size` arg, else
for all_gather / reduce_scatter the ratio of the two sizes of an op taking (output, input)
(`c10d::_allgather_base_`: 1 GiB out of 16 MiB in is a group of 64). A host range of a
CPU backend reads, after its own args, those of the comm ops running on its thread at its
start (gloo's starts inside its `c10d::*` op), as a kernel reads its launch's: a send's or
receive's peer is `Dst Rank` / `Src Rank`, else the group rank its `c10d::send` /
`c10d::recv_` op was given (`P2P_PEER_OPS`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from ...ingest.values import lenient_int
from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, launches_of, name_flags, thread_keys
from .host_ranges import host_ranges
from .kernel_classes import kernel_classes
from .rules import collective_type, dtype_size
from .taxonomy import is_comm_op, is_host_transfer_op

OTHER = "other"
RATIO_KINDS = ("all_gather", "reduce_scatter")  # output = group size x input (or input = ...)


class CommArgs(msgspec.Struct, gc=False):
    """Args of communication ops and kernels that say what the collective is."""

    collective: Any = msgspec.field(default=None, name="Collective name")
    in_nelems: Any = msgspec.field(default=None, name="In msg nelems")
    dtype: Any = None
    group_size: Any = msgspec.field(default=None, name="Group size")
    pg_name: Any = msgspec.field(default=None, name="Process Group Name")
    seq: Any = msgspec.field(default=None, name="Seq")
    seq_lower: Any = msgspec.field(default=None, name="seq")
    # A hash of the call's group, sequence number, point-to-point flag, rank start/stride
    # and world size (PyTorch 2.12+, Kineto's `Comms Id`): the same on every rank's copy.
    comms_id: Any = msgspec.field(default=None, name="Comms Id")
    input_dims: Any = msgspec.field(default=None, name="Input Dims")
    input_dims_old: Any = msgspec.field(default=None, name="Input dims")
    input_type: Any = msgspec.field(default=None, name="Input type")
    input_type_old: Any = msgspec.field(default=None, name="Input types")
    pg_desc: Any = msgspec.field(default=None, name="Process Group Description")
    pg_ranks: Any = msgspec.field(default=None, name="Process Group Ranks")
    rank_start: Any = msgspec.field(default=None, name="Global rank start")
    rank_stride: Any = msgspec.field(default=None, name="Global rank stride")
    src_rank: Any = msgspec.field(default=None, name="Src Rank")
    dst_rank: Any = msgspec.field(default=None, name="Dst Rank")
    concrete: Any = msgspec.field(default=None, name="Concrete Inputs")


# c10d's point-to-point ops name their peer in their third argument, a rank of the call's
# process group (torch/csrc/distributed/c10d/Ops.cpp: `send(tensors, process_group, dstRank,
# tag)`, `recv_(tensors, process_group, srcRank, tag)`), recorded with `record_shapes` as
# `Concrete Inputs`: gloo's sends and receives carry no `Dst Rank` / `Src Rank` of their own.
P2P_PEER_OPS = {"c10d::send": "dst", "c10d::recv_": "src"}


@dataclass
class Collectives:
    """One entry per collective instance, sorted by start."""

    kind: list[str]  # canonical type (`all_reduce`, ...) or "other"
    pg: list[str]  # process group name ("" when the trace does not say)
    seq: np.ndarray  # i8, -1 unknown
    start: np.ndarray  # f8, trace time (model.ts)
    end: np.ndarray  # f8
    nbytes: np.ndarray  # f8, -1 unknown
    group_size: np.ndarray  # i8, -1 unknown
    gs_from: np.ndarray  # i8: 1 `Group size` arg, 2 the call's sizes (output/input), 0 unknown
    on_gpu: np.ndarray  # bool: a kernel (else a host range)
    # i8, the global rank a send goes to (`Dst Rank`) / a recv comes from (`Src Rank`); -1
    dst: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    src: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    groups: dict[str, GroupFacts] = field(default_factory=dict)  # what the args say of a pg
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # event rows
    # u8, `Comms Id` (0: the trace does not say): the same call on every rank
    comms_id: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))

    def __len__(self) -> int:
        return int(self.start.size)


def _first_tensor_elements(dims: Any) -> int | None:
    """Elements of the first tensor argument: `[[4, 8], ...]` or a TensorList `[[[4], [8]]]`."""
    if not isinstance(dims, list) or not dims:
        return None
    first = dims[0]
    if not isinstance(first, list) or not first:
        return None
    if all(isinstance(d, int) for d in first):
        return int(np.prod(first, dtype=np.int64))
    if all(isinstance(t, list) and all(isinstance(d, int) for d in t) for t in first):
        return int(sum(int(np.prod(t, dtype=np.int64)) for t in first if t))
    return None


def _bytes_of(args: CommArgs) -> int | None:
    nelems = lenient_int(args.in_nelems)
    if nelems is not None and isinstance(args.dtype, str):
        size = dtype_size(args.dtype)
        if size is not None:
            return nelems * size
    dims = args.input_dims if args.input_dims is not None else args.input_dims_old
    types = args.input_type if args.input_type is not None else args.input_type_old
    elements = _first_tensor_elements(dims)
    if elements is not None and isinstance(types, list) and types and isinstance(types[0], str):
        size = dtype_size(types[0])
        if size is not None:
            return elements * size
    return None


def _size_ratio(args: CommArgs) -> int | None:
    """An op taking (output, input) of different sizes (`c10d::_allgather_base_`,
    `_reduce_scatter_base_`): the larger over the smaller, when it divides exactly."""
    dims = args.input_dims if args.input_dims is not None else args.input_dims_old
    if not isinstance(dims, list) or len(dims) < 2:
        return None
    a, b = (_first_tensor_elements([d]) for d in dims[:2])
    if not a or not b or a == b or max(a, b) % min(a, b):
        return None
    return max(a, b) // min(a, b)


def _group_size(f: _Facts) -> tuple[int, int]:
    """(group size, its source): the `Group size` arg (1), else for all_gather and
    reduce_scatter the ratio of its output and input (2), else unknown (-1, 0)."""
    if f.group_size is not None:
        return f.group_size, 1
    if f.size_ratio is not None and f.kind in RATIO_KINDS:
        return f.size_ratio, 2
    return -1, 0


@dataclass
class GroupFacts:
    """A process group as its collectives' args describe it (`pg_config` may be absent)."""

    description: str | None = None
    ranks: list[int] | None = None


@functools.lru_cache(maxsize=256)
def _listed_ranks(text: str) -> tuple[int, ...] | None:
    """The ranks of a whole `Process Group Ranks` text, None when one is not a number.
    Cached: every call of a group carries the same text (2,048 numbers for a world group)."""
    items = [lenient_int(x) for x in text.strip("[] ").split(",") if x.strip()]
    if items and all(x is not None for x in items):
        return tuple(int(x) for x in items if x is not None)
    return None


def _rank_list(args: CommArgs, size: int | None) -> tuple[int, ...] | None:
    """`Process Group Ranks` is a string "[0, 1]" (PyTorch truncates long lists with "...");
    a truncated or missing list is rebuilt from `Global rank start`/`stride` and the size.
    A tuple, shared: a call's group is listed only for the first call of it
    (`_groups_of`), so the others make no list of its ranks (a world group's is 2,048)."""
    text = args.pg_ranks
    if isinstance(text, list):
        text = str(text)
    if isinstance(text, str) and "..." not in text:
        listed = _listed_ranks(text)
        if listed is not None:
            return listed
    start, stride = lenient_int(args.rank_start), lenient_int(args.rank_stride)
    if start is not None and start >= 0 and stride is not None and stride > 0 and size:
        return tuple(range(start, start + stride * size, stride))
    return None


_NO_ARGS = CommArgs()


@dataclass
class _Facts:
    kind: str | None = None
    pg: str | None = None
    seq: int | None = None
    comms_id: int | None = None
    nbytes: int | None = None
    group_size: int | None = None
    size_ratio: int | None = None  # larger over smaller of the first two tensors
    dst: int | None = None
    src: int | None = None
    group: tuple[str | None, tuple[int, ...] | None] | None = None  # description, ranks
    peer: tuple[str, int] | None = None  # ("dst" or "src", a rank of the call's group)

    def fill(self, args: CommArgs, name: str | None) -> None:
        if name is None and args == _NO_ARGS:  # a kernel whose args say nothing of it
            return
        if self.kind is None:
            if isinstance(args.collective, str):
                self.kind = collective_type(args.collective)
            if self.kind is None and name is not None:
                self.kind = collective_type(name)
        if self.pg is None and args.pg_name is not None and not isinstance(args.pg_name, bool):
            self.pg = str(args.pg_name)
        if self.seq is None:
            self.seq = lenient_int(args.seq if args.seq is not None else args.seq_lower)
        if self.comms_id is None:
            self.comms_id = _comms_id(args.comms_id)
        if self.nbytes is None:
            self.nbytes = _bytes_of(args)
        if self.group_size is None:
            self.group_size = lenient_int(args.group_size)
        if self.size_ratio is None:
            self.size_ratio = _size_ratio(args)
        if self.dst is None and self.src is None:
            self.dst, self.src = lenient_int(args.dst_rank), lenient_int(args.src_rank)
        side = P2P_PEER_OPS.get(name or "")
        if side and self.peer is None and isinstance(args.concrete, list):
            local = lenient_int(args.concrete[2]) if len(args.concrete) > 2 else None
            self.peer = (side, local) if local is not None and local >= 0 else None
        if self.group is None and args.pg_name is not None:
            ranks = _rank_list(args, self.group_size)
            desc = args.pg_desc if isinstance(args.pg_desc, str) else None
            if ranks is not None or desc is not None:
                self.group = (desc, ranks)


def _comms_id(value: Any) -> int | None:
    """`Comms Id` as an unsigned 64-bit hash (written as a number, or its text); None
    when absent, 0 or not one."""
    if isinstance(value, str):
        value = int(value) if value.strip().isdigit() else None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value % (1 << 64) or None


def extract(model: TraceModel) -> Collectives:
    ev = model.events
    classes = kernel_classes(model)
    comm_at = np.flatnonzero(classes.comm)
    kernels = classes.rows[comm_at]
    kernel_collectives = [classes.collective[i] for i in comm_at.tolist()]
    host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    host_names = ev["name"][host]
    transfers = host[name_flags(model, is_host_transfer_op)[host_names]]
    comm_ops = host[name_flags(model, is_comm_op)[host_names]]

    facts: list[_Facts] = []
    if kernels.size:
        facts += _kernel_facts(model, kernels, kernel_collectives, comm_ops)
    if transfers.size:
        facts += _transfer_facts(model, transfers, comm_ops)
    rows = np.concatenate([kernels, transfers]).astype(np.int64)
    on_gpu = np.arange(rows.size) < kernels.size
    start = ev["ts"][rows].astype(np.float64)
    order = np.argsort(start, kind="stable")
    rows, start, on_gpu = rows[order], start[order], on_gpu[order]
    facts = [facts[i] for i in order.tolist()]
    return Collectives(
        kind=[f.kind or OTHER for f in facts],
        pg=[f.pg or "" for f in facts],
        seq=np.array([-1 if f.seq is None else f.seq for f in facts], dtype=np.int64),
        start=start,
        end=start + ev["dur"][rows],
        nbytes=np.array([-1 if f.nbytes is None else f.nbytes for f in facts], dtype=np.float64),
        group_size=np.array([_group_size(f)[0] for f in facts], dtype=np.int64),
        gs_from=np.array([_group_size(f)[1] for f in facts], dtype=np.int64),
        on_gpu=on_gpu,
        dst=np.array([-1 if f.dst is None else f.dst for f in facts], dtype=np.int64),
        src=np.array([-1 if f.src is None else f.src for f in facts], dtype=np.int64),
        groups=_groups_of(facts),
        rows=rows,
        comms_id=np.array([f.comms_id or 0 for f in facts], dtype=np.uint64),
    )


def _transfer_facts(model: TraceModel, transfers: np.ndarray, comm_ops: np.ndarray) -> list[_Facts]:
    """Per host transfer range (`gloo:*`...), its own args, then those of the comm ops
    running on its thread at its start, innermost first (gloo's range starts inside its
    `c10d::*` op); a send's or receive's peer as a global rank."""
    chains = _enclosing_comm_ops(model, transfers, transfers, comm_ops)
    op_args = model.args_of(comm_ops, CommArgs)
    op_names = model.names_of(comm_ops)
    ranks_of = _configured_ranks(model)
    out = []
    for k, (args, name) in enumerate(
        zip(model.args_of(transfers, CommArgs), model.names_of(transfers))
    ):
        f = _Facts()
        f.fill(args, name)
        for i in chains[k]:
            if comm_ops[i] != transfers[k]:
                f.fill(op_args[i], op_names[i])
        _peer_to_global(f, ranks_of)
        out.append(f)
    return out


def _configured_ranks(model: TraceModel) -> dict[str, list[int]]:
    """The global ranks of each process group the trace's `pg_config` lists."""
    info = model.header.get("distributedInfo")
    config = info.get("pg_config") if isinstance(info, dict) else None
    out: dict[str, list[int]] = {}
    for pg in config if isinstance(config, list) else []:
        ranks = pg.get("ranks") if isinstance(pg, dict) else None
        if isinstance(ranks, list) and all(isinstance(r, int) for r in ranks):
            out[str(pg.get("pg_name"))] = ranks
    return out


def _peer_to_global(f: _Facts, ranks_of: dict[str, list[int]]) -> None:
    """`f.peer` (a rank of the call's group) as `f.dst` / `f.src` (global), where the
    group's ranks are known: the call's named group, else the one group the trace lists."""
    if f.peer is None or f.dst is not None or f.src is not None:
        return
    side, local = f.peer
    ranks = ranks_of.get(f.pg) if f.pg else None
    if ranks is None and not f.pg and len(ranks_of) == 1:
        (ranks,) = ranks_of.values()  # a job of one group: the call's
    if ranks is not None and local < len(ranks):
        f.dst, f.src = (ranks[local], None) if side == "dst" else (None, ranks[local])


def _groups_of(facts: list[_Facts]) -> dict[str, GroupFacts]:
    out: dict[str, GroupFacts] = {}
    for f in facts:
        if f.pg and f.group is not None and f.pg not in out:
            desc, ranks = f.group
            out[f.pg] = GroupFacts(desc, list(ranks) if ranks is not None else None)
    return out


def _kernel_facts(
    model: TraceModel, kernels: np.ndarray, collectives: list[str | None], comm_ops: np.ndarray
) -> list[_Facts]:
    op_args = model.args_of(comm_ops, CommArgs)
    op_names = model.names_of(comm_ops)
    kernel_args = model.args_of(kernels, CommArgs)
    chains = _enclosing_comm_ops(model, kernels, launches_of(model, kernels), comm_ops)
    by_external: dict[int, list[int]] = defaultdict(list)
    for i, ext in enumerate(model.column_at("external_id", comm_ops).tolist()):
        if ext > 0:
            by_external[ext].append(i)

    out: list[_Facts] = []
    for k in range(kernels.size):
        f = _Facts()
        f.fill(kernel_args[k], None)
        chain = chains[k] or by_external.get(int(model.column_at("external_id", kernels[k])), [])
        for i in chain:
            f.fill(op_args[i], op_names[i])
        if f.kind is None:
            f.kind = collectives[k]
        out.append(f)
    return out


def _enclosing_comm_ops(
    model: TraceModel, rows: np.ndarray, at: np.ndarray, comm_ops: np.ndarray
) -> list[list[int]]:
    """Per row of `rows`, the comm ops (positions in `comm_ops`) running on the thread of
    its `at` row (a kernel's launch; -1: none) at that row's start, innermost first: the
    host ranges containing it, closed [start, end] (host_ranges.py)."""
    chains: list[list[int]] = [[] for _ in range(rows.size)]
    launcher = at
    launched = np.flatnonzero(launcher >= 0)
    if launched.size == 0 or comm_ops.size == 0:
        return chains
    ranges = host_ranges(model)
    rows = launcher[launched]
    t = model.events["ts"][rows].astype(np.float64)
    inner = ranges.containing(thread_keys(model, rows), t, closed=True)
    query, at = ranges.outwards(inner, t, closed=True)
    op_rows = ranges.rows[at]
    i = np.minimum(np.searchsorted(comm_ops, op_rows), comm_ops.size - 1)
    is_comm = comm_ops[i] == op_rows
    for q, op in zip(launched[query[is_comm]].tolist(), i[is_comm].tolist()):
        chains[q].append(op)
    return chains
