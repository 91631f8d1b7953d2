"""The critical path views of a run: span S of every worker as one job, each rank's graph
joined at the collectives (`joint.py`). A run job of the store. Up to FULL_GRAPH_RANKS
ranks, every rank's whole graph is joined (each trace from the store, the plugin's, else
read here through the cache): exact. Beyond, each rank is summarised where it is read (the
Distributed view's pools, a process pool or a cluster: `distributed/rank_summaries.py`) and
kept in the run's pack (one per change), and the summaries are joined (`reduce.py`); the
recorded path summarises in full only the ranks it may enter, the others joined as stubs,
their collectives and steps only (`stubs.py`, `stub_tier.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, cast

from ...ingest.discovery import chosen_spans
from ...ingest.naming import name_rank
from ...ingest.storage import file_identity
from ...store.cache import cache_key
from ...store.errors import LoadFailed, describe_error
from ...store.run_context import RunContext
from ..core.ranks import assign_ranks
from ..core.summary_cache import model_of
from ..distributed.rank_job import Tier
from ..distributed.rank_summaries import Listed, kept_summaries, summarize_all
from .changes import change_of
from .joint import JoinPart, Joint, join
from .parts import part_of
from .path_summary import PathSummary
from .stub_tier import stub_summaries
from .stubs import StubPart, candidates, recorded_stub, stub_of, stubs_on_path
from .summaries import ReducedPart, summarize, tier
from .types import (
    CriticalPathParams,
    RunCriticalPathView,
    RunWhatIfView,
    WhatIfParams,
)
from .view import critical_path_of, whatif_of

FULL_GRAPH_RANKS = 16
MAX_ROUNDS = 4  # joins with stubs before every rank is summarised in full


def run_joint(context: RunContext) -> tuple[Joint, list[dict[str, Any]], bool]:
    """The run's ranks joined as recorded (their summaries when the run is large), the
    ranks that could not be read (`errors`), and whether the summaries were joined."""
    picks = chosen_spans(context.run, context.span)
    if len(picks) <= FULL_GRAPH_RANKS:
        return _full(context, picks)
    listed = Listed.of(context.run, context.span, picks)
    kept = kept_summaries([s.path for _, s in picks], context.cache_dir, listed, tier({}))
    lazily = None if kept is not None else _joined_lazily(context, picks)
    if lazily is not None:
        return lazily[0], lazily[1], True
    parts, errors, _ = _recorded_parts(context, picks)
    return in_rank_order(parts), errors, True


def _joined_lazily(
    context: RunContext, picks: list[Any]
) -> tuple[Joint, list[dict[str, Any]]] | None:
    """The run joined from every rank's stub (`stubs.py`: its collectives and steps, from
    its Distributed view summary or made for the stub alone, `stub_tier.py`), with a
    full summary only for the ranks its recorded path may enter, those it entered added
    until it enters none; None where a rank cannot be a stub (no ProfilerStep)."""
    found, failed = stub_summaries(context, picks)
    stubs: dict[int, StubPart] = {}
    for i, summary in enumerate(found):
        stub = stub_of(summary, picks[i][0].name) if summary is not None else None
        if summary is not None and stub is None:
            return None
        if stub is not None:
            stubs[i] = stub
    if not stubs:
        return None
    errors = {i: _error(picks[i], failed[i]) for i, s in enumerate(found) if s is None}
    _number(list(stubs.values()), [_stated(picks[i]) for i in stubs])
    in_order = sorted(stubs, key=lambda i: _order_key(stubs[i]))  # as `in_rank_order`
    full = {in_order[k] for k in candidates([stubs[i] for i in in_order])}
    for _ in range(MAX_ROUNDS):
        parts, pick_of, lost = _mixed_parts(context, picks, stubs, full)
        if not all(_same_steps(p, stubs[pick_of[id(p)]]) for p in parts):
            return None
        joint = in_rank_order(parts)
        entered = stubs_on_path(joint)
        if not entered:
            errors.update(lost)
            return joint, [errors[i] for i in sorted(errors)]
        full |= {pick_of[id(joint.parts[k])] for k in entered}
    return None


def _same_steps(part: JoinPart, stub: StubPart) -> bool:
    """A rank's graph anchors the steps the Distributed view finds, except a step with no
    host op of its thread inside it (the corpus has 5 traces of one such step): where a
    rank summarised in full shows one, the run's ranks are not taken as stubs."""
    return part is stub or part.anchors.names == stub.anchors.names


