"""Distributed view: every rank of a job, computation vs communication, waits, stragglers.

Two stages (docs/distributed.md):

1. `summarize_rank(model) -> RankSummary`, per trace file: plain numbers per step and one
   small array per collective instance (type, process group, sequence, start, end, bytes),
   never the events. It runs wherever the file is (a thread, a process, a cluster worker)
   and is cached on disk.
2. `analyze(ranks) -> DistributedView`, across ranks, from the summaries only.

Definitions, per step window (the steps of `analysis/steps.py`):
- GPU ranks (the trace has kernels), as the old plugin: C = union of GPU kernels that are
  not communication, M = union of communication kernels (name rule, or launched by a
  communication op) and of host collective ranges (`gloo:*`);
- CPU ranks (no kernels, e.g. gloo jobs): C = union over threads of the thread's `cpu_op`
  ranges minus, on the same thread, communication ops (`c10d::*`, `record_param_comms`,
  `gloo:*`, ...) and DataLoader ranges (a training thread blocked in `c10d::allreduce_`
  inside an autograd hook is not computing); M = union of the ranges of communication
  ops on any thread: the backend's own ranges (`gloo:*`, `mpi:*`, `ucc:*`, on its worker
  threads) and the training threads' calls into it (`c10d::*`, `record_param_comms`),
  which block while the collective runs.
Then computation = |C \\ M|, overlap = |C ∩ M|, communication = |M \\ C|,
other = step duration - |C ∪ M|; the four add up to the step.

Synchronizing vs transfer: the same collective on each rank is matched by (process group,
type, `Seq`) when every instance of that group on the rank has a `Seq`, else by (process
group, type, n-th occurrence on the rank). A rank waits from its own start until the last
rank of the match starts: wait = clip(max start - own start, 0, duration), transfer = the
rest. A collective seen on one rank only is all transfer (and counted as unmatched).
Times are aligned across ranks as absolute epoch time (`baseTimeNanoseconds` + ts); ranks on
different hosts carry their clock difference into the waits.

Bandwidth per collective type: algorithm bandwidth = size / transfer time, bus bandwidth =
algorithm bandwidth x NCCL's factor (`data/communication.json`), n = `Group size` of the
collective, else the process group's size, else world size, else the ranks found; only
instances whose bytes are known count.

Stragglers, per step seen on at least two ranks: each rank's arrival is its start of the
earliest collective of the step that every one of these ranks ran (the same match), or
the step's end when there is none; the late rank is
the last to arrive, late by its arrival minus the median arrival of the other ranks. Its
cause (analysis/distributed/stragglers.py) separates entering the step late (its step started after
the others') from the excess over the other ranks' median, inside the step, of
computation (|C|), data loading (the overview breakdown's DataLoader part), host gaps
(the breakdown's Other part: nothing ran) and communication transfer time; a cause is
named only when it accounts for at least half of the lateness, else "unknown" with what
is explained and what is not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, TypedDict

import numpy as np

from ..ranks import assign_ranks
from ..recommendations import Recommendation, job_advice
from ..rules import (
    bandwidth_size_multiplier,
    bus_bandwidth_factor,
)
from .stragglers import FACTORS, explain, median_excluding
from .summary import (
    VERSION,
    RankSummary,
    summarize_rank,
)

__all__ = ["FACTORS", "VERSION", "RankInput", "RankSummary", "analyze", "summarize_rank"]

# Bump when RankSummary or its definitions change (keys the disk cache). 2: the kernel
# taxonomy, one communication definition with the Overview, straggler causes.


# --- stage 2: across ranks -----------------------------------------------------------------


@dataclass
class RankInput:
    """One rank's summary and where it came from."""

    worker: str
    span: str
    file: str
    summary: RankSummary
    name_rank: Optional[int] = None  # the rank the file name states


class CollectiveStats(TypedDict):
    name: str
    calls: int
    bytes: int | None  # None when no call's size is known
    total_us: float
    avg_us: float
    sync_wait_us: float
    transfer_us: float
    algbw_gbps: float | None
    busbw_gbps: float | None


class RankStep(TypedDict):
    name: str
    number: int | None
    start_us: float
    end_us: float
    duration_us: float
    computation_us: float
    overlap_us: float
    communication_us: float
    other_us: float
    dataloader_us: float
    host_gap_us: float
    sync_wait_us: float
    transfer_us: float


