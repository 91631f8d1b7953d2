"""Each GPU activity's owning op (`gpu_owners`: what a what-if of an op scales) found once
for a batch of ranks and split back: each rank's the same as its own op tree gives, by
row, where the batch orders the ranks' threads in another order than each rank alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_traces, joinable_corpus_traces, read_as_batch
from kinetoscope.analysis.core.gpu_owners import (
    GpuOwners,
    batch_gpu_owners,
    gpu_owners,
)
from kinetoscope.analysis.core.host_ranges import host_ranges
from kinetoscope.analysis.core.optree import op_tree
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.text_blocks import TraceDecodeError
from kinetoscope.model.trace_model import TraceModel


def _batch_is_each_rank(paths: list[Path]) -> list[GpuOwners]:
    batched = batch_gpu_owners(read_as_batch(paths))
    assert len(batched) == len(paths)
    for k, (owners, path) in enumerate(zip(batched, paths)):
        alone = build_model(str(path))  # read again: nothing the batch found is shared
        want = gpu_owners(alone)
        assert np.array_equal(owners.gpu, want.gpu), k
        assert np.array_equal(owners.owner, want.owner), k
        _assert_positions_are_the_trees(alone, want)
    return batched


def _assert_positions_are_the_trees(model: TraceModel, owners: GpuOwners) -> None:
    """The owners' host-range positions are the op tree's own nodes for its GPU rows,
    found from the rows (as for a batch's owners) and kept from the tree."""
    tree = op_tree(model)
    assert np.array_equal(owners.gpu, tree.gpu)
    by_row = GpuOwners(owners.gpu, owners.owner)
    for found in (by_row, owners):
        positions = found.positions(host_ranges(model).rows)
        assert np.array_equal(positions, tree.gpu_node.astype(np.int64))


def _rank(first_tid: int, second_tid: int, t0: float) -> TraceBuilder:
    """A step from `t0` whose threads are first used in the order given: a GEMM under
    `aten::mm` folded into an `aten::mm` parent on the first thread, an all-reduce
    launched inside `record_param_comms` under `c10d::allreduce_` on the second; the
    inner `aten::mm` ends where its launch does."""
    b = TraceBuilder()
    b.step(1, t0, 100.0)
    outer = b.op("aten::mm", t0 + 1.0, 20.0, tid=first_tid)
    b.op("aten::mm", t0 + 2.0, 2.125, tid=first_tid)
    b.launch(t0 + 3.125, 1.0, outer, gpu_ts=t0 + 30.0, gpu_dur=5.0, name="gemm", tid=first_tid)
    b.op("c10d::allreduce_", t0 + 40.0, 20.0, tid=second_tid)
    comms = b.op("record_param_comms", t0 + 41.0, 10.0, tid=second_tid)
    b.launch(
        t0 + 42.0, 1.0, comms, gpu_ts=t0 + 50.0, gpu_dur=8.0,
        name="ncclDevKernel_AllReduce_Sum_f32_RING_LL", stream=13, tid=second_tid,
    )  # fmt: skip
    return b


def _owner_names(model: TraceModel, owners: GpuOwners) -> list[str]:
    names = model.events["name"][owners.owner]
    return [model.names[int(code)] for code in names]


def test_ranks_whose_threads_are_used_in_another_order(tmp_path: Path) -> None:
    """Their clocks start apart too (a batch reads them on one table)."""
    paths = []
    for k, (first, second, t0) in enumerate([(1, 2, 0.0), (2, 1, 9_000_000.375)]):
        paths.append(tmp_path / f"rank{k}.pt.trace.json")
        _rank(first, second, t0).write(paths[-1])
    batched = _batch_is_each_rank(paths)
    for path, owners in zip(paths, batched):
        # By hand: the GEMM's launch is inside the inner `aten::mm`, folded into the outer
        # one (the same name, its only child); the all-reduce's innermost op.
        model = build_model(str(path))
        assert _owner_names(model, owners) == ["aten::mm", "record_param_comms"]
        t0 = model.events["ts"].min()
        assert (model.events["ts"][owners.owner] - t0).tolist() == [1.0, 41.0]


@pytest.mark.corpus
def test_every_corpus_trace_the_join_takes_in_one_batch() -> None:
    paths = list(joinable_corpus_traces())
    assert len(paths) >= 30
    batched = _batch_is_each_rank(paths)
    assert sum(int((o.owner >= 0).sum() > 0) for o in batched) >= 20


@pytest.mark.corpus
def test_the_owners_are_the_op_trees_on_every_corpus_trace() -> None:
    """Alone, a what-if finds the same owners as it found from the op tree before: on
    every corpus trace that loads (those the join refuses too, 2020-21's)."""
    loaded = 0
    for path in corpus_traces():
        try:
            model = build_model(str(path))
        except TraceDecodeError:  # a bad input of the corpus (its own tests say which)
            continue
        _assert_positions_are_the_trees(model, gpu_owners(model))
        loaded += 1
    assert loaded >= 50
