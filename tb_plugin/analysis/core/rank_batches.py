"""Many small ranks of one job analysed together (`model.rank_batch`): the steps and the
collectives each rank's summary starts from, and the tables every rank's analysis shares
(its row sets, kernel classes, steps), found in one pass each over the ranks' rows side
by side, each rank's the same as its own model gives. What a trace judges within itself
stays each rank's own: its vendor (from its header) and its untrusted rows (duplicates,
clock outliers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ...model.categories import GPU_ACTIVITY_KINDS, LAUNCH_KINDS, Kind
from ...model.rank_batch import NotJoined, RankBatch, bounds_of, join_ranks
from ...model.trace_model import TraceModel
from .common import complete_rows, keep_complete_rows, keep_name_source
from .comms import Collectives, batch_collectives, keep_collectives
from .devices import keep_vendor, stated_vendor, trace_vendor
from .gpu_owners import batch_gpu_owners, keep_gpu_owners
from .kernel_classes import KernelClasses, keep_kernel_classes, kernel_classes
from .launches import batch_gpu_work, keep_gpu_work
from .steps import Steps, batch_step_rows, batch_steps, keep_steps
from .trusted_rows import keep_ranks_row_flags

S = TypeVar("S")

# The row sets a rank's summaries ask for (`complete_rows`), found once for a batch.
ROW_SETS: tuple[tuple[Kind, ...], ...] = (
    (Kind.CPU_OP, Kind.USER_ANNOTATION),
    (Kind.KERNEL,),
    (Kind.MEMCPY,),
    (Kind.MEMSET,),
    GPU_ACTIVITY_KINDS,
    LAUNCH_KINDS,
    (Kind.SYNC,),
)


def batch_of(models: list[TraceModel]) -> RankBatch | None:
    """The ranks joined, each rank's vendor and untrusted rows kept with the batch; None
    where they are not analysed together (fewer than two, their vendors differ, or the
    join refuses them): their caller then analyses them one by one. Where a rank's file
    does not state its vendor, it is read from its GPU work (its launches and
    categories): each rank then keeps its part of the batch's GPU rows first."""
    if len(models) < 2:
        return None
    try:
        batch = join_ranks(models)
    except NotJoined:
        return None
    keep_ranks_row_flags(batch.model, models)
    if _vendor_from_work(models):
        _share_row_sets(batch, models, (GPU_ACTIVITY_KINDS,))
    vendors = {trace_vendor(model) for model in models}
    if len(vendors) != 1:
        return None
    keep_vendor(batch.model, vendors.pop())
    return batch


def _vendor_from_work(models: list[TraceModel]) -> bool:
    """Whether some rank's vendor is read from its GPU work (its file does not state it):
    `batch_of` then shares the GPU rows before the ranks' vendors are compared."""
    return any(stated_vendor(model) is None for model in models)


def _share_row_sets(
    batch: RankBatch, models: list[TraceModel], row_sets: tuple[tuple[Kind, ...], ...]
) -> None:
    """Each rank's model keeps its part of the batch's `row_sets`."""
    first = batch.first_rows
    for kinds in row_sets:
        rows = complete_rows(batch.model, *kinds)
        for k, (lo, hi) in enumerate(bounds_of(rows, first)):
            keep_complete_rows(models[k], kinds, rows[lo:hi] - first[k])


def steps_and_collectives(models: list[TraceModel]) -> list[tuple[Steps, Collectives]] | None:
    """Each rank's steps and collectives, found together (None: see `batch_of`)."""
    batch = batch_of(models)
    if batch is None:
        return None
    return list(zip(batch_steps(batch), batch_collectives(batch)))


def share_tables(
    batch: RankBatch, models: list[TraceModel], gpu_work: bool = True, op_owners: bool = False
) -> None:
    """Each rank's model keeps its part of the tables found once for the batch: its name
    flags (read from the batch's as they are asked), the row sets (`ROW_SETS`), the
    kernel classes, the ProfilerStep rows, the steps, the collectives, (where
    `gpu_work`: a critical path's graph reads it; the Distributed summary does not) the
    GPU work and (where `op_owners`: a change of an op reads them) the GPU work's owning
    ops. A rank's own analysis then reads them where it would have found them again."""
    first = batch.first_rows
    for k, codes in enumerate(batch.name_codes):
        keep_name_source(models[k], batch.model, codes)
    kept = (GPU_ACTIVITY_KINDS,) if _vendor_from_work(models) else ()
    _share_row_sets(batch, models, tuple(kinds for kinds in ROW_SETS if kinds not in kept))
    classes = kernel_classes(batch.model)
    for k, (lo, hi) in enumerate(bounds_of(classes.rows, first)):
        keep_kernel_classes(models[k], _classes_part(classes, lo, hi, int(first[k])))
    step_rows = batch_step_rows(batch)
    bounds = bounds_of(step_rows, first)
    for k, steps in enumerate(batch_steps(batch)):
        lo, hi = bounds[k]
        keep_steps(models[k], steps, step_rows[lo:hi] - first[k])
    for k, collectives in enumerate(batch_collectives(batch)):
        keep_collectives(models[k], collectives)
    for k, work in enumerate(batch_gpu_work(batch) if gpu_work else []):
        keep_gpu_work(models[k], work)
    for k, owners in enumerate(batch_gpu_owners(batch) if op_owners else []):
        keep_gpu_owners(models[k], owners)


def made_sharing_tables(
    make: Callable[[TraceModel], S],
    models: list[TraceModel],
    gpu_work: bool = True,
    op_owners: bool = False,
) -> list[S]:
    """`make` of each rank (a worker's batch), each the same as alone: the tables they
    share are found once for the batch (`share_tables`), where they can be; the rest of
    each rank's analysis (a critical path's graph) is its own."""
    batch = batch_of(models)
    if batch is not None:
        share_tables(batch, models, gpu_work, op_owners)
    return [make(model) for model in models]


def _classes_part(classes: KernelClasses, lo: int, hi: int, first: int) -> KernelClasses:
    return KernelClasses(
        classes.rows[lo:hi] - first,
        classes.work[lo:hi],
        classes.matrix[lo:hi],
        classes.collective[lo:hi],
        classes.family[lo:hi],
        classes.via_op[lo:hi],
    )