class RankView(TypedDict):
    rank: int
    rank_source: str
    worker: str
    span: str
    file: str
    host: str | None
    mode: str
    steps_source: str
    step_count: int
    step_time_us: float
    computation_us: float
    overlap_us: float
    communication_us: float
    other_us: float
    sync_wait_us: float
    transfer_us: float
    unmatched_collectives: int
    collectives: list[CollectiveStats]
    steps: list[RankStep]
    devices: list[dict[str, Any]]
    partial: bool
    warnings: list[str]


class StepWindow(TypedDict):
    worker: str
    span: str
    start_us: float
    end_us: float


class Straggler(TypedDict):
    rank: int
    worker: str
    late_by_us: float
    measured: str  # "first_collective" or "step_end"
    cause: str  # "arrived_late", one of FACTORS, or "unknown" (analysis/distributed/stragglers.py)
    cause_excess_us: float
    cause_share_pct: float  # of late_by; a named cause has at least 50
    arrived_late_us: float  # entered the step late by this much (part of late_by)
    entry_before_window: bool  # ... at its first profiled step: why is not in the trace
    in_step_late_us: float
    explained_us: float
    unexplained_us: float
    excess_us: dict[str, float]  # late rank's value minus the median of the others
    window: StepWindow


class JobStep(TypedDict):
    name: str
    number: int | None
    ranks: int
    median_duration_us: float
    max_duration_us: float
    straggler: Straggler | None


class StragglerCount(TypedDict):
    rank: int
    worker: str
    steps_late: int
    late_by_us: float


class ProcessGroupView(TypedDict):
    name: str
    description: str | None
    backend_config: str | None
    size: int | None
    ranks: list[int] | None


class DistributedView(TypedDict):
    world_size: int | None
    backend: str | None
    process_groups: list[ProcessGroupView]
    mode: str
    ranks_found: int
    ranks: list[RankView]
    collectives: list[CollectiveStats]
    steps: list[JobStep]
    stragglers: list[StragglerCount]
    recommendations: list[Recommendation]
    warnings: list[str]


def _r(x: float) -> float:
    return round(float(x), 3)


