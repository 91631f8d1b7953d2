"""Stage 1 of the distributed view: one rank's trace file -> a small, plain, picklable
`RankSummary` (see view.py for the method)."""

from __future__ import annotations

from typing import Annotated, Any, Optional, TypedDict

import msgspec
import numpy as np

from ...ingest.values import lenient_int
from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core import breakdown, comms
from ..core import gpu as gpu_summary
from ..core.common import complete_rows, ends, name_flags
from ..core.intervals import IntervalUnion
from ..core.rank_batches import made_sharing_tables
from ..core.ranks import header_rank
from ..core.rules import is_dataloader_range, is_step_name
from ..core.steps import Steps, find_steps
from ..core.taxonomy import is_comm_op

# Bump when RankSummary or its definitions change (keys the disk cache). 2: the kernel
# taxonomy, one communication definition with the Overview, straggler causes. 3: packed
# collective columns, p2p peers, process groups described by the collectives' args. 4:
# calls without `Seq` paired by bytes and end time, group size from the call's own sizes
# (`gs_from`), unmatched time apart from transfer, held time bounded by the others' waits.
# 5: each collective's step number (`step_number`): calls without `Seq` paired by step.
# 6: each collective's `Comms Id` (`comms_id`): calls that carry one matched by it.

VERSION = "6"


# --- stage 1: one rank ---------------------------------------------------------------------


class StepBounds(TypedDict):
    """One step of one rank: its name, number and bounds."""

    name: str
    number: Optional[int]
    start_us: float  # trace time of this rank's file (as the overview's steps)
    end_us: float


class StepTimes(StepBounds):
    """One step of one rank as stage 1 measures it; the view's `RankStep` adds what needs
    the other ranks."""

    computation_us: float
    overlap_us: float
    communication_us: float
    other_us: float
    dataloader_us: float
    host_gap_us: float


# The columns of a CollectiveTable and their packed types (little-endian): 2,048 ranks of
# thousands of collectives stay ~40 bytes an instance, in memory and on disk, not a Python
# object per number.
COLUMNS = {
    "kind": "<i2",  # index into `kinds`
    "pg": "<i4",  # index into `pgs`
    "seq": "<i8",  # -1 unknown
    "start_us": "<f8",  # trace time
    "end_us": "<f8",
    "nbytes": "<f8",  # -1 unknown
    "group_size": "<i4",  # -1 unknown
    "gs_from": "<i1",  # where group_size comes from: GS_SOURCES index (0 unknown)
    "step": "<i4",  # index into `steps`, -1 outside every step
    "step_number": "<i4",  # that step's N (ProfilerStep#N), -1 outside or unnumbered
    "dst": "<i4",  # a send's global destination rank (`Dst Rank`), -1
    "src": "<i4",  # a recv's global source rank (`Src Rank`), -1
    "comms_id": "<u8",  # `Comms Id`, 0 unknown
}
SPARSE_COLUMNS = ("comms_id",)  # packed empty when every value is unknown (0)


class CollectiveTable(msgspec.Struct, gc=False):
    """One entry per collective instance (sorted by start): each column of COLUMNS is a
    packed array (`column`)."""

    kinds: list[str]  # table of type names
    pgs: list[str]  # table of process group names
    count: int
    kind: bytes
    pg: bytes
    seq: bytes
    start_us: bytes
    end_us: bytes
    nbytes: bytes
    group_size: bytes
    gs_from: bytes
    step: bytes
    step_number: bytes
    dst: bytes
    src: bytes
    comms_id: bytes

    def column(self, name: str) -> np.ndarray:
        packed = getattr(self, name)
        if not packed and self.count and name in SPARSE_COLUMNS:  # all unknown: kept empty
            return np.zeros(self.count, dtype=COLUMNS[name])
        return np.frombuffer(packed, dtype=COLUMNS[name])


# Where a collective's group size comes from, most direct first: its `Group size` arg, its
# own sizes (all_gather's output over its input), its process group's members, the world
# size, the ranks found. The first two are read per rank; the others in `group_sizes`.
GS_SOURCES = ("unknown", "args", "sizes", "process_group", "world_size", "ranks_found")


