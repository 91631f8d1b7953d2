"""`rank_clock_skew`: ranks whose clocks disagree with the other ranks'.

A collective completes together: the same call (process group, type, `Seq` or n-th
occurrence: the match of matching.py) ends at nearly the same wall time on every rank
that ran it, whatever each rank waited. So, on the aligned clock (each file's
`baseTimeNanoseconds` + ts), a rank's clock offset is the median, over its matched calls,
of its end minus the median end of the other ranks of that call; the median keeps a few
calls with a slow last ring step from moving it.

A rank is skewed when its offset is larger in size than both `SKEW_TOLERANCE_US` (1 ms)
and its `spread_us`, the interquartile range of its per-call differences: the end of one
collective differs between ranks by the last transfer step (microseconds to tens of
microseconds), far below 1 ms, and a clock offset moves every call alike, so a median
drawn from calls that disagree with each other by more than it is noise, not a clock (the
2020 DDP pairs of the corpus: their calls' end differences spread over tens to hundreds
of milliseconds). Calls without `Seq` are paired by bytes and end time once each rank's
clock correction is taken off (pairing.py), so a skew keeps their pairing when their
bytes are known; without bytes, or for broadcasts paired by occurrence, a skew larger
than the gap between calls can pair them differently: the skew is still found, its size
then only roughly. With two ranks, which
of the two is off cannot be told: both are named, each with its offset to the other.
Waits (each rank's start against the last rank's) and straggler lateness on a skewed rank
are off by about its offset.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from .matching import Instances
from .types import RankOffset, RunHealthCheck

SKEW_TOLERANCE_US = 1000.0
MAX_EXAMPLES = 20

DESCRIPTION = (
    "Ranks whose clock disagrees with the other ranks': the same collective call ends "
    f"more than {SKEW_TOLERANCE_US / 1000:g} ms (and more than the calls' own spread) later "
    "or earlier on them (median over their calls). Waits and straggler lateness on those "
    "ranks are off by about that much."
)


def end_offsets(inst: Instances) -> np.ndarray:
    """Per matched instance, its end minus the median end of the other instances of its
    call (NaN for an instance seen on one rank only)."""
    out = np.full(inst.end.size, np.nan)
    idx = np.flatnonzero(inst.matched)
    if idx.size == 0:
        return out
    order = idx[np.lexsort((inst.end[idx], inst.match[idx]))]
    call = inst.match[order]
    starts = np.r_[0, np.flatnonzero(np.diff(call)) + 1]
    sizes = np.diff(np.r_[starts, order.size])
    first = np.repeat(starts, sizes)
    others = np.repeat(sizes, sizes) - 1
    own = np.arange(order.size) - first  # own place among its call's ends, sorted
    ends = inst.end[order]

    def other_end(place: np.ndarray) -> np.ndarray:
        """The `place`-th smallest end among the other instances of the call."""
        return ends[first + place + (place >= own)]

    median = (other_end((others - 1) // 2) + other_end(others // 2)) / 2
    out[order] = ends - median
    return out


def rank_offsets(inst: Instances, ranks: list[int]) -> list[RankOffset]:
    """Every rank that shares a collective call with another rank, by rank."""
    diff = end_offsets(inst)
    known = np.flatnonzero(~np.isnan(diff))
    known = known[np.argsort(inst.rank[known], kind="stable")]  # rank after rank
    counts = np.bincount(inst.rank[known], minlength=len(ranks))
    median, low, high = _rank_quantiles(diff[known], counts)
    out: list[RankOffset] = []
    for index, rank in enumerate(ranks):
        if counts[index] == 0:
            continue
        offset = round(float(median[index]), 3)
        spread = round(float(high[index] - low[index]), 3)
        out.append(
            {
                "rank": rank,
                "offset_us": offset,
                "spread_us": spread,
                "calls": int(counts[index]),
                "skewed": abs(offset) > max(SKEW_TOLERANCE_US, spread),
            }
        )
    return sorted(out, key=lambda r: r["rank"])


def _rank_quantiles(
    values: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rank, the median and the 25th and 75th percentiles of its `values` (`counts[r]`
    of them, rank after rank; NaN for a rank without any). The ranks with as many values
    are taken together, as the rows of one matrix: numpy's own median and percentile of
    each row, so the same numbers as rank by rank, without a call per rank (2,048 ranks
    usually have one or two counts)."""
    median, low, high = (np.full(counts.size, np.nan) for _ in range(3))
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for n in np.unique(counts[counts > 0]).tolist():
        rows = np.flatnonzero(counts == n)
        table = values[first[rows][:, None] + np.arange(n)]
        median[rows] = np.median(table, axis=1)
        low[rows], high[rows] = np.percentile(table, [25, 75], axis=1)
    return median, low, high


def clock_skew_check(offsets: list[RankOffset], n_ranks: int) -> RunHealthCheck:
    skewed = sorted((r for r in offsets if r["skewed"]), key=lambda r: -abs(r["offset_us"]))
    unknown = None
    if n_ranks < 2:
        unknown = "one rank only: there is no other clock to compare with"
    elif not offsets:
        unknown = "no collective call was matched on two ranks or more"
    return {
        "id": "rank_clock_skew",
        "count": None if unknown else len(skewed),
        "severity": "warning",
        "effect": "kept",
        "description": DESCRIPTION,
        "unknown": unknown,
        "tolerance_us": SKEW_TOLERANCE_US,
        "examples": skewed[:MAX_EXAMPLES],
    }


class ClockSkew(TypedDict):
    clock_offsets: list[RankOffset]
    health: list[RunHealthCheck]


def run_clock_skew(inst: Instances, ranks: list[int]) -> ClockSkew:
    """The `distributed` view's `clock_offsets` and run-level `health` checks."""
    offsets = rank_offsets(inst, ranks)
    return {"clock_offsets": offsets, "health": [clock_skew_check(offsets, len(ranks))]}