def analyze(inputs: list[RankInput]) -> DistributedView:
    """The cross-rank view, from the summaries only."""
    ranks, rank_sources, warnings = assign_ranks([(i.summary.rank, i.name_rank) for i in inputs])
    order = sorted(range(len(inputs)), key=lambda i: ranks[i])
    inputs = [inputs[i] for i in order]
    ranks = [ranks[i] for i in order]
    rank_sources = [rank_sources[i] for i in order]
    n_ranks = len(inputs)
    summaries = [i.summary for i in inputs]

    world_sizes = [s.world_size for s in summaries if s.world_size is not None]
    world_size = max(world_sizes) if world_sizes else None
    backends = [s.backend for s in summaries if s.backend]
    backend = backends[0] if backends else None
    groups: dict[str, ProcessGroupView] = {}
    for s in summaries:
        for pg in s.process_groups:
            groups.setdefault(
                pg.name,
                {
                    "name": pg.name,
                    "description": pg.description,
                    "backend_config": pg.backend_config,
                    "size": pg.size,
                    "ranks": pg.ranks,
                },
            )
    if world_size is not None and world_size > n_ranks:
        warnings.append(
            f"world size {world_size} but {n_ranks} rank traces found: waits are measured "
            "among the ranks found only"
        )
    hosts = {s.host for s in summaries if s.host}
    if len(hosts) > 1:
        warnings.append(
            f"ranks ran on {len(hosts)} hosts: waits include the hosts' clock differences"
        )
    modes = {s.mode for s in summaries}
    mode = modes.pop() if len(modes) == 1 else ("mixed" if modes else "none")

    inst = _instances(summaries)
    _match(inst)
    _group_sizes(inst, summaries, groups, world_size, n_ranks)

    kind_names = inst.kind_names
    per_rank_kind = _per_rank_kind(inst, n_ranks, len(kind_names))
    step_offsets = np.cumsum([0] + [len(s.steps) for s in summaries])
    flat_steps = int(step_offsets[-1])
    step_wait = np.zeros(flat_steps)
    step_transfer = np.zeros(flat_steps)
    in_step = inst.step >= 0
    flat = step_offsets[inst.rank[in_step]] + inst.step[in_step]
    np.add.at(step_wait, flat, inst.wait[in_step])
    np.add.at(step_transfer, flat, inst.transfer[in_step])
    inst_flat = np.full(inst.start.size, -1, dtype=np.int64)
    inst_flat[in_step] = flat

    rank_views: list[RankView] = []
    for r, (item, s) in enumerate(zip(inputs, summaries)):
        base = int(step_offsets[r])
        steps_view: list[RankStep] = []
        for j, st in enumerate(s.steps):
            steps_view.append(
                {
                    "name": st.name,
                    "number": st.number,
                    "start_us": st.start_us,
                    "end_us": st.end_us,
                    "duration_us": _r(st.end_us - st.start_us),
                    "computation_us": _r(st.computation_us),
                    "overlap_us": _r(st.overlap_us),
                    "communication_us": _r(st.communication_us),
                    "other_us": _r(st.other_us),
                    "dataloader_us": _r(st.dataloader_us),
                    "host_gap_us": _r(st.host_gap_us),
                    "sync_wait_us": _r(step_wait[base + j]),
                    "transfer_us": _r(step_transfer[base + j]),
                }
            )
        mine = inst.rank == r
        rank_views.append(
            {
                "rank": ranks[r],
                "rank_source": rank_sources[r],
                "worker": item.worker,
                "span": item.span,
                "file": item.file,
                "host": s.host,
                "mode": s.mode,
                "steps_source": s.steps_source,
                "step_count": len(s.steps),
                "step_time_us": _r(sum(st.end_us - st.start_us for st in s.steps)),
                "computation_us": _r(sum(st.computation_us for st in s.steps)),
                "overlap_us": _r(sum(st.overlap_us for st in s.steps)),
                "communication_us": _r(sum(st.communication_us for st in s.steps)),
                "other_us": _r(sum(st.other_us for st in s.steps)),
                "sync_wait_us": _r(inst.wait[mine].sum()),
                "transfer_us": _r(inst.transfer[mine].sum()),
                "unmatched_collectives": int((mine & ~inst.matched).sum()),
                "collectives": _stats_rows(per_rank_kind, r, kind_names),
                "steps": steps_view,
                "devices": s.devices,
                "partial": s.partial,
                "warnings": s.warnings,
            }
        )
    job_kind = {key: value.sum(axis=0, keepdims=True) for key, value in per_rank_kind.items()}
    job_steps, counts = _stragglers(inputs, ranks, summaries, step_offsets, inst, inst_flat)
    return {
        "world_size": world_size,
        "backend": backend,
        "process_groups": [groups[k] for k in sorted(groups, key=_natural)],
        "mode": mode,
        "ranks_found": n_ranks,
        "ranks": rank_views,
        "collectives": _stats_rows(job_kind, 0, kind_names),
        "steps": job_steps,
        "stragglers": counts,
        "recommendations": job_advice(rank_views),
        "warnings": warnings,
    }


def _natural(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 62, name)


