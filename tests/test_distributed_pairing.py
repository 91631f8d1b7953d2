"""Calls without `Seq` paired across ranks whose files hold different subsets of the job's
calls (analysis/distributed/pairing.py): the answers are hand-computed from
`builders.SAMPLED_CALLS`."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import SAMPLED_WORLD, Call, sampled_job, sampled_rank
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext


def _view(tmp_path: Path) -> dict:
    (run,) = scan_logdir(str(sampled_job(tmp_path / "job")))
    return analyze_run(RunContext.of(run))


def test_each_call_is_paired_with_itself(tmp_path: Path) -> None:
    ranks = {r["rank"]: r for r in _view(tmp_path)["ranks"]}
    # all_reduce waits (last start - own start): call 1 rank 0 200; call 2 rank 1 300;
    # call 3 rank 2 100; call 4 rank 0 500; call 5 rank 0 200, rank 1 300. all_gather:
    # rank 0 300, rank 2 200. By position instead, rank 1's first all_reduce (call 2)
    # would be paired with rank 0's call 1 (half its size).
    assert [ranks[r]["sync_wait_us"] for r in range(3)] == [1200.0, 600.0, 300.0]
    # Call 6 is in rank 1's file only: 102 µs unmatched, neither wait nor transfer.
    assert [ranks[r]["unmatched_collectives"] for r in range(3)] == [0, 1, 0]
    assert [ranks[r]["unmatched_us"] for r in range(3)] == [0.0, 102.0, 0.0]
    # transfer = end - last start, per matched instance (+2 µs on odd ranks):
    # rank 0: 300 + 500 + 400 + 400 + 300 (calls 1-5) + 200 (all_gather)
    assert ranks[0]["transfer_us"] == 300 + 500 + 400 + 400 + 300 + 200
    assert ranks[1]["transfer_us"] == 502 + 402 + 302 + 202


def test_group_size_from_the_calls_own_sizes(tmp_path: Path) -> None:
    rank0 = {c["name"]: c for c in _view(tmp_path)["ranks"][0]["collectives"]}
    ag, ar = rank0["all_gather"], rank0["all_reduce"]
    # c10d::_allgather_base_ of (8 x 4096, 4096) elements: a group of 8.
    assert (ag["group_size"], ag["group_size_source"]) == (8, "sizes")
    assert (ar["group_size"], ar["group_size_source"]) == (SAMPLED_WORLD, "world_size")
    # 8 x 4096 x 4 bytes gathered in 200 µs of transfer; bus factor 7/8
    assert ag["algbw_gbps"] == round(8 * 4096 * 4 / 200 / 1e3, 3)
    assert ag["busbw_gbps"] == pytest.approx(ag["algbw_gbps"] * 7 / 8, abs=1e-3)


def test_a_rank_late_at_a_broadcast_whose_root_does_not_wait(tmp_path: Path) -> None:
    """Three steps of a 2-rank job: rank 1 comes 5 ms late to each step's broadcast, whose
    root (rank 0) sends and leaves after 50 µs; rank 0 then waits 5 ms at the all_reduce.
    The broadcast held rank 0 for 50 µs (its own duration), not 5 ms, and rank 1's
    lateness, which that broadcast did not absorb, is its own at the all_reduce."""
    calls: list[Call] = []
    ends: dict[tuple[int, int], float] = {}
    for step in range(3):
        t0 = 20_000.0 * step
        ends[(len(calls), 0)] = t0 + 1050.0  # the root leaves
        calls.append(("broadcast", 256, t0 + 6100.0, {0: t0 + 1000.0, 1: t0 + 6000.0}))
        calls.append(("all_reduce", 4096, t0 + 7000.0, {0: t0 + 1500.0, 1: t0 + 6500.0}))
    folder = tmp_path / "job"
    folder.mkdir()
    for rank in range(2):
        sampled_rank(rank, calls, world=2, ends=ends).write(folder / f"rank{rank}.pt.trace.json")
    (run,) = scan_logdir(str(folder))
    view = analyze_run(RunContext.of(run))
    r0 = view["ranks"][0]
    # broadcast waits: rank 0's 50 µs (all of it); all_reduce: 5,000 µs each
    assert r0["sync_wait_us"] == 3 * (50 + 5000)
    (group,) = view["groups"]
    # held: 50 per broadcast (what rank 0 waited), 5,000 per all_reduce, rank 1's own
    # delay from the second step on (the first has no earlier synchronizing call: its
    # gaps are unknown); the broadcasts do not synchronize, so rank 1's gap before each
    # all_reduce runs from the previous step's all_reduce.
    assert group["waits_for"] == 1 and group["waits_for_us"] == 2 * (50 + 5000)
    assert view["slow_ranks"] == [1]


def _stepped_job(tmp_path: Path, late_end: float, rank1_first_step: int) -> dict:
    """Three 40 ms steps of a 2-rank job, one all_reduce each. Rank 1 comes 8 ms late to
    the first (rank 0 waits); rank 0's trace records that call's end `late_end` µs after
    rank 1's, as a loaded host does (the thread recording the end was not running).
    Rank 1 numbers its steps from `rank1_first_step` (rank 0 from 1)."""
    calls: list[Call] = []
    ends: dict[tuple[int, int], float] = {}
    for step in range(3):
        t0 = 40_000.0 * step
        late = 8000.0 if step == 0 else 0.0
        calls.append(
            ("all_reduce", 4096, t0 + 9500.0 + late, {0: t0 + 1000.0, 1: t0 + 1000.0 + late})
        )
    ends[(0, 0)] = calls[0][2] + late_end
    folder = tmp_path / "job"
    folder.mkdir()
    for rank in range(2):
        first = 1 if rank == 0 else rank1_first_step
        steps = [(first + k, 40_000.0 * k, 39_900.0) for k in range(3)]
        trace = sampled_rank(rank, calls, world=2, ends=ends, steps=steps)
        trace.write(folder / f"rank{rank}.pt.trace.json")
    (run,) = scan_logdir(str(folder))
    return analyze_run(RunContext.of(run))


def test_calls_of_one_step_pair_by_their_place_whatever_their_ends(tmp_path: Path) -> None:
    """12 ms between the ends of one call on the two ranks (more than the 10 ms an end pair
    may differ by): the first call of step 1 on each rank is still one call."""
    view = _stepped_job(tmp_path, late_end=12_000.0, rank1_first_step=1)
    ranks = view["ranks"]
    assert [r["unmatched_collectives"] for r in ranks] == [0, 0]
    # rank 0 waits 8,000 µs at step 1 (rank 1's start - its own), nobody waits after
    assert [r["sync_wait_us"] for r in ranks] == [8000.0, 0.0]
    first = view["steps"][0]["straggler"]
    assert (first["rank"], first["late_by_us"], first["measured"]) == (
        1,
        8000.0,
        "first_collective",
    )


def test_steps_numbered_apart_do_not_pair_calls(tmp_path: Path) -> None:
    """Rank 1 numbers its steps 11-13: no step is held by both ranks, so the step numbers
    pair nothing and the calls pair by their ends, as without steps: the 12 ms end of the
    first call is beyond the tolerance, so that call is unmatched on both ranks."""
    view = _stepped_job(tmp_path, late_end=12_000.0, rank1_first_step=11)
    ranks = view["ranks"]
    assert [r["unmatched_collectives"] for r in ranks] == [1, 1]
    assert [r["sync_wait_us"] for r in ranks] == [0.0, 0.0]
