"""Why a straggler was late: entering the step late versus losing time inside it.

A rank's lateness at a step (its arrival minus the median arrival of the other ranks) has
two parts. It may have *entered* the step late: its step started after the other ranks'
(median) step start, so part of the delay was already there when the step began; what
caused that lies in the previous step, or before the profiled window when this is the
rank's first profiled step. The rest was lost *inside* the step; the in-step factors
(computation, data loading, host gaps, communication transfer) are each the late rank's
step value minus the median of the other ranks. They are measured over the whole step,
so a factor is credited at most the in-step lateness.

A cause is named only when it accounts for at least half of the lateness (entering late
by its delay, an in-step factor by its credited excess); otherwise the cause is
`unknown` and `explained_us` / `unexplained_us` say how much of the lateness the parts
above cover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from .matching import Instances
from .step_table import StepTable
from .summary import RankSummary
from .types import JobStep, RankInput, Straggler, StragglerCount

FACTORS = ("computation", "dataloader", "host_gap", "communication")
ARRIVED_LATE = "arrived_late"
CAUSE_SHARE = 0.5  # a named cause accounts for at least this share of the lateness
# Below a trace's time resolution (1 µs) lateness is rounding (ranks' clock origins are
# not exact in float microseconds), not a straggler.
MIN_LATE_US = 1.0


class Cause(TypedDict):
    cause: str  # ARRIVED_LATE, one of FACTORS, or "unknown"
    cause_excess_us: float  # the cause's own measure: entry delay or excess; 0 when unknown
    cause_share_pct: float  # share of the lateness the cause accounts for; 0 when unknown
    arrived_late_us: float  # entered the step this much after the others (0..late_by)
    entry_before_window: bool  # arrived late at the rank's first profiled step
    in_step_late_us: float  # late_by - arrived_late_us: lost inside the step
    explained_us: float  # arrived late + credited in-step excesses, at most late_by
    unexplained_us: float  # late_by - explained_us
    excess_us: dict[str, float]  # per factor: the late rank's value minus the others' median


def median_excluding(values: np.ndarray, index: int) -> float:
    others = np.delete(values, index)
    return float(np.median(others)) if others.size else float(values[index])


def _r(x: float) -> float:
    return round(float(x), 3)


def explain(
    late_by: float,
    late: int,
    step_starts: np.ndarray,
    factors: dict[str, np.ndarray],
    first_profiled: bool,
) -> Cause:
    """The cause of rank `late`'s lateness; `step_starts` are the ranks' step starts on one
    clock, `factors` their per-step values, `first_profiled` whether this step is the late
    rank's first in its trace."""
    late_by = max(float(late_by), 0.0)
    entry = float(step_starts[late]) - median_excluding(step_starts, late)
    arrived = min(max(entry, 0.0), late_by)
    in_step = late_by - arrived
    excess = {f: _r(v[late] - median_excluding(v, late)) for f, v in factors.items()}
    credited = {f: min(max(x, 0.0), in_step) for f, x in excess.items()}
    amounts = {ARRIVED_LATE: arrived, **credited}
    best = max(amounts, key=lambda k: amounts[k])
    named = late_by > 0 and amounts[best] >= CAUSE_SHARE * late_by
    explained = min(arrived + sum(credited.values()), late_by)
    measure = arrived if best == ARRIVED_LATE else excess[best]
    return {
        "cause": best if named else "unknown",
        "cause_excess_us": _r(measure) if named else 0.0,
        "cause_share_pct": _r(100.0 * amounts[best] / late_by) if named else 0.0,
        "arrived_late_us": _r(arrived),
        "entry_before_window": bool(first_profiled and arrived > 0),
        "in_step_late_us": _r(in_step),
        "explained_us": _r(explained),
        "unexplained_us": _r(late_by - explained),
        "excess_us": excess,
    }


# --- the stage: who was late at each step ------------------------------------------------


def _first_common_collective(inst: Instances, sel: np.ndarray, rs: np.ndarray) -> np.ndarray | None:
    """Each rank's start of the earliest collective of the step (its instances `sel`) that
    all its ranks ran (the same match), or None when there is none."""
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