@dataclass
class _Instances:
    """Every collective instance of every rank, as flat arrays."""

    kind_names: list[str]
    pg_names: list[str]
    rank: np.ndarray
    kind: np.ndarray
    pg: np.ndarray
    seq: np.ndarray
    start: np.ndarray  # aligned across ranks
    end: np.ndarray
    nbytes: np.ndarray
    group_size: np.ndarray
    step: np.ndarray
    wait: np.ndarray = field(default_factory=lambda: np.zeros(0))
    transfer: np.ndarray = field(default_factory=lambda: np.zeros(0))
    matched: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    match: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _instances(summaries: list[RankSummary]) -> _Instances:
    kind_names = sorted({k for s in summaries for k in s.collectives.kinds})
    pg_names = sorted({p for s in summaries for p in s.collectives.pgs})
    kind_id = {k: i for i, k in enumerate(kind_names)}
    pg_id = {p: i for i, p in enumerate(pg_names)}
    origins = [s.time_origin_us for s in summaries]
    reference = min(origins) if origins else 0.0
    cols: dict[str, list[np.ndarray]] = {
        k: [] for k in ("rank", "kind", "pg", "seq", "start", "end", "bytes", "gs", "step")
    }
    for r, s in enumerate(summaries):
        t = s.collectives
        count = len(t.start_us)
        offset = s.time_origin_us - reference  # exact: origins are whole microseconds
        cols["rank"].append(np.full(count, r, dtype=np.int64))
        kmap = np.array([kind_id[k] for k in t.kinds], dtype=np.int64)
        pmap = np.array([pg_id[p] for p in t.pgs], dtype=np.int64)
        cols["kind"].append(
            kmap[np.asarray(t.kind, dtype=np.int64)] if count else np.zeros(0, np.int64)
        )
        cols["pg"].append(
            pmap[np.asarray(t.pg, dtype=np.int64)] if count else np.zeros(0, np.int64)
        )
        cols["seq"].append(np.asarray(t.seq, dtype=np.int64))
        cols["start"].append(np.asarray(t.start_us, dtype=np.float64) + offset)
        cols["end"].append(np.asarray(t.end_us, dtype=np.float64) + offset)
        cols["bytes"].append(np.asarray(t.bytes, dtype=np.float64))
        cols["gs"].append(np.asarray(t.group_size, dtype=np.int64))
        cols["step"].append(np.asarray(t.step, dtype=np.int64))

    def cat(name: str, dtype: str) -> np.ndarray:
        parts = cols[name]
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return _Instances(
        kind_names=kind_names,
        pg_names=pg_names,
        rank=cat("rank", "i8"),
        kind=cat("kind", "i8"),
        pg=cat("pg", "i8"),
        seq=cat("seq", "i8"),
        start=cat("start", "f8"),
        end=cat("end", "f8"),
        nbytes=cat("bytes", "f8"),
        group_size=cat("gs", "i8"),
        step=cat("step", "i8"),
    )


def _match(inst: _Instances) -> None:
    """Waits and transfer of every instance (see the module doc)."""
    n = inst.start.size
    duration = np.clip(inst.end - inst.start, 0, None)
    inst.wait = np.zeros(n)
    inst.transfer = duration.copy()
    inst.matched = np.zeros(n, dtype=bool)
    inst.match = np.arange(n, dtype=np.int64)
    if n == 0:
        return
    value = np.zeros(n, dtype=np.int64)
    by_seq = np.zeros(n, dtype=np.int64)
    pair = inst.pg * (int(inst.kind.max()) + 1) + inst.kind
    order = np.lexsort((inst.start, inst.rank, pair))
    for block in np.split(order, np.flatnonzero(np.diff(pair[order])) + 1):
        if (inst.seq[block] >= 0).all():
            value[block] = inst.seq[block]
            by_seq[block] = 1
            continue
        per_rank = np.split(block, np.flatnonzero(np.diff(inst.rank[block])) + 1)
        reference = max(per_rank, key=len)
        ref_end = inst.end[reference]
        ref_order = np.argsort(ref_end, kind="stable")
        for idx in per_rank:
            shift = 0 if idx is reference else _alignment(inst.end[idx], ref_end, ref_order)
            value[idx] = np.arange(idx.size) + shift
    value -= value.min()
    key = (pair * 2 + by_seq) * (int(value.max()) + 1) + value
    _, match = np.unique(key, return_inverse=True)
    match = match.ravel()
    inst.match = match
    members = np.bincount(match)
    last_start = np.full(members.size, -np.inf)
    np.maximum.at(last_start, match, inst.start)
    inst.matched = members[match] >= 2
    wait = np.clip(last_start[match] - inst.start, 0, duration)
    inst.wait = np.where(inst.matched, wait, 0.0)
    inst.transfer = duration - inst.wait


def _alignment(own_end: np.ndarray, ref_end: np.ndarray, order: np.ndarray) -> int:
    """How many places a rank's n-th collective is behind the reference rank's: ranks'
    traces may start at different collectives (a profiler window opened mid-step), but the
    same collective ends at about the same time on every rank. The most common index
    difference to the reference collective ending nearest, kept only when it fits the end
    times better than no shift. `order` sorts `ref_end`."""
    ref_sorted = ref_end[order]
    pos = np.clip(np.searchsorted(ref_sorted, own_end), 1, max(ref_sorted.size - 1, 1))
    if ref_sorted.size == 1:
        nearest = np.zeros(own_end.size, dtype=np.int64)
    else:
        left_closer = (own_end - ref_sorted[pos - 1]) <= (ref_sorted[pos] - own_end)
        nearest = np.where(left_closer, pos - 1, pos)
    diff = order[nearest] - np.arange(own_end.size)
    low = int(diff.min())
    mode = int(np.bincount(diff - low).argmax()) + low

    def misfit(shift: int) -> float:
        i = np.arange(own_end.size)
        j = i + shift
        ok = (j >= 0) & (j < ref_end.size)
        return float(np.median(np.abs(own_end[ok] - ref_end[j[ok]]))) if ok.any() else np.inf

    return mode if mode != 0 and misfit(mode) < misfit(0) else 0


