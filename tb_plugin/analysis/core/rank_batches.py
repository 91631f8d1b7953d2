"""Many small ranks of one job analysed together (`model.rank_batch`): the steps and the
collectives each rank's summary starts from, found in one pass each over the ranks' rows
side by side, each rank's the same as its own model gives. What a trace judges within
itself stays each rank's own: its vendor (from its header) and its untrusted rows
(duplicates, clock outliers)."""

from __future__ import annotations

from ...model.rank_batch import NotJoined, join_ranks
from ...model.trace_model import TraceModel
from .comms import Collectives, batch_collectives
from .devices import keep_vendor, trace_vendor
from .steps import Steps, batch_steps
from .trusted_rows import keep_ranks_row_flags


def steps_and_collectives(models: list[TraceModel]) -> list[tuple[Steps, Collectives]] | None:
    """Each rank's steps and collectives, found together; None where the ranks are not
    analysed together (fewer than two, their vendors differ, or the join refuses them):
    their caller then summarises them one by one."""
    vendors = {trace_vendor(model) for model in models}
    if len(models) < 2 or len(vendors) != 1:
        return None
    try:
        batch = join_ranks(models)
    except NotJoined:
        return None
    keep_vendor(batch.model, vendors.pop())
    keep_ranks_row_flags(batch.model, models)
    return list(zip(batch_steps(batch), batch_collectives(batch)))
