"""A batch of ranks' collectives, critical-path stubs, Distributed summaries and changed
summaries (`comms.batch_collectives`, `stub_tier.summarize_stubs`,
`summary.summarize_ranks`, `rank_batches.made_sharing_tables`): each rank's the same as
made from its own model alone, on real recorded jobs, the
synthetic job and the corpus; and a worker's batch of files
(`rank_summaries.summarize_batch`) keeps each file's error its own."""

from __future__ import annotations

import copy
import functools
from functools import partial
from pathlib import Path

import msgspec
import numpy as np
import pytest
from corpus import joinable_corpus_traces
from kinetoscope.analysis.core.comms import Collectives, batch_collectives, extract
from kinetoscope.analysis.core.devices import trace_vendor
from kinetoscope.analysis.core.rank_batches import made_sharing_tables
from kinetoscope.analysis.critical_path.each_change import each_change_tier, summarize_each
from kinetoscope.analysis.critical_path.stub_tier import STUBS, summarize_stub, summarize_stubs
from kinetoscope.analysis.critical_path.summaries import summarize, tier
from kinetoscope.analysis.distributed.rank_job import Tier
from kinetoscope.analysis.distributed.rank_summaries import DISTRIBUTED, summarize_batch
from kinetoscope.analysis.distributed.summary import summarize_rank, summarize_ranks
from kinetoscope.ingest.build import build_model
from kinetoscope.model.rank_batch import join_ranks, why_not_joined
from kinetoscope.model.trace_model import TraceModel
from synthetic_job import Layout, write_traces

DATA = Path(__file__).parent / "data"
_FIELDS = ("kind", "pg", "seq", "start", "end", "nbytes", "group_size", "gs_from", "on_gpu")
_FIELDS += ("dst", "src", "groups", "rows", "comms_id")
_ENCODE = msgspec.json.Encoder()


def _recorded(job: str, pattern: str = "rank*.pt.trace.json.gz") -> list[TraceModel]:
    paths = sorted((DATA / job).glob(pattern))
    return [build_model(str(p)) for p in paths]


def _assert_same_collectives(got: Collectives, alone: Collectives) -> None:
    for name in _FIELDS:
        a, b = getattr(got, name), getattr(alone, name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, b.dtype.kind == "f"), name
        else:
            assert a == b, name


def _assert_batch_collectives_are_each_ranks(models: list[TraceModel]) -> None:
    batched = batch_collectives(join_ranks(models))
    for got, model in zip(batched, models):
        _assert_same_collectives(got, extract(model))


@pytest.mark.parametrize("job", ["gloo_p2p", "gloo_subgroups", "ddp_gloo_buckets"])
def test_recorded_gloo_jobs_collectives_in_a_batch(job: str) -> None:
    models = _recorded(job)
    assert sum(len(extract(m)) for m in models) > 0
    _assert_batch_collectives_are_each_ranks(models)


def test_each_rank_names_its_peers_from_its_own_pg_config() -> None:
    """The gloo pipeline's sends name their peer only as a rank of the call's group: a rank
    whose header lists the group's ranks otherwise gets other global peers, in a batch
    too (the batch has no header of its own)."""
    first = _recorded("gloo_p2p")[1]
    second = _recorded("gloo_p2p")[1]
    second.header = copy.deepcopy(second.header)
    for group in second.header["distributedInfo"]["pg_config"]:
        group["ranks"] = [r + 10 for r in group["ranks"]]
    alone = [extract(first), extract(second)]
    peers = [set(c.dst.tolist()) | set(c.src.tolist()) for c in alone]
    assert peers[0] != peers[1] and {10, 11} & peers[1]
    _assert_batch_collectives_are_each_ranks([first, second])


# A what-if's change every rank has (its whole work twice as fast), one of an op (its GPU
# work found by its owning op: `gpu_owners`, made once a batch), and a top gains' list.
_HALVED = {"rank_all": 1, "factor": 0.5}
_OP_HALVED = {"op": "aten::mm", "factor": 0.5}
_EACH = (
    _HALVED,
    {"collective": "all_reduce", "factor": 2.0},
    {"op": "aten::addmm", "factor": 0.5},
    {"op": "record_param_comms", "factor": 2.0},
)
# (made together, made alone) per summary: the critical path's stubs, the Distributed
# view's, a what-if's changed summary (its tier's), the top gains' summaries a rank.
_MADE = {
    "stubs": (summarize_stubs, summarize_stub),
    "distributed": (summarize_ranks, summarize_rank),
    "what-if": (
        partial(made_sharing_tables, partial(summarize, _HALVED)),
        partial(summarize, _HALVED),
    ),
    "what-if of an op": (tier(_OP_HALVED).make_many, partial(summarize, _OP_HALVED)),
    "top gains": (each_change_tier(list(_EACH)).make_many, partial(summarize_each, _EACH)),
}