def _group_sizes(
    inst: _Instances,
    summaries: list[RankSummary],
    groups: dict[str, ProcessGroupView],
    world_size: int | None,
    n_ranks: int,
) -> None:
    fallback = world_size or n_ranks
    pg_size = np.array(
        [
            (groups[name]["size"] or fallback) if name in groups else fallback
            for name in inst.pg_names
        ]
        or [fallback],
        dtype=np.int64,
    )
    known = inst.group_size >= 1
    inst.group_size = np.where(known, inst.group_size, pg_size[inst.pg] if inst.pg.size else 0)


def _per_rank_kind(inst: _Instances, n_ranks: int, n_kinds: int) -> dict[str, np.ndarray]:
    shape = (max(n_ranks, 1), max(n_kinds, 1))
    out = {
        k: np.zeros(shape)
        for k in (
            "calls",
            "sized",
            "bytes",
            "total",
            "wait",
            "transfer",
            "bw_size",
            "bus_size",
            "bw_time",
        )
    }
    if inst.start.size == 0:
        return out
    where = (inst.rank, inst.kind)
    known = inst.nbytes >= 0
    np.add.at(out["calls"], where, 1)
    np.add.at(out["sized"], where, known)
    np.add.at(out["bytes"], where, np.where(known, inst.nbytes, 0))
    np.add.at(out["total"], where, np.clip(inst.end - inst.start, 0, None))
    np.add.at(out["wait"], where, inst.wait)
    np.add.at(out["transfer"], where, inst.transfer)
    size = np.zeros(inst.start.size)
    bus = np.zeros(inst.start.size)
    for k, name in enumerate(inst.kind_names):
        for n in np.unique(inst.group_size[inst.kind == k]).tolist():
            sel = known & (inst.kind == k) & (inst.group_size == n)
            factor = bus_bandwidth_factor(name, int(n))
            if factor is None:
                continue
            size[sel] = inst.nbytes[sel] * bandwidth_size_multiplier(name, int(n))
            bus[sel] = size[sel] * factor
    has_formula = size > 0
    np.add.at(out["bw_size"], where, size)
    np.add.at(out["bus_size"], where, bus)
    np.add.at(out["bw_time"], where, np.where(has_formula, inst.transfer, 0))
    return out


def _stats_rows(
    table: dict[str, np.ndarray], row: int, kind_names: list[str]
) -> list[CollectiveStats]:
    out: list[CollectiveStats] = []
    for k, name in enumerate(kind_names):
        calls = int(table["calls"][row, k])
        if calls == 0:
            continue
        time = table["bw_time"][row, k]
        out.append(
            {
                "name": name,
                "calls": calls,
                "bytes": int(table["bytes"][row, k]) if table["sized"][row, k] else None,
                "total_us": _r(table["total"][row, k]),
                "avg_us": _r(table["total"][row, k] / calls),
                "sync_wait_us": _r(table["wait"][row, k]),
                "transfer_us": _r(table["transfer"][row, k]),
                # bytes per microsecond / 1e3 = GB/s
                "algbw_gbps": _r(table["bw_size"][row, k] / time / 1e3) if time > 0 else None,
                "busbw_gbps": _r(table["bus_size"][row, k] / time / 1e3) if time > 0 else None,
            }
        )
    out.sort(key=lambda c: -c["total_us"])
    return out