def _mixed_parts(
    context: RunContext, picks: list[Any], stubs: dict[int, StubPart], full: set[int]
) -> tuple[list[JoinPart], dict[int, int], dict[int, dict[str, Any]]]:
    """The readable ranks as parts, numbered: those in `full` from their summaries (made,
    or found kept in the run's pack), the others as their stubs; each part's pick (by
    the part's id), and the errors of the ranks in `full` that could not be summarised."""
    chosen = sorted(full)
    summaries, failed = summaries_of(context, [picks[i] for i in chosen], tier({}))
    summary_of = dict(zip(chosen, summaries))
    lost = {i: _error(picks[i], e) for i, s, e in zip(chosen, summaries, failed) if s is None}
    parts: list[JoinPart] = []
    stated: list[int | None] = []
    pick_of: dict[int, int] = {}
    for i, stub in stubs.items():
        summary = summary_of.get(i)
        if i in lost:
            continue
        if summary is None:
            part: JoinPart = stub
        else:
            again = partial(_with_segments, picks[i][1].path, context, {})
            part = ReducedPart(summary, stub.worker, summary.rank, again)
        parts.append(part)
        pick_of[id(part)] = i
        stated.append(_stated(picks[i]))
    _number(parts, stated)
    return parts, pick_of, lost


def _error(pick: Any, error: Any) -> dict[str, Any]:
    """A rank's error in the view: its worker and span, and why (`describe_error`'s)."""
    worker, span = pick
    return {"worker": worker.name, "span": span.name, **(error or {})}


def _stated(pick: Any) -> int | None:
    """The rank a pick's trace states (its header, else its file name)."""
    worker, span = pick
    return name_rank(worker.name, span.file)


def run_joints(
    context: RunContext, params: dict[str, Any]
) -> tuple[Joint, Joint | None, list[dict[str, Any]]]:
    """The run joined as recorded and, when its ranks are summarised, under the change
    `params` names (None: the change re-times the recorded joint's whole graphs), and the
    ranks that could not be read. Each rank's trace is read once."""
    picks = chosen_spans(context.run, context.span)
    change = change_of(params)
    if len(picks) <= FULL_GRAPH_RANKS or change is None:
        joint, errors, _ = run_joint(context)
        return joint, None, errors
    if change.rank is None:
        return _changed_everywhere(context, picks, params)
    parts, errors, paths = _recorded_parts(context, picks)
    changed = _changed_on_rank(context, parts, paths, params, change.rank)
    return in_rank_order(parts), in_rank_order(changed), errors


def _recorded_parts(
    context: RunContext, picks: list[Any]
) -> tuple[list[ReducedPart], list[dict[str, Any]], list[str]]:
    """Each rank's recorded summary as a part of a join (`reduced_parts`)."""
    summaries, failed = summaries_of(context, picks, tier({}))
    return reduced_parts(context, picks, summaries, failed, {})


def _changed_on_rank(
    context: RunContext,
    parts: list[ReducedPart],
    paths: list[str],
    params: dict[str, Any],
    on_rank: int,
) -> list[ReducedPart]:
    """The recorded parts with rank `on_rank` (the run's numbering, the Distributed
    view's, which only the join knows) made again here under the change on the whole
    rank: the workers cannot know the run's numbering."""
    whole_rank = {k: v for k, v in params.items() if k != "rank"}
    out = list(parts)
    for i, part in enumerate(parts):
        if part.rank == on_rank:
            changed = summarize(whole_rank, _model(paths[i], context))
            again = partial(_with_segments, paths[i], context, whole_rank)
            out[i] = ReducedPart(changed, part.worker, part.rank, again)
    return out


def _changed_everywhere(
    context: RunContext, picks: list[Any], params: dict[str, Any]
) -> tuple[Joint, Joint, list[dict[str, Any]]]:
    """A change on every rank joined as two jobs, recorded and changed, from one summary a
    rank (made, or found kept in the change's pack of the run): under the change, and as
    recorded its stub (`stubs.recorded_stub`: its collectives and steps at their recorded
    times, all a baseline's step times need). Where a rank records no ProfilerStep, the
    recorded summaries are made too (its step's bounds are the whole job's)."""
    changed, failed = summaries_of(context, picks, tier(params))
    after, errors, _ = reduced_parts(context, picks, changed, failed, params)
    # The stubs first, alone: beside the changed join's thread, their many small numpy
    # calls each waited for the GIL back. The two joins, mostly numpy sorts that let go
    # of it, are made side by side (the workers are idle by then).
    before = [recorded_stub(p) for p in after]
    with ThreadPoolExecutor(1, thread_name_prefix="kinetoscope-join") as pool:
        changed_joint = pool.submit(in_rank_order, after)
        if all(b is not None for b in before):
            recorded_joint = in_rank_order(cast(list[StubPart], before))
        else:
            parts, errors, _ = _recorded_parts(context, picks)
            recorded_joint = in_rank_order(parts)
        return recorded_joint, changed_joint.result(), errors


