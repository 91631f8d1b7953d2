"""Distributed view: collectives of one trace, per-rank summaries, waits vs transfer,
stragglers, the process pool, the disk cache, the route and the CLI key.

The synthetic job (`job_traces`) has exact answers: three GPU ranks whose clocks have
different `baseTimeNanoseconds`, the same all_reduce started at 400/450/500 µs and ending
at 700 µs on every rank, so rank 0 waits 100 µs, rank 1 50 µs, rank 2 none, and all
transfer 200 µs; rank 2 also loads data for 90 µs first, so it is the step's straggler.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import CPU_TID, TraceBuilder
from conftest import PluginClient
from kinetoscope.analysis.core import comms, rules
from kinetoscope.analysis.distributed import rank_summaries as distributed_job
from kinetoscope.analysis.distributed import summary
from kinetoscope.analysis.distributed.rank_summaries import (
    analyze_run,
    rank_summary,
    summarize_all,
    summary_cache,
)
from kinetoscope.analysis.distributed.view import RankInput, RankSummary, analyze, summarize_rank
from kinetoscope.analysis.overview.view import overview
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import chosen_spans, scan_logdir
from kinetoscope.ingest.naming import rank_from_name
from kinetoscope.ingest.storage import file_identity
from kinetoscope.ingest.values import lenient_int
from kinetoscope.store.cache import DiskCache, cache_key
from kinetoscope.store.pools import WorkerPools
from kinetoscope.store.run_context import RunContext
from kinetoscope.store.run_jobs import RunJobs
from kinetoscope.store.trace_store import TraceStore

LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
BASE_NS = 1_700_000_000_000_000_000  # a 2024-style time origin (µs relative to it)


# --- rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ncclAllReduceRingLLKernel_sum_f32(ncclColl)", "all_reduce"),
        (
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            "all_reduce",
        ),
        ("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "reduce_scatter"),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "send_recv"),
        ("ncclBroadcastRingLLKernel_copy_i8(ncclColl)", "broadcast"),
        ("nccl:_all_gather_base", "all_gather"),
        ("c10d::allgather_into_tensor_coalesced_", "all_gather"),
        ("c10d::alltoall_base_", "all_to_all"),
        ("gloo:all_reduce", "all_reduce"),
        ("hccl:all_reduce", "all_reduce"),
        ("allreduce", "all_reduce"),  # `Collective name` arg
        ("_reduce_scatter_base", "reduce_scatter"),
        ("c10d::monitored_barrier_", "barrier"),
        ("nccl:reduce", "reduce"),
        ("record_param_comms", None),
        ("wait", None),  # record_param_comms of Work.wait(): not a collective
    ],
)
def test_collective_type(name: str, kind: str | None) -> None:
    assert rules.collective_type(name) == kind


@pytest.mark.parametrize(
    "ranks",
    [
        list(range(2048)),
        [-(2**63), 2**63 - 1],
        [0, True, 2],  # a bool is not a rank
        [0, 1.0, 2.5, "3", " 0x4 ", None, "x"],
        [2**63, 1, -(2**63) - 1],  # past int64
        [],
    ],
)
def test_a_pg_config_rank_list_reads_each_value_by_the_one_rule(ranks: list[Any]) -> None:
    header = {"distributedInfo": {"pg_config": [{"pg_name": "0", "ranks": ranks}]}}
    (group,) = summary._configured_groups(header["distributedInfo"])
    kept = [lenient_int(v) for v in ranks]
    assert group.ranks == [n for n in kept if n is not None]
    assert all(type(n) is int for n in group.ranks)


def test_dtype_sizes_and_bus_factors() -> None:
    assert rules.dtype_size("Float") == 4 and rules.dtype_size("c10::BFloat16") == 2
    assert rules.dtype_size("unsigned char") == 1 and rules.dtype_size("Long") == 8
    assert rules.dtype_size("TensorList") is None
    assert rules.bus_bandwidth_factor("all_reduce", 4) == pytest.approx(1.5)
    assert rules.bus_bandwidth_factor("all_gather", 4) == pytest.approx(0.75)
    assert rules.bus_bandwidth_factor("reduce_scatter", 8) == pytest.approx(7 / 8)
    assert rules.bus_bandwidth_factor("all_to_all", 2) == pytest.approx(0.5)
    assert rules.bus_bandwidth_factor("broadcast", 8) == 1.0
    assert rules.bus_bandwidth_factor("reduce", 8) == 1.0
    assert rules.bus_bandwidth_factor("barrier", 8) is None
    assert rules.bandwidth_size_multiplier("all_gather", 4) == 4
    assert rules.bandwidth_size_multiplier("all_reduce", 4) == 1


# --- the synthetic job -----------------------------------------------------------------------


def gpu_rank(rank: int, world: int = 3, loader_us: float = 0.0) -> TraceBuilder:
    """One step [0, 1000) µs of absolute time, written with a rank-specific time origin."""
    shift = 500.0 * rank  # this rank's origin is `shift` µs later: its ts are smaller
    t = TraceBuilder()
    t.header.update(
        {
            "baseTimeNanoseconds": BASE_NS + int(shift * 1000),
            "distributedInfo": {
                "backend": "nccl",
                "rank": rank,
                "world_size": world,
                "pg_count": 1,
                "pg_config": [
                    {
                        "pg_name": "0",
                        "pg_desc": "default_pg",
                        "backend_config": "cuda:nccl",
                        "pg_size": world,
                        "ranks": list(range(world)),
                    }
                ],
            },
        }
    )

    def at(us: float) -> float:
        return us - shift

    t.step(1, at(0), 1000)
    if loader_us:
        t.annotation(LOADER, at(0), loader_us)
    mm = t.op("aten::mm", at(95), 10)
    t.launch(at(96), 2, mm, gpu_ts=at(100), gpu_dur=300, name="volta_sgemm_128x64_nn")
    if rank == 0:  # computation during communication: 50 µs of overlap
        add = t.op("aten::add", at(110), 5)
        t.launch(at(111), 2, add, gpu_ts=at(600), gpu_dur=50, name="vectorized_add_kernel")
    comm = t.op(
        "record_param_comms",
        at(300),
        20,
        **{
            "Collective name": "allreduce",
            "In msg nelems": 1000,
            "dtype": "Float",
            "Group size": world,
            "Process Group Name": "0",
            "Seq": 7,
        },
    )
    t.op("nccl:all_reduce", at(302), 10, external_id=t.new_id())
    start = 400.0 + 50 * rank
    t.launch(
        at(305),
        3,
        comm,
        gpu_ts=at(start),
        gpu_dur=700 - start,
        name="ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        stream=20,
    )
    if rank == 1:  # a collective only rank 1's trace caught: unmatched, all transfer
        early = t.op(
            "record_param_comms",
            at(-200),
            10,
            **{"Collective name": "allreduce", "Process Group Name": "0", "Seq": 6},
        )
        t.launch(at(-199), 2, early, gpu_ts=at(-150), gpu_dur=40, name="ncclKernel_AllReduce_X")
    return t


def job_traces(root: Path, world: int = 3) -> Path:
    run = root / "job"
    run.mkdir(parents=True)
    for r in range(world):
        gpu_rank(r, world, loader_us=90.0 if r == world - 1 else 0.0).write(
            run / f"rank{r}.pt.trace.json"
        )
    return run


def summaries_of(run_dir: Path) -> list[RankInput]:
    (run,) = scan_logdir(str(run_dir))
    out = []
    for w in run.workers:
        s = w.spans[0]
        summary = summarize_rank(build_model(s.path))
        out.append(RankInput(w.name, s.name, s.file, summary, rank_from_name(w.name)))
    return out


def test_collectives_of_one_trace(tmp_path: Path) -> None:
    model = gpu_rank(1).model(tmp_path)
    c = comms.extract(model)
    assert c.kind == ["all_reduce", "all_reduce"]
    assert c.pg == ["0", "0"]
    assert c.seq.tolist() == [6, 7]
    assert c.nbytes.tolist() == [-1, 4000]  # In msg nelems x sizeof(Float)
    assert c.group_size.tolist() == [-1, 3]
    assert c.on_gpu.all()
    assert (c.end - c.start).tolist() == [40, 250]


def test_bytes_from_input_dims_and_time_containment(tmp_path: Path) -> None:
    """2023 traces: no metadata on record_param_comms, the kernel linked only through its
    launch inside `nccl:all_reduce` (External id = correlation, as in HTA's samples)."""
    t = TraceBuilder()
    t.step(1, 0, 1000)
    t.op("c10d::allreduce_", 10, 100, **{"Input Dims": [[], []], "Input type": ["TensorList"]})
    t.op("record_param_comms", 12, 90, **{"Input Dims": [[], []], "Input type": ["TensorList"]})
    t.op("nccl:all_reduce", 15, 80, **{"Input Dims": [[1024, 2]], "Input type": ["c10::Half"]})
    t.launch(50, 5, t.new_id(), gpu_ts=200, gpu_dur=100, name="ncclKernel_SendRecv_RING")
    t.op(
        "gloo:broadcast",
        500,
        40,
        tid=CPU_TID + 1,
        **{"Input Dims": [[[3], [5]]], "Input type": ["float"]},
    )
    c = comms.extract(t.model(tmp_path))
    # The op around the launch says what the kernel really is.
    assert c.kind == ["all_reduce", "broadcast"]
    assert c.nbytes.tolist() == [1024 * 2 * 2, (3 + 5) * 4]
    assert c.on_gpu.tolist() == [True, False]


def test_per_rank_parts_add_up_exactly(tmp_path: Path) -> None:
    job = job_traces(tmp_path)
    by_rank = {i.summary.rank: i.summary for i in summaries_of(job)}
    (s0,) = by_rank[0].steps
    assert (s0["computation_us"], s0["overlap_us"], s0["communication_us"], s0["other_us"]) == (
        300.0,
        50.0,
        250.0,
        400.0,
    )
    (s2,) = by_rank[2].steps
    assert (s2["computation_us"], s2["overlap_us"], s2["communication_us"]) == (300.0, 0.0, 200.0)
    assert s2["dataloader_us"] == 90.0
    for s in by_rank.values():
        (st,) = s.steps
        total = st["computation_us"] + st["overlap_us"] + st["communication_us"] + st["other_us"]
        assert total == pytest.approx(st["end_us"] - st["start_us"])
        assert s.mode == "gpu" and s.backend == "nccl" and s.world_size == 3
        assert [pg.name for pg in s.process_groups] == ["0"]


def test_waits_transfer_bandwidth_and_straggler(tmp_path: Path) -> None:
    view = analyze(summaries_of(job_traces(tmp_path)))
    assert view["world_size"] == 3 and view["backend"] == "nccl" and view["mode"] == "gpu"
    assert view["process_groups"][0]["ranks"] == [0, 1, 2]
    ranks = {r["rank"]: r for r in view["ranks"]}
    assert [r["rank_source"] for r in view["ranks"]] == ["distributedInfo"] * 3
    # Matched by Seq 7 although rank 1 has an extra earlier collective (Seq 6).
    assert [ranks[r]["sync_wait_us"] for r in range(3)] == [100.0, 50.0, 0.0]
    # Transfer is of matched calls only: rank 1's lone Seq 6 (40 µs) is `unmatched_us`.
    assert [ranks[r]["transfer_us"] for r in range(3)] == [200.0, 200.0, 200.0]
    assert [ranks[r]["unmatched_us"] for r in range(3)] == [0.0, 40.0, 0.0]
    assert ranks[1]["unmatched_collectives"] == 1
    assert ranks[0]["steps"][0]["sync_wait_us"] == 100.0
    (ar,) = ranks[0]["collectives"]
    assert (ar["name"], ar["calls"], ar["bytes"], ar["total_us"]) == ("all_reduce", 1, 4000, 300.0)
    # 4000 B in 200 µs of transfer = 0.02 GB/s; bus factor 2(n-1)/n = 4/3.
    assert ar["algbw_gbps"] == 0.02 and ar["busbw_gbps"] == pytest.approx(0.027, abs=1e-3)
    (job_ar,) = view["collectives"]
    assert job_ar["calls"] == 4 and job_ar["bytes"] == 12000
    assert job_ar["sync_wait_us"] == 150.0
    (step,) = view["steps"]
    straggler = step["straggler"]
    assert straggler is not None
    assert straggler["rank"] == 2 and straggler["measured"] == "first_collective"
    assert straggler["late_by_us"] == 75.0  # 500 - median(400, 450)
    assert straggler["cause"] == "dataloader" and straggler["cause_excess_us"] == 90.0
    window = straggler["window"]
    assert window["worker"] == "rank2" and window["end_us"] - window["start_us"] == 1000
    assert view["stragglers"] == [
        {"rank": 2, "worker": "rank2", "steps_late": 1, "late_by_us": 75.0}
    ]
    # 150 of 750 µs in matched collectives is waiting: transfer leads, overlapping helps
    (advice,) = view["recommendations"]
    assert advice["id"] == "communication" and advice["evidence"]["sync_wait_pct"] == 20.0
    assert advice["evidence"]["time_scope"] == "mean per rank"


def entering_rank(rank: int, entry: float, loader: float, cpu: float = 0.0) -> TraceBuilder:
    """One step of a 2-rank job that starts at `entry` µs and ends at 10000 µs: data
    loading, a CPU op of `cpu` µs (not a straggler factor), a GEMM, then the step's
    all_reduce, launched 340 µs after them and ending at 9000 µs on both ranks."""
    t = TraceBuilder()
    t.header.update(
        {
            "baseTimeNanoseconds": BASE_NS,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
        }
    )
    t.step(1, entry, 10000 - entry)
    t.annotation(LOADER, entry, loader)
    at = entry + loader
    if cpu:
        t.op("aten::item", at, cpu)
        at += cpu
    mm = t.op("aten::mm", at + 10, 10)
    t.launch(at + 11, 2, mm, gpu_ts=at + 20, gpu_dur=300, name="volta_sgemm_128x64_nn")
    comm = t.op(
        "record_param_comms",
        at + 330,
        20,
        **{"Collective name": "allreduce", "Process Group Name": "0", "Seq": 1},
    )
    t.launch(at + 335, 3, comm, gpu_ts=at + 340, gpu_dur=9000 - at - 340, name="ncclDevKernel_X")
    return t


def straggler_of(tmp_path: Path, name: str, *ranks: TraceBuilder) -> dict[str, Any]:
    run = tmp_path / name
    run.mkdir()
    for r, trace in enumerate(ranks):
        trace.write(run / f"rank{r}.pt.trace.json")
    (step,) = analyze(summaries_of(run))["steps"]
    return step["straggler"]


def test_straggler_that_entered_the_step_late(tmp_path: Path) -> None:
    """Rank 1 arrives 4552 µs late at the all_reduce: 4500 µs because its step started
    that late (before the profiled window: its first step), 52 µs of extra data loading.
    Blaming the data loading would point at the wrong thing."""
    s = straggler_of(tmp_path, "entry", entering_rank(0, 0, 100), entering_rank(1, 4500, 152))
    assert s["rank"] == 1 and s["late_by_us"] == 4552.0  # 4500 + 152 + 340 - (100 + 340)
    assert s["cause"] == "arrived_late" and s["entry_before_window"]
    assert (s["arrived_late_us"], s["in_step_late_us"]) == (4500.0, 52.0)
    assert s["cause_excess_us"] == 4500.0 and s["cause_share_pct"] == pytest.approx(98.858)
    assert s["excess_us"]["dataloader"] == 52.0
    assert (s["explained_us"], s["unexplained_us"]) == (4552.0, 0.0)


def test_straggler_cause_inside_the_step(tmp_path: Path) -> None:
    s = straggler_of(tmp_path, "loader", entering_rank(0, 0, 100), entering_rank(1, 0, 4100))
    assert s["late_by_us"] == 4000.0 and s["arrived_late_us"] == 0.0
    assert s["cause"] == "dataloader" and s["cause_excess_us"] == 4000.0
    assert s["cause_share_pct"] == 100.0 and not s["entry_before_window"]


def test_straggler_without_a_cause_says_what_is_known(tmp_path: Path) -> None:
    """Rank 1 enters 1000 µs late and then runs a 3000 µs CPU op (CPU work is no factor of
    a GPU rank): neither accounts for half of the 4000 µs."""
    s = straggler_of(
        tmp_path, "unknown", entering_rank(0, 0, 100), entering_rank(1, 1000, 100, cpu=3000)
    )
    assert s["late_by_us"] == 4000.0 and s["cause"] == "unknown"
    assert s["cause_excess_us"] == 0.0 and s["cause_share_pct"] == 0.0
    assert (s["arrived_late_us"], s["in_step_late_us"]) == (1000.0, 3000.0)
    assert (s["explained_us"], s["unexplained_us"]) == (1000.0, 3000.0)


def test_mostly_waiting_points_at_the_straggler_not_at_overlap(tmp_path: Path) -> None:
    """Rank 1 enters the step 7000 µs late: rank 0 waits 7052 µs of its 8560 µs
    all_reduce, rank 1 transfers 1508 µs."""
    run = tmp_path / "waiting"
    run.mkdir()
    entering_rank(0, 0, 100).write(run / "rank0.pt.trace.json")
    entering_rank(1, 7000, 152).write(run / "rank1.pt.trace.json")
    (advice,) = analyze(summaries_of(run))["recommendations"]
    assert advice["id"] == "communication_wait"
    assert advice["evidence"]["sync_wait_pct"] == pytest.approx(
        100 * 7052 / (8560 + 1508), abs=0.01
    )
    assert advice["link"] == {"view": "distributed", "anchor": "stragglers"}
    assert "Overlapping communication would not help" in advice["message"]


def cpu_rank(rank: int, ends: list[float], late: float = 0.0) -> TraceBuilder:
    """A gloo rank: one training thread, the backend's thread doing gloo:all_reduce."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": 2}
    t.step(1, 0, 1000)
    t.op("aten::mm", 0, 50 + late)
    for i, end in enumerate(ends):
        start = end - 100 + (late if i == len(ends) - 1 else 0)
        t.op("c10d::allreduce_", start - 5, 3)
        t.op(
            "gloo:all_reduce",
            start,
            end - start,
            tid=CPU_TID + 1,
            **{"Input Dims": [[256]], "Input type": ["float"]},
        )
    return t


def test_cpu_ranks_and_alignment_without_seq(tmp_path: Path) -> None:
    """Rank 1's trace starts one collective later than rank 0's: without Seq the n-th
    collectives do not match, the end times do."""
    run = tmp_path / "gloo"
    run.mkdir()
    cpu_rank(0, [200, 500, 800]).write(run / "rank0.pt.trace.json")
    cpu_rank(1, [501, 801], late=30).write(run / "rank1.pt.trace.json")
    view = analyze(summaries_of(run))
    assert view["mode"] == "cpu" and view["backend"] == "gloo"
    r0, r1 = view["ranks"]
    assert r0["unmatched_collectives"] == 1 and r1["unmatched_collectives"] == 0
    # Rank 0 starts at 400 and 700, rank 1 at 401 and 731: rank 0 waits 1 + 31 µs.
    assert r0["sync_wait_us"] == 32.0 and r1["sync_wait_us"] == 0.0
    assert r0["collectives"][0]["bytes"] == 3 * 1024
    # CPU rule: computation = cpu ops minus comm ops; communication = gloo ranges + c10d calls.
    (s0,) = r0["steps"]
    assert s0["computation_us"] == 50.0
    assert s0["communication_us"] == 3 * 100 + 3 * 3
    straggler = view["steps"][0]["straggler"]
    assert straggler["rank"] == 1 and straggler["late_by_us"] == 1.0  # 401 vs 400
    assert straggler["excess_us"]["computation"] == 30.0


def test_overview_and_distributed_agree_on_communication(tmp_path: Path) -> None:
    """One definition of a rank's communication for both pages. The Overview used to time
    only the backend's `gloo:*` ranges on CPU ranks (300 µs here) where this view timed the
    `c10d::*` calls too (309 µs). Both now read the Overview's communication role; they
    still split it differently, visibly: the Overview gives time shared with higher-priority
    work to that work (kernels outrank communication, communication outranks CPU ops), the
    Distributed view reports it as `overlap_us`."""
    cpu = cpu_rank(0, [200, 500, 800]).model(tmp_path, "cpu.pt.trace.json")
    (cpu_step,) = overview(cpu)["steps"]
    (dist_step,) = analyze([RankInput("w", "1", "cpu", summarize_rank(cpu))])["ranks"][0]["steps"]
    assert cpu_step["breakdown_us"]["communication"] == 309.0
    assert cpu_step["breakdown_us"]["communication"] == (
        dist_step["communication_us"] + dist_step["overlap_us"]
    )
    gpu = gpu_rank(0).model(tmp_path, "gpu.pt.trace.json")
    summary = summarize_rank(gpu)
    rank = analyze([RankInput("w", "1", "gpu", summary)])["ranks"][0]
    for ours, theirs in zip(overview(gpu)["steps"], rank["steps"]):
        assert ours["breakdown_us"]["communication"] == theirs["communication_us"]


def test_rank_numbers_fall_back_to_file_names_then_order(tmp_path: Path) -> None:
    run = tmp_path / "names"
    run.mkdir()
    for r in (1, 0):
        t = gpu_rank(r, 2)
        del t.header["distributedInfo"]
        t.write(run / f"worker{r}_span1.pt.trace.json")
    view = analyze(summaries_of(run))
    assert [(r["rank"], r["rank_source"]) for r in view["ranks"]] == [
        (0, "file_name"),
        (1, "file_name"),
    ]
    inputs = summaries_of(run)
    for i in inputs:
        i.summary.rank = 5  # repeated in the headers, unknown in the names: worker order
        i.name_rank = None
    view = analyze(inputs)
    assert [r["rank_source"] for r in view["ranks"]] == ["order", "order"]
    assert view["warnings"]


# --- summaries: picklable, cached, pooled ------------------------------------------------------


def test_summary_is_plain_picklable_and_cached(tmp_path: Path) -> None:
    job = job_traces(tmp_path)
    path = str(job / "rank0.pt.trace.json")
    cache_dir = tmp_path / "cache"
    summary = rank_summary(path, str(cache_dir))
    assert pickle.loads(pickle.dumps(summary)) == summary
    assert msgspec.json.decode(msgspec.json.encode(summary), type=RankSummary) == summary
    key = cache_key(file_identity(path))
    assert summary_cache(str(cache_dir)).get(key) is not None
    # The model itself is not added to the model cache (only summaries are kept).
    assert DiskCache(cache_dir).load(key) is None


def test_a_restart_reads_summaries_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = job_traces(tmp_path)
    path = str(job / "rank1.pt.trace.json")
    first = rank_summary(path, str(tmp_path / "cache"))

    def boom(model: Any) -> Any:
        raise AssertionError("recomputed")

    tier = dataclasses.replace(distributed_job.DISTRIBUTED, make=boom)
    monkeypatch.setattr(distributed_job, "DISTRIBUTED", tier)
    assert rank_summary(path, str(tmp_path / "cache")) == first


def test_process_pool_for_many_ranks(tmp_path: Path) -> None:
    """From 8 ranks on the default pool is 2 spawned processes; same answer as threads."""
    run = tmp_path / "big"
    run.mkdir()
    for r in range(8):
        gpu_rank(r, 8).write(run / f"rank{r}.pt.trace.json")
    pools = WorkerPools(load_workers=0)
    pool = pools.for_ranks(8)
    assert isinstance(pool, ProcessPoolExecutor) and pool._max_workers == 2
    assert isinstance(pools.for_ranks(7), ThreadPoolExecutor)
    pools.close(wait=True)
    (run / "rank8.pt.trace.json").write_bytes(b"")  # its error crosses the process boundary
    paths = sorted(str(p) for p in run.iterdir())
    seen: list[tuple[int, int]] = []
    in_processes, errors = summarize_all(paths, progress=lambda d, t: seen.append((d, t)))
    assert errors[:8] == [None] * 8 and seen[-1] == (9, 9)
    assert errors[8] is not None and errors[8]["kind"] == "empty_file"
    with ThreadPoolExecutor(2) as threads:
        in_threads, thread_errors = summarize_all(paths, executor=threads)
    assert in_processes == in_threads and errors == thread_errors
    (run_obj,) = scan_logdir(str(run))
    view = analyze_run(RunContext.of(run_obj))
    assert view["ranks_found"] == 8 and [r["rank"] for r in view["ranks"]] == list(range(8))
    assert [e["worker"] for e in view["errors"]] == ["rank8"]


def test_a_broken_rank_is_listed_and_the_others_analysed(tmp_path: Path) -> None:
    job = job_traces(tmp_path)
    (job / "rank3.pt.trace.json").write_bytes(b"")
    (run,) = scan_logdir(str(job))
    view = analyze_run(RunContext.of(run, cache_dir=str(tmp_path / "cache")))
    assert view["ranks_found"] == 3
    (error,) = view["errors"]
    assert error["worker"] == "rank3" and error["kind"] == "empty_file"
    assert "rank3.pt.trace.json" in error["message"]


def test_cli_json_names_a_broken_rank_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON document carries the view as the route answered it; the rank left out is
    still said on stderr, and the exit status says a rank failed."""
    job = job_traces(tmp_path / "logs")
    (job / "rank3.pt.trace.json").write_bytes(b"")
    argv = ["report", str(tmp_path / "logs"), "--view", "distributed", "--format", "json"]
    assert main([*argv, "--no-cache"]) == 3
    out, err = capsys.readouterr()
    (error,) = json.loads(out)["distributed"]["errors"]
    assert error["worker"] == "rank3" and error["message"] in err


def test_span_choice(tmp_path: Path) -> None:
    run_dir = tmp_path / "spans"
    run_dir.mkdir()
    gpu_rank(0, 2).write(run_dir / "rank0.100.pt.trace.json")
    gpu_rank(0, 2).write(run_dir / "rank0.200.pt.trace.json")
    gpu_rank(1, 2).write(run_dir / "rank1.100.pt.trace.json")
    (run,) = scan_logdir(str(run_dir))
    picked = chosen_spans(run, "2")
    assert [(w.name, s.file) for w, s in picked] == [
        ("rank0", "rank0.200.pt.trace.json"),
        ("rank1", "rank1.100.pt.trace.json"),  # no span 2: its first span
    ]


# --- route and CLI ---------------------------------------------------------------------------


class GatedExecutor(Executor):
    """Runs tasks in a thread once `gate` is set, so a test sees the 202 answers."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.pool = ThreadPoolExecutor(2)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        def gated() -> Any:
            self.gate.wait(30)
            return fn(*args, **kwargs)

        return self.pool.submit(gated)


def test_route_progress_then_answer(tmp_path: Path) -> None:
    job_traces(tmp_path / "logs")
    (tmp_path / "logs" / "solo").mkdir()
    gpu_rank(0).write(tmp_path / "logs" / "solo" / "rank0.pt.trace.json")
    client = PluginClient(tmp_path / "logs")
    gated = GatedExecutor()
    client.plugin.store.close()
    client.plugin.store = TraceStore(None, executor=gated)
    client.plugin.run_jobs = RunJobs(client.plugin.store)  # the plugin's jobs on that store
    try:
        runs = {r["name"]: r for r in client.json("runs")["runs"]}
        # Two runs: each also offers the logdir-level Trends page.
        assert runs["job"]["views"] == ["distributed", "trends"]
        assert runs["solo"]["views"] == ["trends"]
        assert client.get("distributed", run="nope").status_code == 404
        assert client.get("distributed").status_code == 400
        first = client.get("distributed", run="job")
        assert first.status_code == 202
        assert first.get_json() == {
            "run": "job",
            "span": "1",
            "state": "loading",
            "ranks_done": 0,
            "ranks_total": 3,
        }
        gated.gate.set()
        deadline = time.monotonic() + 30
        while (response := client.get("distributed", run="job")).status_code == 202:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert response.status_code == 200
        body = response.get_json()
        assert body["state"] == "ready" and body["errors"] == []
        assert [r["sync_wait_us"] for r in body["ranks"]] == [100.0, 50.0, 0.0]
    finally:
        gated.pool.shutdown()
        client.close()


def test_cli_json_has_the_distributed_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job_traces(tmp_path / "logs")
    (tmp_path / "logs" / "solo").mkdir()
    gpu_rank(0).write(tmp_path / "logs" / "solo" / "rank0.pt.trace.json")
    assert main(["report", str(tmp_path / "logs"), "--run", "job", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    dist = doc["distributed"]
    (run,) = scan_logdir(str(tmp_path / "logs" / "job"))
    expected = json.loads(msgspec.json.encode(analyze_run(RunContext.of(run))))
    assert dist == {**expected, "run": "job"}
    for r in dist["ranks"]:
        assert {
            "rank",
            "computation_us",
            "overlap_us",
            "communication_us",
            "other_us",
            "sync_wait_us",
            "transfer_us",
            "collectives",
        } <= set(r)
        for c in r["collectives"]:
            assert {"name", "calls", "bytes", "total_us"} <= set(c)
    assert main(["report", str(tmp_path / "logs"), "--run", "solo", "--format", "json"]) == 0
    assert "distributed" not in json.loads(capsys.readouterr().out)
    assert main(["report", str(tmp_path / "logs"), "--run", "job", "--view", "distributed"]) == 0
    text = capsys.readouterr().out
    assert "Distributed (3 ranks" in text and "rank 2 late by 0.075 ms; dataloader" in text


def test_a_model_already_cached_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rank opened in the UI has its model in the cache: the summary reads that."""
    from kinetoscope.store.trace_store import TraceStore

    job = job_traces(tmp_path)
    path = str(job / "rank2.pt.trace.json")
    store = TraceStore(DiskCache(tmp_path / "cache"))
    store.wait(path)
    store.close()

    def no_decoding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("decoded again")

    # The summary caches' reader decodes a trace only when no cached model is there.
    from kinetoscope.analysis.core import summary_cache as summaries_on_disk

    monkeypatch.setattr(summaries_on_disk, "build_model", no_decoding)
    assert rank_summary(path, str(tmp_path / "cache")).rank == 2
