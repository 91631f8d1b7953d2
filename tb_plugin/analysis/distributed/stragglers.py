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

from typing import TypedDict

import numpy as np

FACTORS = ("computation", "dataloader", "host_gap", "communication")
ARRIVED_LATE = "arrived_late"
CAUSE_SHARE = 0.5  # a named cause accounts for at least this share of the lateness


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
