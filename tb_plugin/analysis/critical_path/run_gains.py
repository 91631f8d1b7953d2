"""`run_top_gains`: the changes worth most to a run's job. Up to FULL_GRAPH_RANKS ranks the
joined graphs are re-timed once per candidate (`view.predicted_steps`). Beyond, the join is
of the ranks' summaries, which hold one timing each: the candidates are found on the run's
recorded path (`run_joint`), then each rank is read once more and summarised under every
candidate at once (`each_change.py`: its graph built once), and each candidate's summaries
are joined and evaluated, as `run_whatif` does for one change."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import numpy as np

from ...ingest.discovery import chosen_spans
from ...store.run_context import RunContext
from .changes import Change
from .each_change import each_change_tier
from .outcome import Outcome
from .run import in_rank_order, reduced_parts, run_joint, summaries_of
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


def _by_summaries(
    context: RunContext, seen: _Seen, changes: list[Change]
) -> list[np.ndarray | None]:
    """Each change's predicted step durations from the run's ranks summarised under it
    (None: no rank has what it changes), as `run_whatif` predicts one change."""
    if not changes:
        return []
    picks = chosen_spans(context.run, context.span)
    queries = [change_params(c) for c in changes]
    found, failed = summaries_of(context, picks, each_change_tier(queries))
    out: list[np.ndarray | None] = []
    for k, change in enumerate(changes):
        summaries = [None if s is None else s.summary(k) for s in found]
        parts, errors, _ = reduced_parts(context, picks, summaries, failed, queries[k])
        if k == 0:
            seen.lost = errors
        out.append(_predicted(parts, change, seen if k == 0 else None))
    return out


def _predicted(parts: list[ReducedPart], change: Change, seen: _Seen | None) -> np.ndarray | None:
    """The steps' durations of the ranks' parts (summarised under `change`) joined; None
    where no rank has what it changes. One change's join at a time: each is let go of
    before the next is made."""
    joint = in_rank_order(parts)
    if seen is not None:
        seen.assumptions = assumptions(joint)
    if not any(p.summary.matched for p in parts):
        return None
    return Outcome(joint, change).steps.durations
