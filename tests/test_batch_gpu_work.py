"""Each rank's GPU work from a batch of ranks (`launches.batch_gpu_work`): the same as each
rank's own `gpu_work` (its origin, its rows, launches and devices counted as alone), on a
recorded-shape job, on ranks whose clocks start apart, and on every corpus trace the join
takes."""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import pytest
from builders import TraceBuilder
from corpus import joinable_corpus_traces, read_as_batch
from kinetoscope.analysis.core.launches import GpuWork, batch_gpu_work, gpu_work
from kinetoscope.ingest.build import build_model
from synthetic_job import Layout, write_traces


def _assert_same(batched: GpuWork, alone: GpuWork, k: int) -> None:
    for field in msgspec.structs.fields(GpuWork):
        got, want = getattr(batched, field.name), getattr(alone, field.name)
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype, (k, field.name)
            assert np.array_equal(got, want), (k, field.name)
        else:
            assert got == want, (k, field.name)


def _assert_batch_is_each_rank(paths: list[Path]) -> list[GpuWork]:
    batched = batch_gpu_work(read_as_batch(paths))
    assert len(batched) == len(paths)
    for k, (work, path) in enumerate(zip(batched, paths)):
        # Alone: the file read again, so nothing the batch found is shared with it.
        _assert_same(work, gpu_work(build_model(str(path))), k)
    return batched


def _rank(t0: float, device: int) -> TraceBuilder:
    """A step of one GEMM and one copy on two streams, its clock starting at `t0`."""
    b = TraceBuilder()
    b.step(1, t0 + 0.5, 40.0)
    mm = b.op("aten::mm", t0 + 1.0, 5.0)
    b.launch(t0 + 2.25, 1.0, mm, gpu_ts=t0 + 6.125, gpu_dur=10.0, name="gemm", device=device)
    b.launch(
        t0 + 4.0,
        1.0,
        mm,
        kind="gpu_memcpy",
        gpu_ts=t0 + 7.5,
        gpu_dur=3.0,
        name="Memcpy HtoD",
        device=device,
        stream=13,
        runtime="cudaMemcpyAsync",
    )
    return b


def test_ranks_whose_clocks_start_apart_keep_their_own_origins(tmp_path: Path) -> None:
    paths = []
    for k, (t0, device) in enumerate([(1000.0, 0), (52.75, 1), (9_000_000.0, 0)]):
        paths.append(tmp_path / f"rank{k}.json")
        _rank(t0, device).write(paths[-1])
    batched = _assert_batch_is_each_rank(paths)
    # By hand: each origin the whole µs at or before the rank's first event (t0 + 0.5).
    assert [w.origin_us for w in batched] == [1000.0, 53.0, 9_000_000.0]
    assert batched[1].start.tolist() == [5875, 7250]  # ns from 53.0: 58.875, 60.25 µs
    assert batched[1].launch_start.tolist() == [2000, 3750]
    assert [w.device.tolist() for w in batched] == [[0, 0], [1, 1], [0, 0]]
    assert batched[2].rows.tolist() == batched[0].rows.tolist()  # counted from each rank's first


def test_a_recorded_shape_job(tmp_path: Path) -> None:
    run = write_traces(Layout(2, 1, 4, steps=2), tmp_path / "job")
    batched = _assert_batch_is_each_rank(sorted(run.glob("*.json")))
    assert all(w.rows.size and (w.launch >= 0).all() for w in batched)


@pytest.mark.corpus
def test_every_corpus_trace_the_join_takes_in_one_batch() -> None:
    paths = list(joinable_corpus_traces())
    assert len(paths) >= 30
    batched = _assert_batch_is_each_rank(paths)
    assert sum(w.rows.size > 0 for w in batched) >= 20
    assert len({w.origin_us for w in batched}) >= 20