def pack_table(kinds: list[str], pgs: list[str], **columns: np.ndarray) -> CollectiveTable:
    """`gs_from` may be left out: a known group size is then from the args; so may
    `step_number` (the steps are then unnumbered) and `comms_id` (none known)."""
    count = len(columns["start_us"])
    if "gs_from" not in columns:
        columns["gs_from"] = (np.asarray(columns["group_size"]) >= 1).astype(np.int64)
    if "step_number" not in columns:
        columns["step_number"] = np.full(count, -1, dtype=np.int64)
    if "comms_id" not in columns:
        columns["comms_id"] = np.zeros(count, dtype=np.uint64)
    packed = {k: np.asarray(columns[k]).astype(t).tobytes() for k, t in COLUMNS.items()}
    for name in SPARSE_COLUMNS:  # a trace without the field pays nothing for it
        if not np.asarray(columns[name]).any():
            packed[name] = b""
    return CollectiveTable(kinds=kinds, pgs=pgs, count=count, **packed)


class ProcessGroup(msgspec.Struct, gc=False):
    name: str
    description: Optional[str] = None
    backend_config: Optional[str] = None
    size: Optional[int] = None
    ranks: Optional[list[int]] = None


class RankSummary(msgspec.Struct, gc=False):
    """What the cross-rank analysis needs of one rank: small, plain, picklable."""

    version: str
    rank: Optional[int]  # distributedInfo.rank
    backend: Optional[str]
    world_size: Optional[int]
    host: Optional[str]
    process_groups: list[ProcessGroup]
    mode: str  # "gpu" or "cpu"
    time_origin_us: float
    steps_source: str
    steps: list[StepTimes]
    collectives: CollectiveTable
    devices: list[dict[str, Any]]
    partial: bool
    warnings: list[str]


def _process_groups(
    info: dict[str, Any], from_args: dict[str, comms.GroupFacts]
) -> list[ProcessGroup]:
    """`pg_config`'s groups, completed (ranks, description) and extended by what the
    collectives' args say (`Process Group Ranks`, `Process Group Description`)."""
    out = _configured_groups(info)
    known = {pg.name: pg for pg in out}
    for name, facts in sorted(from_args.items()):
        pg = known.get(name)
        if pg is None:
            size = len(facts.ranks) if facts.ranks is not None else None
            out.append(ProcessGroup(name, facts.description, None, size, facts.ranks))
            continue
        pg.description = pg.description or facts.description
        if pg.ranks is None and facts.ranks is not None:
            pg.ranks = facts.ranks
            pg.size = pg.size or len(facts.ranks)
    return out


# The process groups summarised by this process, each kept once: every rank lists the world
# group (2,048 ranks: 2,048 numbers in each of 2,048 summaries, 150 MB as Python lists in the
# caller, and as much pickled back from each pool worker); summaries that share a group's
# object are pickled with it once (a pool's batch), as the run's pack keeps it once.
_GROUPS: dict[bytes, ProcessGroup] = {}
_GROUPS_KEPT = 1 << 20  # ranks listed by the groups kept (~40 MB at most), then start over
_groups_held = [0]
_GROUP_KEY = msgspec.msgpack.Encoder()


def _shared_group(pg: ProcessGroup) -> ProcessGroup:
    """The group equal to `pg` this process summarised before, else `pg` (kept)."""
    key = _GROUP_KEY.encode(pg)
    known = _GROUPS.get(key)
    if known is not None:
        return known
    if _groups_held[0] > _GROUPS_KEPT:  # a long-lived server's many jobs
        _GROUPS.clear()
        _groups_held[0] = 0
    _groups_held[0] += 1 + len(pg.ranks or ())
    return _GROUPS.setdefault(key, pg)


def _description(desc: Any) -> Optional[str]:
    """PyTorch writes "undefined" for a group created without a description."""
    return desc if isinstance(desc, str) and desc != "undefined" else None


# A list of int64s, no bool, float or text: `lenient_int` keeps such a list as it is.
_INT64_LIST = list[Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]]


