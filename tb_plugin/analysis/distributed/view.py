"""Distributed view: every rank of a job, computation vs communication, waits, stragglers.

Two stages (docs/distributed.md):

1. `summarize_rank(model) -> RankSummary`, per trace file: plain numbers per step and one
   small array per collective instance (type, process group, sequence, start, end, bytes),
   never the events. It runs wherever the file is (a thread, a process, a cluster worker)
   and is cached on disk.
2. `analyze(ranks) -> DistributedView`, across ranks, from the summaries only.

Definitions, per step window (the steps of `analysis/core/steps.py`):
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
type, `Seq`) when every instance of that group on the rank has a `Seq`, else by type,
bytes and end time (pairing.py: ranks' files may hold different subsets of the calls). A
rank waits from its own start until the last rank of the match starts: wait =
clip(max start - own start, 0, duration), transfer = the rest. A collective seen on one
rank only is neither: its time is `unmatched_us` (and it is counted as unmatched).
Times are aligned across ranks as absolute epoch time (`baseTimeNanoseconds` + ts); ranks on
different hosts carry their clock difference into the waits.

Bandwidth per collective type: algorithm bandwidth = size / transfer time of matched
instances, bus bandwidth = algorithm bandwidth x NCCL's factor (`data/communication.json`),
n = the collective's group size (`Group size`, else all_gather's output over its input),
else the process group's size, else world size, else the ranks found (`group_size_source`
says which); only instances whose bytes are known count.

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

import numpy as np

from ..core.overview_types import Recommendation
from ..core.ranks import assign_ranks
from ..core.recommendations import COMMUNICATION_PCT, communication_advice
from .clock_skew import run_clock_skew
from .collective_stats import over_ranks, per_rank_kind, stats_rows
from .groups import cluster_view, natural_order
from .matching import Instances, group_sizes, instances, match_instances, transfer_parts
from .rounding import rounded, rounded_all
from .step_table import STEP_PARTS, StepTable, step_table
from .stragglers import FACTORS, straggler_steps
from .summary import (
    VERSION,
    RankSummary,
    summarize_rank,
    summarize_ranks,
)
from .types import (
    DistributedView,
    ProcessGroupView,
    RankInput,
    RankStep,
    RankView,
)

__all__ = [
    "FACTORS",
    "VERSION",
    "RankInput",
    "RankSummary",
    "analyze",
    "summarize_rank",
    "summarize_ranks",
]

# --- stage 2: across ranks -----------------------------------------------------------------

_r = rounded


def analyze(inputs: list[RankInput]) -> DistributedView:
    """The cross-rank view, from the summaries only."""
    ranks, rank_sources, warnings = assign_ranks([(i.summary.rank, i.name_rank) for i in inputs])
    order = sorted(range(len(inputs)), key=lambda i: ranks[i])
    inputs = [inputs[i] for i in order]
    ranks = [ranks[i] for i in order]
    rank_sources = [rank_sources[i] for i in order]
    n_ranks = len(inputs)
    summaries = [i.summary for i in inputs]

    world_size = max((s.world_size for s in summaries if s.world_size is not None), default=None)
    backends = [s.backend for s in summaries if s.backend]
    groups = _process_groups(summaries)
    warnings += _job_warnings(summaries, world_size, n_ranks)
    modes = {s.mode for s in summaries}
    mode = modes.pop() if len(modes) == 1 else ("mixed" if modes else "none")

    inst = instances(summaries)
    warnings += _unnamed_groups_warning(summaries, inst)
    match_instances(inst)
    group_sizes(inst, summaries, groups, world_size, n_ranks)

    kind_names = inst.kind_names
    parts = transfer_parts(inst)
    by_rank_kind = per_rank_kind(inst, parts, n_ranks, len(kind_names))
    table = step_table(summaries)
    step_offsets = np.array(table.bounds)
    step_times, inst_flat = _per_step(inst, parts, step_offsets)
    step_rows = _step_rows(table, *step_times)
    # instances come rank after rank (matching.instances): rank r's are inst[lo[r]:lo[r + 1]]
    lo = np.searchsorted(inst.rank, np.arange(n_ranks + 1)).tolist()
    rank_views: list[RankView] = []
    for r, item in enumerate(inputs):
        mine = slice(lo[r], lo[r + 1])
        rank_views.append(_rank_view(item, ranks[r], rank_sources[r], inst, parts, mine))
        _add_step_times(rank_views[-1], table, r)
        rank_views[-1]["steps"] = step_rows[r]
        rank_views[-1]["collectives"] = stats_rows(by_rank_kind, r, kind_names)
    job_kind = {key: over_ranks(key, value) for key, value in by_rank_kind.items()}
    cluster = cluster_view(inst, ranks, groups)
    job_steps, counts = straggler_steps(inputs, ranks, summaries, table, inst, inst_flat)
    return {
        "world_size": world_size,
        "backend": backends[0] if backends else None,
        "process_groups": [groups[k] for k in sorted(groups, key=natural_order)],
        "mode": mode,
        "ranks_found": n_ranks,
        "ranks": rank_views,
        "collectives": stats_rows(job_kind, 0, kind_names),
        "steps": job_steps,
        "stragglers": counts,
        "groups": cluster.groups,
        "slow_ranks": cluster.slow_ranks,
        "slow_groups": cluster.slow_groups,
        "links": cluster.links,
        "recommendations": job_advice(rank_views),
        **run_clock_skew(inst, ranks),
        "warnings": warnings,
    }


def _per_step(
    inst: Instances, parts: tuple[np.ndarray, np.ndarray], step_offsets: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Per flat step (every rank's steps end to end): wait, transfer and unmatched time of
    its collectives (`parts`: `transfer_parts`); and per instance its flat step (-1
    outside every step)."""
    flat_steps = int(step_offsets[-1])
    out = (np.zeros(flat_steps), np.zeros(flat_steps), np.zeros(flat_steps))
    transfer, unmatched = parts
    in_step = inst.step >= 0
    flat = step_offsets[inst.rank[in_step]] + inst.step[in_step]
    for total, values in zip(out, (inst.wait, transfer, unmatched)):
        np.add.at(total, flat, values[in_step])
    inst_flat = np.full(inst.start.size, -1, dtype=np.int64)
    inst_flat[in_step] = flat
    return out, inst_flat