def summaries_of(
    context: RunContext, picks: list[Any], summary_tier: Tier[Any]
) -> tuple[list[Any], list[Any]]:
    """The tier's summary of every picked rank (None where it failed) and the errors,
    kept in (and first looked for in) the tier's pack of the run."""
    return summarize_all(
        [s.path for _, s in picks],
        context.cache_dir,
        context.executor,
        context.progress,
        context.store,
        Listed.of(context.run, context.span, picks),
        summary_tier,
    )


def reduced_parts(
    context: RunContext,
    picks: list[Any],
    summaries: list[PathSummary | None],
    failed: list[Any],
    params: dict[str, Any],
) -> tuple[list[ReducedPart], list[dict[str, Any]], list[str]]:
    """The ranks as parts of a join, numbered (their summaries made under `params`), the
    ranks that could not be read, and each part's trace file."""
    parts: list[ReducedPart] = []
    stated: list[int | None] = []
    paths: list[str] = []
    errors = []
    for (worker, span), summary, error in zip(picks, summaries, failed):
        if summary is None:
            errors.append(_error((worker, span), error))
            continue
        again = partial(_with_segments, span.path, context, params)
        parts.append(ReducedPart(summary, worker.name, summary.rank, again))
        stated.append(_stated((worker, span)))
        paths.append(span.path)
    _number(parts, stated)
    return parts, errors, paths


def _full(context: RunContext, picks: Sequence[Any]) -> tuple[Joint, list[dict[str, Any]], bool]:
    parts: list[JoinPart] = []
    stated: list[int | None] = []
    errors: list[dict[str, Any]] = []
    for done, (worker, span) in enumerate(picks):
        try:
            model = _model(span.path, context)
        except LoadFailed as exc:
            errors.append(_error((worker, span), exc.error))
            continue
        except Exception as exc:  # noqa: BLE001 - as the summaries' tier: one rank's error
            errors.append(_error((worker, span), describe_error(span.path, exc)))
            continue
        parts.append(part_of(model, worker.name, "pinned"))
        stated.append(_stated((worker, span)))
        if context.progress is not None:
            context.progress(done + 1, len(picks))
    _number(parts, stated)
    return in_rank_order(parts), errors, False


def _number(parts: Sequence[JoinPart], stated: list[int | None]) -> None:
    """The ranks numbered as the Distributed view numbers them."""
    ranks, _, _ = assign_ranks([(p.rank, s) for p, s in zip(parts, stated)])
    for part, rank in zip(parts, ranks):
        part.rank = rank


def in_rank_order(parts: Sequence[JoinPart]) -> Joint:
    """The numbered ranks joined in rank order."""
    return join(rank_sorted(parts))


def rank_sorted(parts: Sequence[JoinPart]) -> list[JoinPart]:
    """The numbered ranks in the order a join takes them (unnumbered first, as given)."""
    return sorted(parts, key=_order_key)


def _order_key(part: JoinPart) -> int:
    return part.rank if part.rank is not None else -1


def _with_segments(path: str, context: RunContext, params: dict[str, Any]) -> PathSummary:
    """A rank's summary made again with its segments: the path runs through it."""
    return summarize(params, _model(path, context), segments=True)


def _model(path: str, context: RunContext) -> Any:
    if context.store is not None:
        return context.store.wait(path)
    return model_of(path, cache_key(file_identity(path)), context.cache_dir)


def run_critical_path(context: RunContext) -> RunCriticalPathView:
    """The critical path of a run's job: each step's chain across ranks (collectives
    matched as the Distributed view matches them). A run view's `context.params` is its
    query decoded by the endpoint's request type, so the casts below say what it is."""
    joint, errors, _ = run_joint(context)
    view = critical_path_of(joint, "run", cast(CriticalPathParams, context.params))
    stubs = sum(isinstance(p, StubPart) for p in joint.parts)
    if stubs:
        view["assumptions"].append(
            f"{stubs} of {len(joint.parts)} ranks were read for their collectives and "
            "steps only (as the Distributed view's summaries hold them): the path enters a "
            "rank only where it ends a step last or arrives last at a collective, and it "
            "enters none of them; their own assumptions are not listed"
        )
    return {**view, "errors": errors}  # type: ignore[typeddict-item]


def run_whatif(context: RunContext) -> RunWhatIfView:
    """The run's steps re-timed with one change, across ranks: the predicted step time
    and the new critical path."""
    joint, changed, errors = run_joints(context, dict(context.params))
    view = whatif_of(joint, "run", cast(WhatIfParams, context.params), changed)
    return {**view, "errors": errors}  # type: ignore[typeddict-item]
