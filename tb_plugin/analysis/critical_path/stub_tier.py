"""What a stub holds of a rank (`stubs.py`), made where the rank is read: its collectives
and its steps' bounds, and nothing else of the Distributed view's summary. A run's
recorded path joins most ranks as stubs; where the run's Distributed view summaries are
kept (the page was opened), those are read, since they hold the same; else each rank is
summarised for its stub alone, which skips the devices' work, the steps' breakdown and
the process groups (about a quarter of the summary's cost a rank). A worker summarises its
small ranks together (`summarize_stubs`: one table, one pass for all their steps and
collectives), each stub the one `summarize_stub` makes."""

from __future__ import annotations

import os
from typing import Any, Optional

import msgspec

from ...model.trace_model import TraceModel
from ...store.run_context import RunContext
from ..core import comms
from ..core.rank_batches import steps_and_collectives
from ..core.ranks import header_rank
from ..core.steps import Steps, find_steps
from ..core.summary_cache import SummaryCache
from ..core.taxonomy import taxonomy_version
from ..distributed.rank_job import Tier
from ..distributed.rank_summaries import (
    DISTRIBUTED,
    SUMMARY_DIR,
    Listed,
    kept_in_part,
    summarize_all,
)
from ..distributed.summary import VERSION as DISTRIBUTED_VERSION
from ..distributed.summary import CollectiveTable, StepBounds, collective_table
from ..distributed.summary_pack import PackFormat, SummaryPack

# The collective table and the steps are the Distributed summary's own: its version too.
VERSION = f"{DISTRIBUTED_VERSION}.1"
_VIEW = f"critical-path-stub-v{VERSION}t{taxonomy_version()}"


class StubSummary(msgspec.Struct, gc=False):
    """The fields of a rank's Distributed summary (`RankSummary`) a stub reads."""

    version: str
    rank: Optional[int]
    time_origin_us: float
    steps_source: str
    steps: list[StepBounds]
    collectives: CollectiveTable


def summarize_stub(model: TraceModel) -> StubSummary:
    """A rank's stub fields, as `summary.summarize_rank` makes them."""
    steps = find_steps(model)
    return _stub(model, steps, comms.extract(model))


def summarize_stubs(models: list[TraceModel]) -> list[StubSummary]:
    """The stubs of many ranks (a worker's batch), each the same as `summarize_stub` of
    it: their steps and collectives are found together (`rank_batches`), where one pass
    a rank paid numpy's cost per call on ~200 rows; ranks that cannot be analysed
    together are summarised one by one."""
    found = steps_and_collectives(models)
    if found is None:
        return [summarize_stub(model) for model in models]
    return [_stub(model, steps, coll) for model, (steps, coll) in zip(models, found)]


def _stub(model: TraceModel, steps: Steps, collectives: comms.Collectives) -> StubSummary:
    starts, ends = steps.starts.tolist(), steps.ends.tolist()
    return StubSummary(
        version=VERSION,
        rank=header_rank(model.header),
        time_origin_us=model.time_origin_us,
        steps_source=steps.source,
        steps=[
            {"name": name, "number": number, "start_us": start, "end_us": end}
            for name, number, start, end in zip(steps.names, steps.numbers, starts, ends)
        ],
        collectives=collective_table(collectives, steps),
    )


_DECODER = msgspec.json.Decoder(StubSummary)  # built at import, before threads share it
_PACKING = PackFormat(StubSummary)


def _cache(cache_dir: str) -> SummaryCache[StubSummary]:
    return SummaryCache(cache_dir, SUMMARY_DIR, _VIEW, _DECODER, VERSION)


def _pack(cache_dir: str, run: str) -> SummaryPack[StubSummary]:
    return SummaryPack(os.path.join(cache_dir, SUMMARY_DIR), run, _VIEW, _PACKING)


STUBS = Tier(summarize_stub, _cache, _pack, summarize_stubs)


def stub_summaries(context: RunContext, picks: list[Any]) -> tuple[list[Any], list[Any]]:
    """Every picked rank's stub fields (None where it failed) and the errors: its
    Distributed view summary where the run keeps it, else the stub tier's (made, or found
    kept in its pack of the run). A run whose Distributed summaries are kept but for a few
    files (a trace that grew) makes the few's stubs alone."""
    paths = [s.path for _, s in picks]
    listed = Listed.of(context.run, context.span, picks)
    found = kept_in_part(paths, context.cache_dir, listed, DISTRIBUTED)
    todo = [i for i, summary in enumerate(found) if summary is None]
    failed: list[Any] = [None] * len(paths)
    if not todo:
        return found, failed
    stubs, errors = summarize_all(
        [paths[i] for i in todo],
        context.cache_dir,
        context.executor,
        context.progress,
        context.store,
        Listed(listed.name, [listed.states[i] for i in todo]),
        STUBS,
    )
    for i, stub, error in zip(todo, stubs, errors):
        found[i], failed[i] = stub, error
    return found, failed
