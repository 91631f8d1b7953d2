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

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...model.categories import Kind
from ...model.rank_batch import RankBatch, bounds_of, one_rank, rank_of
from ...model.trace_model import TraceModel
from .comm_facts import CallFacts, CommArgs, GroupFacts, group_size_of
from .common import complete_rows, launches_of, name_flags, thread_keys
from .host_ranges import host_ranges
from .kernel_classes import kernel_classes
from .taxonomy import is_comm_op, is_host_transfer_op

OTHER = "other"


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


def extract(model: TraceModel) -> Collectives:
    """The trace's collectives (read-only), kept with the model: a rank's Distributed
    summary, critical-path part and stub each ask."""
    return model.derived(
        "_collectives",
        lambda m: _collectives_of_ranks(m, one_rank(m), [m.header])[0],
    )


def keep_collectives(model: TraceModel, collectives: Collectives) -> None:
    """Keeps `collectives` as the model's: found for a batch of ranks and split back
    (`rank_batches.share_tables`), the same."""
    model.derived("_collectives", lambda _: collectives)


def batch_collectives(batch: RankBatch) -> list[Collectives]:
    """Each rank's collectives from one pass over the batch's rows (kept with the batch's
    model): the same as `extract` of each rank's own model (its rows counted from its
    first; its header's `pg_config` names its peers)."""
    return batch.model.derived(
        "_rank_collectives",
        lambda m: _collectives_of_ranks(m, batch.first_rows, batch.headers),
    )


def _collectives_of_ranks(
    model: TraceModel, first_rows: np.ndarray, headers: list[dict[str, Any]]
) -> list[Collectives]:
    ev = model.events
    classes = kernel_classes(model)
    comm_at = np.flatnonzero(classes.comm)
    kernels = classes.rows[comm_at]
    kernel_collectives = [classes.collective[i] for i in comm_at.tolist()]
    host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    host_names = ev["name"][host]
    transfers = host[name_flags(model, is_host_transfer_op)[host_names]]
    comm_ops = host[name_flags(model, is_comm_op)[host_names]]

    facts: list[CallFacts] = []
    if kernels.size:
        facts += _kernel_facts(model, kernels, kernel_collectives, comm_ops)
    if transfers.size:
        configured = [_configured_ranks(header) for header in headers]
        rank = rank_of(transfers, first_rows)
        facts += _transfer_facts(model, transfers, comm_ops, [configured[r] for r in rank.tolist()])
    rows = np.concatenate([kernels, transfers]).astype(np.int64)
    on_gpu = np.arange(rows.size) < kernels.size
    start = ev["ts"][rows].astype(np.float64)
    rank = rank_of(rows, first_rows)
    order = np.lexsort((start, rank))  # by start within each rank (stable)
    rows, start, on_gpu = rows[order], start[order], on_gpu[order]
    facts = [facts[i] for i in order.tolist()]
    whole = Collectives(
        kind=[f.kind or OTHER for f in facts],
        pg=[f.pg or "" for f in facts],
        seq=np.array([-1 if f.seq is None else f.seq for f in facts], dtype=np.int64),
        start=start,
        end=start + ev["dur"][rows],
        nbytes=np.array([-1 if f.nbytes is None else f.nbytes for f in facts], dtype=np.float64),
        group_size=np.array([group_size_of(f)[0] for f in facts], dtype=np.int64),
        gs_from=np.array([group_size_of(f)[1] for f in facts], dtype=np.int64),
        on_gpu=on_gpu,
        dst=np.array([-1 if f.dst is None else f.dst for f in facts], dtype=np.int64),
        src=np.array([-1 if f.src is None else f.src for f in facts], dtype=np.int64),
        rows=rows,
        comms_id=np.array([f.comms_id or 0 for f in facts], dtype=np.uint64),
    )
    return [
        _rank_part(whole, facts, lo, hi, int(first))
        for (lo, hi), first in zip(bounds_of(rows, first_rows), first_rows.tolist())
    ]