def _int_list(values: list[Any]) -> list[int]:
    """The numbers of a `pg_config` rank list (`lenient_int`'s rule), fast for the usual
    list of plain ints (a world group lists every rank in every rank's file: checked in one
    C pass, ~18 us for 2,048 ranks against ~85 us for type, min and max in Python)."""
    if not values:
        return []
    try:
        return msgspec.convert(values, _INT64_LIST)
    except msgspec.ValidationError:
        return [n for n in map(lenient_int, values) if n is not None]


def _configured_groups(info: dict[str, Any]) -> list[ProcessGroup]:
    out = []
    for pg in info.get("pg_config") or []:
        if not isinstance(pg, dict) or pg.get("pg_name") is None:
            continue
        ranks = pg.get("ranks")
        out.append(
            ProcessGroup(
                name=str(pg["pg_name"]),
                description=_description(pg.get("pg_desc")),
                backend_config=pg.get("backend_config")
                if isinstance(pg.get("backend_config"), str)
                else None,
                size=lenient_int(pg.get("pg_size")),
                ranks=_int_list(ranks) if isinstance(ranks, list) else None,
            )
        )
    return out


def subtract(a: IntervalUnion, b: IntervalUnion) -> IntervalUnion:
    """a minus b, both merged unions."""
    if len(a) == 0 or len(b) == 0:
        return a
    times = np.concatenate([a.starts, a.ends, b.starts, b.ends])
    da = np.concatenate([np.ones(len(a)), -np.ones(len(a)), np.zeros(2 * len(b))])
    db = np.concatenate([np.zeros(2 * len(a)), np.ones(len(b)), -np.ones(len(b))])
    order = np.argsort(times, kind="stable")
    times, in_a, in_b = times[order], np.cumsum(da[order]), np.cumsum(db[order])
    keep = (in_a[:-1] > 0) & (in_b[:-1] <= 0) & (times[1:] > times[:-1])
    return IntervalUnion(times[:-1][keep], times[1:][keep])


def _cpu_computation(model: TraceModel) -> IntervalUnion:
    """Per thread: `cpu_op` ranges minus the communication ops and DataLoader ranges of that
    thread (a thread blocked in `c10d::allreduce_` inside an autograd hook is not
    computing); then the union over threads."""
    ev = model.events
    host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    names = ev["name"][host]
    comm = name_flags(model, is_comm_op)[names]
    loader = name_flags(model, is_dataloader_range)[names]
    step = name_flags(model, is_step_name)[names]
    is_op = ev["kind"][host] == Kind.CPU_OP
    work = host[is_op & ~comm & ~loader & ~step]
    excluded = host[comm | loader]
    if work.size == 0:
        return IntervalUnion(np.empty(0), np.empty(0))
    thread = ev["pid"].astype(np.int64) * (1 << 32) + ev["tid"].astype(np.int64)
    starts: list[np.ndarray] = []
    stops: list[np.ndarray] = []
    for t in np.unique(thread[work]).tolist():
        mine = work[thread[work] == t]
        busy = IntervalUnion(ev["ts"][mine], ends(model, mine))
        other = excluded[thread[excluded] == t]
        if other.size:
            busy = subtract(busy, IntervalUnion(ev["ts"][other], ends(model, other)))
        starts.append(busy.starts)
        stops.append(busy.ends)
    return IntervalUnion(np.concatenate(starts), np.concatenate(stops))


def summarize_ranks(models: list[TraceModel]) -> list[RankSummary]:
    """The summaries of many ranks (a worker's batch), each the same as `summarize_rank`
    of it: the tables they share (name flags, row sets, kernel classes, steps,
    collectives) are found together (`rank_batches`); not the GPU work, which only a
    critical path's graph reads."""
    return made_sharing_tables(summarize_rank, models, gpu_work=False)


