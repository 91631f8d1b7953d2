"""Which op owns each GPU activity, by event row: the op tree's rule (`optree`: the op
whose call launched it, or the communication op around a collective's launch, folded as
the tree folds a same-named child into its parent), without the rest of the tree.

A what-if of an op scales the GPU work the op owns; that is all it reads of the op tree,
which costs a small rank more than any other table its graph reads. So a batch of ranks
(`rank_batches.share_tables`) builds one tree for the batch and splits its owners back:
the tree's nesting, launch links and folding are each within a thread or a correlation
id, which a batch keeps apart by rank (`model.rank_batch`), so each rank's owners are the
same as its own tree's. Rows, not tree positions: a batch orders its threads by first
use across the ranks, so positions differ where rows do not."""

from __future__ import annotations

import msgspec
import numpy as np

from ...model.rank_batch import RankBatch, bounds_of
from ...model.trace_model import TraceModel
from .optree import op_tree


class GpuOwners(msgspec.Struct, frozen=True):
    """`gpu`: the GPU activity rows (sorted); `owner`: per activity, the row of the op
    that owns it (-1: none); `node`: where the model's own op tree made them, the owner's
    node there (its host-range position), else None (a batch's, split back)."""

    gpu: np.ndarray
    owner: np.ndarray
    node: np.ndarray | None = None

    def positions(self, range_rows: np.ndarray) -> np.ndarray:
        """Per activity, its owner's position among `range_rows` (this model's host
        ranges' rows, the op tree's nodes; -1: no owner, or one not among them): the
        tree's own `node` where it made them (a big trace's ranges are not sorted again),
        else found by row."""
        if self.node is not None:
            return self.node
        out = np.full(self.owner.size, -1, np.int64)
        owned = np.flatnonzero(self.owner >= 0)
        if owned.size == 0 or range_rows.size == 0:
            return out
        order = np.argsort(range_rows, kind="stable")
        sorted_rows = range_rows[order]
        rows = self.owner[owned]
        pos = np.minimum(np.searchsorted(sorted_rows, rows), sorted_rows.size - 1)
        found = sorted_rows[pos] == rows
        out[owned[found]] = order[pos[found]]
        return out


def gpu_owners(model: TraceModel) -> GpuOwners:
    """Each GPU activity's owning op, by row; kept with the model (or its batch's part,
    `keep_gpu_owners`)."""
    return model.derived("_gpu_owner_rows", _owners_of_tree)  # type: ignore[no-any-return]


def keep_gpu_owners(model: TraceModel, owners: GpuOwners) -> None:
    """Keeps `owners` as the model's: found for a batch of ranks and split back, the same."""
    model.derived("_gpu_owner_rows", lambda _: owners)


def batch_gpu_owners(batch: RankBatch) -> list[GpuOwners]:
    """Each rank's `gpu_owners` from one op tree of the batch's model, counted from the
    rank's first row."""
    whole = gpu_owners(batch.model)
    first = batch.first_rows
    out = []
    for k, (lo, hi) in enumerate(bounds_of(whole.gpu, first)):
        owner = whole.owner[lo:hi]
        out.append(
            GpuOwners(whole.gpu[lo:hi] - first[k], np.where(owner >= 0, owner - first[k], -1))
        )
    return out


def _owners_of_tree(model: TraceModel) -> GpuOwners:
    tree = op_tree(model)
    node = tree.gpu_node.astype(np.int64)
    owner = np.full(node.size, -1, np.int64)
    owner[node >= 0] = tree.rows[node[node >= 0]]
    return GpuOwners(tree.gpu, owner, np.where(node >= 0, node, -1))
