"""The critical path views of a run: span S of every worker as one job, each rank's graph
joined at the collectives (`joint.py`). A run job of the store: each rank's trace comes
from the store (the plugin's), else is read here through the cache."""

from __future__ import annotations

from typing import Any

from ...ingest.discovery import chosen_spans
from ...ingest.naming import name_rank
from ...ingest.storage import file_identity
from ...store.cache import cache_key
from ...store.errors import LoadFailed
from ...store.run_context import RunContext
from ..core.ranks import assign_ranks
from ..core.summary_cache import model_of
from .joint import Joint, join
from .parts import Part, part_of
from .types import RunCriticalPathView, RunTopGainsView, RunWhatIfView
from .view import critical_path_of, top_gains_of, whatif_of


def run_joint(context: RunContext) -> tuple[Joint, list[dict[str, Any]]]:
    """The run's ranks joined, and the ranks that could not be read (`errors`)."""
    picks = chosen_spans(context.run, context.span)
    parts: list[Part] = []
    stated: list[int | None] = []
    errors: list[dict[str, Any]] = []
    for done, (worker, span) in enumerate(picks):
        try:
            model = _model(span.path, context)
        except LoadFailed as exc:
            errors.append({"worker": worker.name, "span": span.name, **exc.error})
            continue
        parts.append(part_of(model, worker.name, "pinned"))
        stated.append(name_rank(worker.name, span.file))
        if context.progress is not None:
            context.progress(done + 1, len(picks))
    ranks, _, _ = assign_ranks([(p.rank, s) for p, s in zip(parts, stated)])
    for part, rank in zip(parts, ranks):
        part.rank = rank
    parts.sort(key=lambda p: p.rank if p.rank is not None else -1)
    return join(parts), errors


def _model(path: str, context: RunContext) -> Any:
    if context.store is not None:
        return context.store.wait(path)
    return model_of(path, cache_key(file_identity(path)), context.cache_dir)


def run_critical_path(context: RunContext) -> RunCriticalPathView:
    """The critical path of a run's job: each step's chain across ranks (collectives
    matched as the Distributed view matches them)."""
    joint, errors = run_joint(context)
    view = critical_path_of(joint, "run", context.params)
    return {**view, "errors": errors}  # type: ignore[typeddict-item]


def run_whatif(context: RunContext) -> RunWhatIfView:
    """The run's steps re-timed with one change, across ranks: the predicted step time
    and the new critical path."""
    joint, errors = run_joint(context)
    view = whatif_of(joint, "run", context.params)
    return {**view, "errors": errors}  # type: ignore[typeddict-item]


def run_top_gains(context: RunContext) -> RunTopGainsView:
    """The kernels, ops and collective types on the job's critical path, each made
    `factor` times as long (default twice as fast), ranked by the step time it saves."""
    joint, errors = run_joint(context)
    view = top_gains_of(joint, "run", context.params)
    return {**view, "errors": errors}  # type: ignore[typeddict-item]
