"""A run's rank summaries kept in one pack (summary_pack.py): read back whole on a warm
view with nothing summarised again, a changed file summarised again alone, a damaged pack
made again, process groups kept once; the batches of the default process pool give what
one rank at a time gives, and their sizes shrink towards the end of a run."""

from __future__ import annotations

import dataclasses
import gc
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kinetoscope.analysis.distributed import rank_summaries as distributed_job
from kinetoscope.analysis.distributed.rank_job import Tier
from kinetoscope.analysis.distributed.rank_summaries import (
    BATCHES_PER_WORKER,
    SUMMARY_DIR,
    Listed,
    analyze_run,
    batch_sizes,
    summarize_all,
    summarize_batch,
    summary_pack,
)
from kinetoscope.analysis.distributed.summary_pack import SummaryPack
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import chosen_spans, scan_logdir
from kinetoscope.ingest.storage import file_identity
from kinetoscope.store.cache import cache_key
from kinetoscope.store.pools import cyclic_gc_paused
from kinetoscope.store.run_context import RunContext
from test_distributed import gpu_rank, job_traces


def the_run(folder: Path) -> Any:
    (run,) = scan_logdir(str(folder))
    return run


def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the ranks summarised from here on (rank threads: this process)."""
    seen: list[int] = []
    tier = distributed_job.DISTRIBUTED

    def counting(model: Any) -> Any:
        seen.append(1)
        return tier.make(model)

    monkeypatch.setattr(distributed_job, "DISTRIBUTED", dataclasses.replace(tier, make=counting))
    return seen


def packs(cache: Path) -> list[Path]:
    return sorted((cache / SUMMARY_DIR / "runs").glob("*.msgpack"))


def test_a_warm_view_reads_the_pack_and_summarises_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = job_traces(tmp_path)
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(2) as threads:
        context = RunContext.of(the_run(job), cache_dir=str(cache), executor=threads)
        cold = analyze_run(context)
        assert len(packs(cache)) == 1
        for entry in (cache / SUMMARY_DIR).iterdir():  # one by one too (a user's executor)
            if entry.name != "runs":
                for view in (entry / "views").iterdir():
                    view.unlink()
        seen = counted(monkeypatch)
        warm = analyze_run(RunContext.of(the_run(job), cache_dir=str(cache), executor=threads))
    assert seen == [] and warm == cold


def test_a_changed_file_alone_is_summarised_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = job_traces(tmp_path)
    cache = str(tmp_path / "cache")
    with ThreadPoolExecutor(2) as threads:
        analyze_run(RunContext.of(the_run(job), cache_dir=cache, executor=threads))
        (pack,) = packs(tmp_path / "cache")
        gpu_rank(1, 3, loader_us=300.0).write(job / "rank1.pt.trace.json")
        os.utime(job / "rank1.pt.trace.json", ns=(1, 1))  # its state differs in any case
        for entry in (tmp_path / "cache" / SUMMARY_DIR).iterdir():
            if entry.name != "runs":  # only the pack holds the others
                for view in (entry / "views").iterdir():
                    view.unlink()
        seen = counted(monkeypatch)
        view = analyze_run(RunContext.of(the_run(job), cache_dir=cache, executor=threads))
        assert len(seen) == 1
        fresh = analyze_run(RunContext.of(the_run(job), executor=threads))  # no cache
    assert view == fresh and [r["rank"] for r in view["ranks"]] == [0, 1, 2]
    (again,) = packs(tmp_path / "cache")  # the same pack, its entries the files' now
    kept = summary_pack(cache, f"{the_run(job).path}\0").read()
    assert again == pack
    assert sorted(kept) == sorted(cache_key(file_identity(str(p))) for p in job.iterdir())


def test_a_damaged_pack_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = job_traces(tmp_path)
    cache = str(tmp_path / "cache")
    cold = analyze_run(RunContext.of(the_run(job), cache_dir=cache))
    (pack,) = packs(tmp_path / "cache")
    data = pack.read_bytes()
    pack.write_bytes(data[: len(data) // 2])
    assert analyze_run(RunContext.of(the_run(job), cache_dir=cache)) == cold
    assert pack.read_bytes() == data  # written again whole


def test_the_pack_keeps_each_process_group_once(tmp_path: Path) -> None:
    job = job_traces(tmp_path)
    run = the_run(job)
    picks = chosen_spans(run)
    paths = [s.path for _, s in picks]
    listed = Listed("job", [(s.size, s.mtime_ns) for _, s in picks])
    results, errors = summarize_all(paths, str(tmp_path / "cache"), listed=listed)
    assert errors == [None] * 3
    folder = str(tmp_path / "cache" / SUMMARY_DIR)
    pack_of_job = summary_pack(str(tmp_path / "cache"), "job")
    back = pack_of_job.read()
    keys = [cache_key(file_identity(p)) for p in paths]
    assert [back[k] for k in keys] == results  # the same summaries, keyed by file state
    (pack,) = packs(tmp_path / "cache")
    assert pack.read_bytes().count(b"default_pg") == 1  # the world group, kept once
    assert back[keys[0]].process_groups[0] is back[keys[1]].process_groups[0]
    assert SummaryPack(folder, "job", "another-version", pack_of_job.packing).read() == {}


def test_a_batch_answers_as_ranks_one_by_one(tmp_path: Path) -> None:
    job = job_traces(tmp_path)
    (job / "rank3.pt.trace.json").write_bytes(b"")
    paths = sorted(str(p) for p in job.iterdir())
    files = [(p, cache_key(file_identity(p))) for p in paths]
    outcomes = summarize_batch(files, None)
    one_by_one, errors = summarize_all(paths, executor=ThreadPoolExecutor(1))
    assert [o[0] for o in outcomes] == one_by_one
    assert [o[1] for o in outcomes] == errors and errors[3] is not None
    assert errors[3]["kind"] == "empty_file" and outcomes[3][2] is None
    assert msgspec.json.encode(outcomes[0][0]) == msgspec.json.encode(one_by_one[0])


def summary_cache_unused(cache_dir: str) -> Any:
    raise AssertionError("a worker's batch keeps no summary one by one")


def summary_pack_unused(cache_dir: str, run: str) -> Any:
    raise AssertionError("a worker's batch writes no pack")


def test_a_batch_runs_with_the_cycle_collector_paused(tmp_path: Path) -> None:
    """A worker's batch makes its summaries with the cycle collector off, and leaves it
    as it found it (on in a worker; a caller that turned it off keeps it off), an error
    inside included."""
    paths = sorted(str(p) for p in job_traces(tmp_path).iterdir())
    files = [(p, cache_key(file_identity(p))) for p in paths]
    seen: list[bool] = []

    def rows(model: Any) -> int:
        seen.append(gc.isenabled())
        return len(model)

    def each_rows(models: list[Any]) -> list[int]:
        return [rows(m) for m in models]

    tier: Tier[int] = Tier(rows, summary_cache_unused, summary_pack_unused, each_rows)
    try:
        for collector_on in (True, False):
            gc.enable() if collector_on else gc.disable()
            outcomes = summarize_batch(files, None, tier)
            assert [o[0] for o in outcomes] == [len(build_model(p)) for p in paths]
            assert gc.isenabled() is collector_on
        assert seen and not any(seen)
        with pytest.raises(ValueError), cyclic_gc_paused():
            raise ValueError("a task's error")
        assert not gc.isenabled()  # off before: still off
        gc.enable()
        with pytest.raises(ValueError), cyclic_gc_paused():
            assert not gc.isenabled()
            raise ValueError("a task's error")
        assert gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize(("count", "workers"), [(2048, 2), (2048, 16), (100, 2), (17, 4), (1, 2)])
def test_batches_shrink_towards_the_end(count: int, workers: int) -> None:
    """Every rank in one batch, in order; the first batches the size of a few a worker,
    none larger, never growing, none but the last under an eighth of the first: the last
    batches are small, so the workers end within a small batch of each other."""
    sizes = batch_sizes(count, workers)
    first = -(-count // (workers * BATCHES_PER_WORKER))
    assert sum(sizes) == count and sizes[0] == first and max(sizes) == first
    assert all(a >= b for a, b in zip(sizes, sizes[1:]))
    assert all(size >= max(1, first // 8) for size in sizes[:-1])
    if count >= 2048:
        assert sizes[-2] < first // 4  # where the whole batches were 128 ranks to the end
    assert batch_sizes(0, workers) == []


def test_a_batch_sends_each_process_group_once(tmp_path: Path) -> None:
    """Every rank lists the world group: the summaries a process makes share one object
    per group, so a batch pickled back from a pool worker carries each group once."""
    job = job_traces(tmp_path)
    files = [(str(p), cache_key(file_identity(str(p)))) for p in sorted(job.iterdir())]
    summaries = [summary for summary, _, _ in summarize_batch(files, None)]
    world = [s.process_groups[0] for s in summaries]
    assert all(pg is world[0] for pg in world) and world[0].name == "0"
    received = pickle.loads(pickle.dumps(summaries))
    assert received == summaries and received[1].process_groups[0] is received[0].process_groups[0]