def _first_common_collective(
    inst: _Instances, inst_flat: np.ndarray, flat: np.ndarray, rs: np.ndarray
) -> np.ndarray | None:
    """Each rank's start of the earliest collective of the step that all its ranks ran
    (the same match), or None when there is none."""
    sel = np.flatnonzero(np.isin(inst_flat, flat))
    if sel.size == 0:
        return None
    ranks = int(inst.rank.max()) + 1
    pairs = np.unique(inst.match[sel] * ranks + inst.rank[sel])  # distinct (match, rank)
    ids, counts = np.unique(pairs // ranks, return_counts=True)
    common = ids[counts == rs.size]
    if common.size == 0:
        return None
    sel = sel[np.isin(inst.match[sel], common)]
    chosen = inst.match[sel[np.argmin(inst.start[sel])]]
    sel = sel[inst.match[sel] == chosen]
    arrivals = np.full(rs.size, np.inf)
    position = {int(r): i for i, r in enumerate(rs.tolist())}
    for i in sel.tolist():
        p = position[int(inst.rank[i])]
        arrivals[p] = min(arrivals[p], inst.start[i])
    return arrivals


def _transfer_before(
    inst: _Instances, inst_flat: np.ndarray, flat: np.ndarray, arrivals: np.ndarray
) -> np.ndarray:
    """Per rank of a step, the transfer time of its collectives of the step that started
    before its arrival: only those can have delayed it."""
    out = np.zeros(flat.size)
    sel = np.flatnonzero(np.isin(inst_flat, flat))
    order = np.argsort(flat)
    member = order[np.searchsorted(flat, inst_flat[sel], sorter=order)]  # each one's rank
    early = inst.start[sel] < arrivals[member]
    np.add.at(out, member[early], inst.transfer[sel[early]])
    return out


def _stragglers(
    inputs: list[RankInput],
    ranks: list[int],
    summaries: list[RankSummary],
    step_offsets: np.ndarray,
    inst: _Instances,
    inst_flat: np.ndarray,
) -> tuple[list[JobStep], list[StragglerCount]]:
    origins = [s.time_origin_us for s in summaries]
    reference = min(origins) if origins else 0.0
    # Steps of different ranks are the same step when they have the same number
    # (ProfilerStep#N), else the same position.
    keyed: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for r, s in enumerate(summaries):
        for j, st in enumerate(s.steps):
            key = (0, st.number) if st.number is not None else (1, j)
            keyed.setdefault(key, []).append((r, j))
    late_steps = np.zeros(len(summaries), dtype=np.int64)
    late_total = np.zeros(len(summaries))
    out: list[JobStep] = []
    for key in sorted(keyed):
        members = keyed[key]
        rs = np.array([r for r, _ in members])
        flat = np.array([int(step_offsets[r]) + j for r, j in members])
        steps = [summaries[r].steps[j] for r, j in members]
        durations = np.array([st.end_us - st.start_us for st in steps])
        first = steps[0]
        job_step: JobStep = {
            "name": first.name,
            "number": first.number,
            "ranks": len(members),
            "median_duration_us": _r(np.median(durations)),
            "max_duration_us": _r(durations.max()),
            "straggler": None,
        }
        if len(members) >= 2:
            offsets = np.array([origins[r] - reference for r in rs])  # onto one clock
            arrivals = _first_common_collective(inst, inst_flat, flat, rs)
            measured = "first_collective"
            if arrivals is None:
                arrivals = np.array([st.end_us for st in steps]) + offsets
                measured = "step_end"
            late = int(np.argmax(arrivals))
            values = {
                "computation": np.array([st.computation_us + st.overlap_us for st in steps]),
                "dataloader": np.array([st.dataloader_us for st in steps]),
                "host_gap": np.array([st.host_gap_us for st in steps]),
                "communication": _transfer_before(inst, inst_flat, flat, arrivals),
            }
            r = int(rs[late])
            late_by = float(arrivals[late] - median_excluding(arrivals, late))
            starts = np.array([st.start_us for st in steps]) + offsets
            why = explain(late_by, late, starts, values, first_profiled=members[late][1] == 0)
            late_steps[r] += 1
            late_total[r] += late_by
            st = steps[late]
            job_step["straggler"] = {
                "rank": ranks[r],
                "worker": inputs[r].worker,
                "late_by_us": _r(late_by),
                "measured": measured,
                **why,
                "window": {
                    "worker": inputs[r].worker,
                    "span": inputs[r].span,
                    "start_us": st.start_us,
                    "end_us": st.end_us,
                },
            }
        out.append(job_step)
    counts: list[StragglerCount] = [
        {
            "rank": ranks[r],
            "worker": inputs[r].worker,
            "steps_late": int(late_steps[r]),
            "late_by_us": _r(late_total[r]),
        }
        for r in np.argsort(-late_total, kind="stable").tolist()
        if late_steps[r] > 0
    ]
    return out, counts