def _first_call_lateness(
    inst: Instances, sel: np.ndarray, rs: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Without a collective of all the step's ranks (a job of many groups): each rank's
    first matched call of the step (its instances `sel`), its start and how much later
    than the median of that call's other members it came (0 for a rank without one)."""
    sel = sel[inst.matched[sel]]
    if sel.size == 0:
        return None
    position = np.full(int(inst.rank.max()) + 1, -1, dtype=np.int64)
    position[rs] = np.arange(rs.size)
    # the step's instances by call, then start: each call a segment
    by_call = sel[np.lexsort((inst.start[sel], inst.match[sel]))]
    calls = inst.match[by_call]
    seg_first = np.flatnonzero(np.r_[True, np.diff(calls) != 0])
    seg_of = np.cumsum(np.r_[True, np.diff(calls) != 0]) - 1
    size = np.diff(np.r_[seg_first, calls.size])
    # each rank's first instance of the step (by start)
    by_rank = np.lexsort((inst.start[by_call], inst.rank[by_call]))
    firsts = by_rank[np.r_[True, np.diff(inst.rank[by_call][by_rank]) != 0]]
    seg, base = seg_of[firsts], seg_first[seg_of[firsts]]
    own = firsts - base  # its place in its call's sorted starts
    rest = size[seg] - 1
    starts = inst.start[by_call]

    def remaining(k: np.ndarray) -> np.ndarray:
        """The k-th start of the call without the rank's own."""
        return starts[np.minimum(base + k + (k >= own), calls.size - 1)]

    half = np.maximum(rest // 2, 0)
    odd = remaining(half)
    even = (remaining(np.maximum(half - 1, 0)) + remaining(half)) / 2
    median = np.where(rest % 2 == 1, odd, even)
    arrivals = np.full(rs.size, np.inf)
    lateness = np.zeros(rs.size)
    at = position[inst.rank[by_call[firsts]]]
    arrivals[at] = starts[firsts]
    lateness[at] = np.where(rest > 0, starts[firsts] - median, 0.0)
    return arrivals, lateness


def _transfer_before(
    inst: Instances, inst_flat: np.ndarray, step: _StepRanks, arrivals: np.ndarray
) -> np.ndarray:
    """Per rank of a step, the transfer time of its matched collectives of the step that
    started before its arrival: only those can have delayed it."""
    flat, sel = step.flat, step.instances
    out = np.zeros(flat.size)
    order = np.argsort(flat)
    member = order[np.searchsorted(flat, inst_flat[sel], sorter=order)]  # each one's rank
    early = (inst.start[sel] < arrivals[member]) & inst.matched[sel]
    np.add.at(out, member[early], inst.transfer[sel[early]])
    return out


def straggler_steps(
    inputs: list[RankInput],
    ranks: list[int],
    summaries: list[RankSummary],
    table: StepTable,
    inst: Instances,
    inst_flat: np.ndarray,
) -> tuple[list[JobStep], list[StragglerCount]]:
    origins = np.array([s.time_origin_us for s in summaries], dtype=np.float64)
    reference = float(origins.min()) if origins.size else 0.0
    # Steps of different ranks are the same step when they have the same number
    # (ProfilerStep#N), else the same position.
    keyed: dict[tuple[int, int], list[int]] = {}
    for r in range(len(summaries)):
        for j, i in enumerate(range(table.bounds[r], table.bounds[r + 1])):
            number = table.steps[i]["number"]
            key = (0, number) if number is not None else (1, j)
            keyed.setdefault(key, []).append(i)
    rank_of = np.repeat(np.arange(len(summaries)), np.diff(table.bounds))
    late_steps = np.zeros(len(summaries), dtype=np.int64)
    late_total = np.zeros(len(summaries))
    out: list[JobStep] = []
    step_instances = _instances_by_step(inst_flat, len(table.steps), keyed)
    for key in sorted(keyed):
        flat = np.array(keyed[key], dtype=np.int64)
        rs = rank_of[flat]
        durations = table.array("duration")[flat]
        first = table.steps[int(flat[0])]
        job_step: JobStep = {
            "name": first["name"],
            "number": first["number"],
            "ranks": int(flat.size),
            "median_duration_us": _r(np.median(durations)),
            "max_duration_us": _r(durations.max()),
            "straggler": None,
        }
        if flat.size >= 2:
            offsets = origins[rs] - reference  # onto one clock
            found = _StepRanks(rs, flat, table, offsets, step_instances[key])
            late = _late_rank(inputs, ranks, found, inst, inst_flat)
            if late is not None:  # nobody came later than the others: no straggler
                r, late_by, straggler = late
                late_steps[r] += 1
                late_total[r] += late_by
                job_step["straggler"] = straggler
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


@dataclass
class _StepRanks:
    """The ranks that ran one step: the ranks, their flat step indices (into `table`),
    their clock offsets onto the reference clock, and the step's collective instances."""

    rs: np.ndarray
    flat: np.ndarray
    table: StepTable
    offsets: np.ndarray
    instances: np.ndarray  # the collective instances in these steps, in order

    def column(self, name: str) -> np.ndarray:
        """The ranks' values of a step time (step_table.TIMES)."""
        return self.table.array(name)[self.flat]


def _instances_by_step(
    inst_flat: np.ndarray, flat_steps: int, keyed: dict[tuple[int, int], list[int]]
) -> dict[tuple[int, int], np.ndarray]:
    """Per step key, the instances (in order) that fall in that step on any rank: one
    sort of all instances rather than a search of them all per step."""
    flat_key = np.full(flat_steps + 1, -1, dtype=np.int64)  # last: no step
    keys = list(keyed)
    for k, key in enumerate(keys):
        flat_key[keyed[key]] = k
    of = flat_key[inst_flat]  # -1 (outside every step) indexes the last slot
    order = np.argsort(of, kind="stable")
    bounds = np.searchsorted(of[order], np.arange(len(keys) + 1))
    return {key: order[bounds[k] : bounds[k + 1]] for k, key in enumerate(keys)}


def _late_rank(
    inputs: list[RankInput],
    ranks: list[int],
    step: _StepRanks,
    inst: Instances,
    inst_flat: np.ndarray,
) -> tuple[int, float, Straggler] | None:
    """The last rank to arrive at the step (its index), by how much, and why; None when
    no rank came later than the others."""
    rs, sel = step.rs, step.instances
    arrivals = _first_common_collective(inst, sel, rs)
    measured = "first_collective"
    grouped = None if arrivals is not None else _first_call_lateness(inst, sel, rs)
    if grouped is not None:
        arrivals, lateness = grouped
        measured = "first_group_collective"
        late = int(np.argmax(lateness))
        late_by = float(lateness[late])
    else:
        if arrivals is None:
            arrivals = step.column("end_us") + step.offsets
            measured = "step_end"
        late = int(np.argmax(arrivals))
        late_by = float(arrivals[late] - median_excluding(arrivals, late))
    if late_by < MIN_LATE_US:
        return None
    values = {
        "computation": step.column("computation_us") + step.column("overlap_us"),
        "dataloader": step.column("dataloader_us"),
        "host_gap": step.column("host_gap_us"),
        "communication": _transfer_before(inst, inst_flat, step, arrivals),
    }
    r = int(rs[late])
    starts = step.column("start_us") + step.offsets
    at = int(step.flat[late])
    why = explain(late_by, late, starts, values, first_profiled=at == step.table.bounds[r])
    st = step.table.steps[at]
    straggler: Straggler = {
        "rank": ranks[r],
        "worker": inputs[r].worker,
        "late_by_us": _r(late_by),
        "measured": measured,
        **why,
        "window": {
            "worker": inputs[r].worker,
            "span": inputs[r].span,
            "start_us": st["start_us"],
            "end_us": st["end_us"],
        },
    }
    return r, late_by, straggler