def summarize_rank(model: TraceModel) -> RankSummary:
    steps = find_steps(model)
    coll = comms.extract(model)
    has_kernels = complete_rows(model, Kind.KERNEL).size > 0
    info = model.header.get("distributedInfo")
    info = info if isinstance(info, dict) else {}
    backend = info.get("backend")
    host = model.header.get("host_name")
    devices = gpu_summary.summarize(model, steps) if has_kernels else []
    return RankSummary(
        version=VERSION,
        rank=header_rank(model.header),
        backend=backend if isinstance(backend, str) else None,
        world_size=lenient_int(info.get("world_size")),
        host=host if isinstance(host, str) else None,
        process_groups=[_shared_group(pg) for pg in _process_groups(info, coll.groups)],
        mode="gpu" if has_kernels else "cpu",
        time_origin_us=model.time_origin_us,
        steps_source=steps.source,
        steps=_step_summaries(model, steps, has_kernels),
        collectives=collective_table(coll, steps),
        devices=[dict(d) for d in devices],
        partial=bool(model.partial),
        warnings=list(model.warnings),
    )


def _step_summaries(model: TraceModel, steps: Steps, has_kernels: bool) -> list[StepTimes]:
    """Per step: computation, overlap, communication and other time (the module doc's
    definitions), and the Overview's data loading and host gap parts."""
    n = len(steps)
    roles = breakdown.role_intervals(model)
    communication = IntervalUnion(*roles["communication"])
    # The Overview's communication role, unchanged: on CPU ranks it holds the collective
    # ops' ranges, so both pages give a rank the same communication time.
    if has_kernels:
        computation = IntervalUnion(*roles["kernel"])
    else:
        computation = _cpu_computation(model)
    lo, hi = steps.starts, steps.ends
    c = computation.covered(lo, hi) if n else np.zeros(0)
    m = communication.covered(lo, hi) if n else np.zeros(0)
    u = computation.union(communication).covered(lo, hi) if n else np.zeros(0)
    parts = breakdown.breakdown(model, steps, roles)
    loader = parts[:, breakdown.ALL_PARTS.index("dataloader")].tolist()
    host_gap = parts[:, breakdown.ALL_PARTS.index("other")].tolist()
    # As Python floats (the same doubles, without a numpy scalar per operation).
    lo_, hi_, c_, m_, u_ = lo.tolist(), hi.tolist(), c.tolist(), m.tolist(), u.tolist()
    return [
        {
            "name": steps.names[i],
            "number": steps.numbers[i],
            "start_us": lo_[i],
            "end_us": hi_[i],
            "computation_us": max(u_[i] - m_[i], 0.0),
            "overlap_us": max(c_[i] + m_[i] - u_[i], 0.0),
            "communication_us": max(u_[i] - c_[i], 0.0),
            "other_us": max(hi_[i] - lo_[i] - u_[i], 0.0),
            "dataloader_us": loader[i],
            "host_gap_us": host_gap[i],
        }
        for i in range(n)
    ]


def collective_table(coll: comms.Collectives, steps: Steps) -> CollectiveTable:
    """Every collective instance of the rank, with the step it starts in (-1: none)."""
    kinds = sorted(set(coll.kind))
    pgs = sorted(set(coll.pg))
    step_of = np.full(len(coll), -1, dtype=np.int64)
    lo, hi = steps.starts, steps.ends
    if len(steps) and len(coll):
        pos = np.searchsorted(lo, coll.start, side="right") - 1
        inside = (pos >= 0) & (coll.start < hi[np.maximum(pos, 0)])
        step_of[inside] = pos[inside]
    numbers = np.array([-1 if n is None else n for n in steps.numbers] + [-1], dtype=np.int64)
    kind_index = {k: i for i, k in enumerate(kinds)}
    pg_index = {p: i for i, p in enumerate(pgs)}
    return pack_table(
        kinds,
        pgs,
        kind=np.array([kind_index[k] for k in coll.kind], dtype=np.int64),
        pg=np.array([pg_index[p] for p in coll.pg], dtype=np.int64),
        seq=coll.seq,
        start_us=coll.start,
        end_us=coll.end,
        nbytes=coll.nbytes,
        group_size=coll.group_size,
        gs_from=coll.gs_from,
        step=step_of,
        step_number=numbers[step_of],  # -1 indexes the appended -1
        dst=coll.dst,
        src=coll.src,
        comms_id=coll.comms_id,
    )