def _process_groups(summaries: list[RankSummary]) -> dict[str, ProcessGroupView]:
    """Every process group any rank describes, by name (the first description wins)."""
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
    return groups


def _job_warnings(summaries: list[RankSummary], world_size: int | None, n_ranks: int) -> list[str]:
    warnings = []
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
    return warnings


def _unnamed_groups_warning(summaries: list[RankSummary], inst: Instances) -> list[str]:
    """Where calls name no process group (gloo's, traces without `record_shapes`) but the
    ranks' traces configure different groups: such calls are paired by type, bytes and
    time alone, and two groups' calls of one type and size can be taken for one call."""
    if "" not in inst.pg_names:
        return []
    unnamed = inst.pg == inst.pg_names.index("")
    ranks = np.unique(inst.rank[unnamed]).tolist()
    member = {
        r: tuple(
            pg.name
            for pg in summaries[r].process_groups
            if pg.ranks is None or summaries[r].rank is None or summaries[r].rank in pg.ranks
        )
        for r in ranks
    }
    if len(set(member.values())) < 2:
        return []
    return [
        f"{int(unnamed.sum())} collectives name no process group while the ranks are in "
        f"{len(set(member.values()))} different sets of groups: calls of two groups with "
        "the same type and size that end close together may be taken for one call"
    ]


