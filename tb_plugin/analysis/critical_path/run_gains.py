"""`run_top_gains`: the changes worth most to a run's job. Up to FULL_GRAPH_RANKS ranks the
joined graphs are re-timed once per candidate (`view.predicted_steps`). Beyond, the join is
of the ranks' summaries, which hold one timing each: the candidates are found on the run's
recorded path (`run_joint`), then each rank is read once more and summarised under every
candidate at once (`each_change.py`: its graph built once), and each candidate's summaries
are joined and evaluated, as `run_whatif` does for one change."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

import numpy as np

from ...ingest.discovery import chosen_spans
from ...store.run_context import RunContext
from .changes import Change
from .each_change import each_change_tier
from .joint import Joint
from .outcome import Outcome
from .run import in_rank_order, rank_sorted, reduced_parts, run_joint, summaries_of
from .summaries import ReducedPart
from .types import RunTopGainsView, TopGainsParams
from .view import PREDICTION_ASSUMES, assumptions, top_gains_of


def run_top_gains(context: RunContext) -> RunTopGainsView:
    """The kernels, ops and collective types on the job's critical path, each made
    `factor` times as long (default twice as fast), ranked by the time it saves over
    the job's span."""
    joint, errors, summarised = run_joint(context)
    params = cast(TopGainsParams, context.params)
    if not summarised:
        return {**top_gains_of(joint, "run", params), "errors": errors}  # type: ignore[typeddict-item]
    seen = _Seen()
    view = top_gains_of(joint, "run", params, partial(_by_summaries, context, seen))
    if seen.assumptions is not None:  # every rank's, not only those the path read in full
        view["assumptions"] = seen.assumptions + [PREDICTION_ASSUMES]
    listed = {(e["worker"], e["span"]) for e in errors}
    errors += [e for e in seen.lost if (e["worker"], e["span"]) not in listed]
    return {**view, "errors": errors}  # type: ignore[typeddict-item]


@dataclass
class _Seen:
    """What the summaries under the changes showed of the run beside the predictions: the
    ranks that could not be read, and every rank's assumptions (the recorded join read
    most ranks as stubs, which list none)."""

    lost: list[dict[str, Any]] = field(default_factory=list)
    assumptions: list[str] | None = None


def change_params(change: Change) -> dict[str, Any]:
    """The query that names `change` (`changes.change_of` reads it back)."""
    if change.kind == "rank_all":
        return {"rank_all": 1, "factor": change.factor}
    return {change.kind: change.name, "factor": change.factor}


# What a change sets in a rank's summary, beside its label: the local paths' own times and
# the transfers' factors. A change under which no rank's summary differs from the first
# change's in more has the first's join (its nodes, edges, order and anchors), re-timed.
CHANGE_FIELDS = frozenset({"change", "matched", "node_own", "node_transfer"})


def _by_summaries(
    context: RunContext, seen: _Seen, changes: list[Change]
) -> list[np.ndarray | None]:
    """Each change's predicted step durations from the run's ranks summarised under it
    (None: no rank has what it changes), as `run_whatif` predicts one change. The changes
    whose summaries share the first's graphs (`CHANGE_FIELDS`) re-time the first's join
    (one join, not one a change: ~0.8 s of 2,048 ranks each); the others are joined one
    at a time after them, each let go of before the next is made."""
    if not changes:
        return []
    picks = chosen_spans(context.run, context.span)
    queries = [change_params(c) for c in changes]
    found, failed = summaries_of(context, picks, each_change_tier(queries))
    shared = [k for k in range(1, len(changes)) if _same_graphs(found, k)]
    out: list[np.ndarray | None] = [None] * len(changes)
    first: Joint | None = None
    for k in [0, *shared, *(k for k in range(1, len(changes)) if k not in shared)]:
        if k > 0 and k not in shared:
            first = None  # the shared join let go of before another is made
        summaries = [None if s is None else s.summary(k) for s in found]
        parts, errors, _ = reduced_parts(context, picks, summaries, failed, queries[k])
        if k == 0:
            seen.lost = errors
        joint = _rejoined(first, parts) if k in shared else in_rank_order(parts)
        if k == 0 and shared:
            first = joint
        out[k] = _predicted(joint, changes[k], seen if k == 0 else None)
        del joint  # as each change's join: let go of before the next is made
    return out


def _same_graphs(found: list[Any], k: int) -> bool:
    """Whether every rank's summary under the k-th change differs from its first only in
    what a change sets (`CHANGE_FIELDS`)."""
    return all(s is None or s.differs(k) <= CHANGE_FIELDS for s in found)


def _rejoined(first: Joint | None, parts: list[ReducedPart]) -> Joint:
    """The first change's join with these parts (the same ranks, in its order, whose graphs
    are the first's: `_same_graphs`) in place of its own; a join of its own where they are
    not the same ranks."""
    ordered = rank_sorted(parts)
    same = first is not None and [(p.rank, len(p.graph)) for p in ordered] == [
        (p.rank, len(p.graph)) for p in first.parts
    ]
    return replace(first, parts=ordered) if first is not None and same else in_rank_order(parts)


def _predicted(joint: Joint, change: Change, seen: _Seen | None) -> np.ndarray | None:
    """The steps' durations of the ranks' parts (summarised under `change`) joined; None
    where no rank has what it changes."""
    if seen is not None:
        seen.assumptions = assumptions(joint)
    if not any(cast(ReducedPart, p).summary.matched for p in joint.parts):
        return None
    return Outcome(joint, change).steps.durations