def _assert_each_ranks(kind: str, paths: list[Path]) -> None:
    """`kind` made together over the files' models equals it made over models read again,
    one by one: a batch keeps tables with its ranks' models (`share_tables`), so the
    models it was given must not be the ones each rank is made alone from."""
    together, alone = _MADE[kind]
    made = [_ENCODE.encode(s) for s in together([build_model(str(p)) for p in paths])]
    assert made == [_ENCODE.encode(alone(build_model(str(p)))) for p in paths]


def _recorded_paths(job: str, pattern: str = "rank*.pt.trace.json.gz") -> list[Path]:
    return sorted((DATA / job).glob(pattern))


@pytest.mark.parametrize("kind", _MADE)
def test_the_synthetic_job_in_one_batch(kind: str, tmp_path: Path) -> None:
    run = write_traces(Layout(2, 2, 4, steps=3, slow_ranks={5}), tmp_path / "job")
    paths = [run / f"rank{r}.pt.trace.json" for r in range(16)]
    assert why_not_joined([build_model(str(p)) for p in paths]) is None
    _assert_each_ranks(kind, paths)


@pytest.mark.parametrize("kind", _MADE)
@pytest.mark.parametrize("job", ["gloo_p2p", "gloo_subgroups", "whatif_gloo/baseline"])
def test_recorded_jobs_in_one_batch(kind: str, job: str) -> None:
    paths = _recorded_paths(job)
    assert len(paths) > 1
    _assert_each_ranks(kind, paths)


@pytest.mark.parametrize("kind", _MADE)
def test_the_recorded_h200_traces_in_one_batch(kind: str) -> None:
    """One-GPU recordings (two streams, sync events on and stripped, DDP over NCCL, a
    DataLoader-bound step) side by side: GPU work, launches and waits of each its own."""
    paths = _recorded_paths(".", "gpu_*/**/*.pt.trace.json.gz")
    assert len(paths) >= 6
    _assert_each_ranks(kind, paths)


@functools.cache
def _corpus_by_vendor() -> dict[str, list[Path]]:
    """The corpus traces the join takes, by vendor."""
    by_vendor: dict[str, list[Path]] = {}
    for path in joinable_corpus_traces():
        by_vendor.setdefault(trace_vendor(build_model(str(path))), []).append(path)
    return by_vendor


@pytest.mark.corpus
@pytest.mark.parametrize("kind", _MADE)
def test_the_corpus_batched_by_vendor(kind: str) -> None:
    """Every corpus trace the join takes, in one batch per vendor (real GPU traces of
    NVIDIA, AMD and more: not one job's, which only makes the check harder); a batch of
    mixed vendors is summarised one by one, the same."""
    by_vendor = _corpus_by_vendor()
    batched = [paths for paths in by_vendor.values() if len(paths) > 1]
    assert sum(map(len, batched)) >= 20
    for paths in batched:
        _assert_each_ranks(kind, paths)
    _assert_each_ranks(kind, [paths[0] for paths in by_vendor.values()])


@pytest.mark.parametrize("tier", [STUBS, DISTRIBUTED], ids=["stubs", "distributed"])
def test_a_broken_file_in_a_workers_batch_is_its_own_error(tier: Tier, tmp_path: Path) -> None:
    run = write_traces(Layout(2, 1, 2, steps=2), tmp_path / "job")
    paths = [str(run / f"rank{r}.pt.trace.json") for r in range(4)]
    (tmp_path / "broken.pt.trace.json").write_text('{"traceEvents": [{"ph": "X", ')
    files = [(p, f"key{i}") for i, p in enumerate(paths)]
    files.insert(2, (str(tmp_path / "broken.pt.trace.json"), "key-broken"))
    outcomes = summarize_batch(files, None, tier)
    assert [error is None for _, error, _ in outcomes] == [True, True, False, True, True]
    made = [summary for summary, _, _ in outcomes if summary is not None]
    alone = [tier.make(build_model(p)) for p in paths]
    assert [_ENCODE.encode(s) for s in made] == [_ENCODE.encode(s) for s in alone]