def _step_rows(
    table: StepTable, wait: np.ndarray, transfer: np.ndarray, unmatched: np.ndarray
) -> list[list[RankStep]]:
    """Every rank's steps; `wait`, `transfer` and `unmatched` are per flat step (every
    rank's steps end to end). Each number is rounded by column (`rounded_all`)."""
    duration = rounded_all(table.duration)
    times = [rounded_all(table.columns[key]) for key in STEP_PARTS]
    waits, transfers, unmatched_times = (rounded_all(t) for t in (wait, transfer, unmatched))
    rows: list[RankStep] = [
        {
            "name": st["name"],
            "number": st["number"],
            "start_us": st["start_us"],
            "end_us": st["end_us"],
            "duration_us": duration[j],
            "computation_us": times[0][j],
            "overlap_us": times[1][j],
            "communication_us": times[2][j],
            "other_us": times[3][j],
            "dataloader_us": times[4][j],
            "host_gap_us": times[5][j],
            "sync_wait_us": waits[j],
            "transfer_us": transfers[j],
            "unmatched_us": unmatched_times[j],
        }
        for j, st in enumerate(table.steps)
    ]
    bounds = table.bounds
    return [rows[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _add_step_times(view: RankView, table: StepTable, r: int) -> None:
    """Rank r's step time and its parts: the sums of its steps' times, in step order."""
    view["step_time_us"] = _r(sum(table.of_rank("duration", r)))
    for key in ("computation_us", "overlap_us", "communication_us", "other_us"):
        view[key] = _r(sum(table.of_rank(key, r)))  # type: ignore[literal-required]


def _rank_view(
    item: RankInput,
    rank: int,
    source: str,
    inst: Instances,
    parts: tuple[np.ndarray, np.ndarray],
    mine: slice,
) -> RankView:
    """One rank's row, its instances `inst[mine]` (the caller fills in its step times,
    `steps` and `collectives`)."""
    s = item.summary
    transfer, unmatched = parts
    return {
        "rank": rank,
        "rank_source": source,
        "worker": item.worker,
        "span": item.span,
        "file": item.file,
        "host": s.host,
        "mode": s.mode,
        "steps_source": s.steps_source,
        "step_count": len(s.steps),
        "step_time_us": 0.0,
        "computation_us": 0.0,
        "overlap_us": 0.0,
        "communication_us": 0.0,
        "other_us": 0.0,
        "sync_wait_us": _r(inst.wait[mine].sum()),
        "transfer_us": _r(transfer[mine].sum()),
        "unmatched_collectives": int((~inst.matched[mine]).sum()),
        "unmatched_us": _r(unmatched[mine].sum()),
        "collectives": [],
        "steps": [],
        "devices": s.devices,
        "partial": s.partial,
        "warnings": s.warnings,
    }


def job_advice(ranks: list[RankView]) -> list[Recommendation]:
    """The Distributed view's advice: communication over the ranks' steps, with the share
    of it spent waiting for other ranks (sync wait against transfer). Its time is the mean
    per rank (the page shows it beside per-rank times), said so in `time_scope`."""
    step_time = sum(r["step_time_us"] for r in ranks)
    comm = sum(r["communication_us"] for r in ranks)
    if step_time <= 0 or 100.0 * comm / step_time <= COMMUNICATION_PCT:
        return []
    wait = sum(r["sync_wait_us"] for r in ranks)
    in_collectives = wait + sum(r["transfer_us"] for r in ranks)
    steps = dict.fromkeys(  # in order of appearance, each once
        s["name"]
        for r in ranks
        for s in r["steps"]
        if s["duration_us"] > 0
        and 100.0 * s["communication_us"] / s["duration_us"] > COMMUNICATION_PCT
    )
    wait_pct = 100.0 * wait / in_collectives if in_collectives > 0 else None
    per_rank = _r(comm / len(ranks))
    share = 100.0 * comm / step_time
    return [communication_advice(share, per_rank, list(steps), wait_pct, "mean per rank")]
