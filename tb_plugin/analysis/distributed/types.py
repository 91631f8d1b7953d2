"""The distributed view's types: what stage 2 takes in (RankInput) and gives out (the
view's JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional, TypedDict

from ..core.overview_types import Recommendation
from ..core.run_job_types import DistributedLoading as DistributedLoading
from .summary import RankSummary, StepTimes


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
    transfer_us: float  # matched calls only: sync_wait + transfer + unmatched = total
    unmatched_us: float  # instances seen on this rank only: neither wait nor transfer
    algbw_gbps: float | None
    busbw_gbps: float | None
    group_size: int | None  # n of the bandwidth formulas; None when the calls differ
    # where n comes from (the least direct of its calls'): args, sizes (all_gather's
    # output / input), process_group, world_size or ranks_found (summary.GS_SOURCES)
    group_size_source: str | None


class RankStep(StepTimes):
    """A step of a rank as the view answers it: its times rounded, and its collectives'
    sync wait and transfer, which need the other ranks."""

    duration_us: float
    sync_wait_us: float
    transfer_us: float
    unmatched_us: float


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
    transfer_us: float  # of its matched collectives
    unmatched_collectives: int
    unmatched_us: float  # its unmatched collectives' time
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
    measured: str  # "first_collective", "first_group_collective" or "step_end"
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


class GroupCall(TypedDict):
    """The call of a group that shows its verdict best, on one rank's clock (to open it in
    that rank's trace view): the longest hold by the waited-for rank, else the slowest
    transfer, else the longest call."""

    type: str
    seq: int | None
    rank: int  # the rank whose trace times these are (waited-for rank, else a member)
    start_us: float  # first member's arrival (trace time of `rank`)
    end_us: float  # last member's end


class GroupRow(TypedDict):
    """One communication group (groups.py)."""

    name: str
    description: str | None
    role: str  # DP, TP, PP, EP, CP, world, or "" when nothing shows it
    ranks: list[int]  # its members (pg_config / args), else the ranks seen in it
    ranks_found: int
    collectives: int  # calls matched across two or more ranks (send/recv excluded)
    p2p_ops: int
    transfer_us: float
    sync_us: float
    busbw_gbps: float | None
    transfer_ratio: float | None  # vs groups of the same type, size and members
    waits_for: int | None  # the rank the others wait for, again and again
    waits_for_us: float
    verdict: str  # ok, slow_link, waits_for_rank
    call: GroupCall | None


class LinkRow(TypedDict):
    """Send/recv between two global ranks."""

    src: int
    dst: int
    ops: int
    bytes: int | None
    time_us: float
    gbps: float | None


class RankOffset(TypedDict):
    rank: int
    offset_us: float  # its collectives end this much after the other ranks' (median)
    spread_us: float  # interquartile range of its per-call differences
    calls: int  # matched collective calls the median is over
    skewed: bool  # |offset_us| > max(the tolerance, spread_us)


class RunHealthCheck(TypedDict):
    """A check of a run across its ranks (as the `health` route's checks, its examples
    are ranks)."""

    id: str
    count: int | None  # ranks beyond the tolerance; null: cannot run (`unknown` says why)
    severity: Literal["error", "warning", "info"]
    effect: Literal["left_out", "kept"]
    description: str
    unknown: str | None
    tolerance_us: float
    examples: list[RankOffset]  # the skewed ranks, largest offset first


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
    groups: list[GroupRow]
    slow_ranks: list[int]
    slow_groups: list[str]
    links: list[LinkRow]
    recommendations: list[Recommendation]
    clock_offsets: list[RankOffset]  # clock_skew.py
    health: list[RunHealthCheck]  # run-level checks: rank_clock_skew
    warnings: list[str]


# --- the run-level envelope: the view with its run, and the ranks that failed -----------------


class _RankKey(TypedDict):
    worker: str
    span: str


class RankError(_RankKey, total=False):
    """A rank whose file could not be summarized: the `status` error fields, when known."""

    kind: str
    message: str
    file: Optional[str]
    offset: Optional[int]


class DistributedResponse(DistributedView):
    run: str
    span: str
    state: Literal["ready"]
    errors: list[RankError]