def _rank_part(
    whole: Collectives, facts: list[CallFacts], lo: int, hi: int, first: int
) -> Collectives:
    """Entries [lo, hi) of `whole` (one rank's), its rows counted from its `first` row."""
    if lo == 0 and hi == len(whole) and first == 0:  # one rank: all of it
        whole.groups = _groups_of(facts)
        return whole
    return Collectives(
        kind=whole.kind[lo:hi],
        pg=whole.pg[lo:hi],
        seq=whole.seq[lo:hi],
        start=whole.start[lo:hi],
        end=whole.end[lo:hi],
        nbytes=whole.nbytes[lo:hi],
        group_size=whole.group_size[lo:hi],
        gs_from=whole.gs_from[lo:hi],
        on_gpu=whole.on_gpu[lo:hi],
        dst=whole.dst[lo:hi],
        src=whole.src[lo:hi],
        groups=_groups_of(facts[lo:hi]),
        rows=whole.rows[lo:hi] - first,
        comms_id=whole.comms_id[lo:hi],
    )


def _transfer_facts(
    model: TraceModel,
    transfers: np.ndarray,
    comm_ops: np.ndarray,
    configured: list[dict[str, list[int]]],
) -> list[CallFacts]:
    """Per host transfer range (`gloo:*`...), its own args, then those of the comm ops
    running on its thread at its start, innermost first (gloo's range starts inside its
    `c10d::*` op); a send's or receive's peer as a global rank (`configured`: per range,
    its trace's groups, `_configured_ranks`)."""
    chains = _enclosing_comm_ops(model, transfers, transfers, comm_ops)
    op_args = model.args_of(comm_ops, CommArgs)
    op_names = model.names_of(comm_ops)
    out = []
    for k, (args, name) in enumerate(
        zip(model.args_of(transfers, CommArgs), model.names_of(transfers))
    ):
        f = CallFacts()
        f.fill(args, name)
        for i in chains[k]:
            if comm_ops[i] != transfers[k]:
                f.fill(op_args[i], op_names[i])
        _peer_to_global(f, configured[k])
        out.append(f)
    return out


def _configured_ranks(header: dict[str, Any]) -> dict[str, list[int]]:
    """The global ranks of each process group the trace's `pg_config` lists."""
    info = header.get("distributedInfo")
    config = info.get("pg_config") if isinstance(info, dict) else None
    out: dict[str, list[int]] = {}
    for pg in config if isinstance(config, list) else []:
        ranks = pg.get("ranks") if isinstance(pg, dict) else None
        if isinstance(ranks, list) and all(isinstance(r, int) for r in ranks):
            out[str(pg.get("pg_name"))] = ranks
    return out


def _peer_to_global(f: CallFacts, ranks_of: dict[str, list[int]]) -> None:
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


def _groups_of(facts: list[CallFacts]) -> dict[str, GroupFacts]:
    out: dict[str, GroupFacts] = {}
    for f in facts:
        if f.pg and f.group is not None and f.pg not in out:
            desc, ranks = f.group
            out[f.pg] = GroupFacts(desc, list(ranks) if ranks is not None else None)
    return out


def _kernel_facts(
    model: TraceModel, kernels: np.ndarray, collectives: list[str | None], comm_ops: np.ndarray
) -> list[CallFacts]:
    op_args = model.args_of(comm_ops, CommArgs)
    op_names = model.names_of(comm_ops)
    kernel_args = model.args_of(kernels, CommArgs)
    chains = _enclosing_comm_ops(model, kernels, launches_of(model, kernels), comm_ops)
    by_external: dict[int, list[int]] = defaultdict(list)
    for i, ext in enumerate(model.column_at("external_id", comm_ops).tolist()):
        if ext > 0:
            by_external[ext].append(i)

    out: list[CallFacts] = []
    for k in range(kernels.size):
        f = CallFacts()
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
