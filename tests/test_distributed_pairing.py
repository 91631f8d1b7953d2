"""Calls without `Seq` paired across ranks whose files hold different subsets of the job's
calls (analysis/distributed/pairing.py): the answers are hand-computed from
`builders.SAMPLED_CALLS`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import SAMPLED_WORLD, Call, sampled_job, sampled_rank
from kinetoscope.analysis.distributed.pairing import _rooted_calls
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


def _rooted_job(tmp_path: Path, steps: int, rank1_steps: list[int]) -> dict:
    """Steps 1-`steps` of 20 ms, each a broadcast then an all_reduce; rank 1's trace
    holds the steps `rank1_steps` only (its window opened later). At each broadcast the
    root (rank 0) sends at +1 ms and leaves 50 µs later; rank 1 comes at +15 ms, so its
    end is nearer the root's end of the next step than of its own. Both ranks end each
    all_reduce at +16 ms."""
    calls: list[Call] = []
    ends: dict[tuple[int, int], float] = {}
    for step in range(1, steps + 1):
        t0 = 20_000.0 * step
        starts = {0: t0 + 1000.0, 1: t0 + 15_000.0}
        if step not in rank1_steps:
            del starts[1]
        ends[(len(calls), 0)] = t0 + 1050.0
        calls.append(("broadcast", 256, t0 + 15_100.0, starts))
        calls.append(("all_reduce", 4096, t0 + 16_000.0, {r: s + 500.0 for r, s in starts.items()}))
    folder = tmp_path / "job"
    folder.mkdir()
    for rank in range(2):
        numbers = range(1, steps + 1) if rank == 0 else rank1_steps
        trace = sampled_rank(
            rank, calls, world=2, ends=ends, steps=[(n, 20_000.0 * n, 19_900.0) for n in numbers]
        )
        trace.write(folder / f"rank{rank}.pt.trace.json")
    (run,) = scan_logdir(str(folder))
    return analyze_run(RunContext.of(run))


def test_a_rooted_call_pairs_by_its_place_in_its_step_not_by_the_nearest_end(
    tmp_path: Path,
) -> None:
    """Rank 1's broadcasts end nearer the root's next one: paired by the nearest end they
    would be the next step's call (and rank 1's last one a call of its own). Both ranks
    number the steps, so each is the first broadcast of the same step on both ranks."""
    view = _rooted_job(tmp_path, steps=4, rank1_steps=[2, 3, 4])
    ranks = view["ranks"]
    # step 1's broadcast and all_reduce are in rank 0's file only
    assert [r["unmatched_collectives"] for r in ranks] == [2, 0]
    # rank 0, per step 2-4: the broadcast's 50 µs (the root's own), the all_reduce's
    # 14,000 µs (rank 1 starts it at +15.5 ms, rank 0 at +1.5 ms)
    assert ranks[0]["sync_wait_us"] == 3 * (50 + 14_000)
    assert ranks[1]["sync_wait_us"] == 0.0
    assert view["slow_ranks"] == [1]


def test_rooted_calls_outside_the_shared_steps_follow_the_step_pairs_shift() -> None:
    """The reference rank (positions 0-4) and rank 1 (5-9), whose ends lie nearer the
    reference's next call. Rank 1's calls at positions 6 and 7 are the first of steps 2
    and 3 on both ranks: the reference's calls 1 and 2 (the same places in each rank's
    list: no shift). Its others, outside those steps, shift as they do: 5 -> 0, 8 -> 3,
    9 -> 4."""
    end = np.array([0.0, 10, 20, 30, 40, 8, 18, 28, 38, 48])
    step = np.array([1, 2, 3, 4, 4, -1, 2, 3, -1, -1])
    per_rank = {0: np.arange(5), 1: np.arange(5, 10)}
    calls = _rooted_calls(per_rank, end, np.full(10, 256), step, same=True)
    assert calls.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    # by the nearest end alone (no steps), each would be the reference's next call
    calls = _rooted_calls(per_rank, end, np.full(10, 256), np.full(10, -1), same=True)
    assert calls[5:].tolist() == [1, 2, 3, 4, 5]


def test_a_rooted_call_shifted_onto_a_call_paired_by_step_is_refused() -> None:
    """Rank 1 (4-7) runs one unnumbered call (5) between its calls of steps 2, 3 and 4,
    paired by step with the reference's (0-3) 1, 2, 3 (shift 0 twice, +1 once): by the
    most common shift it would be call 1, which step 2's pair took, so it is a call of
    its own; differing bytes refuse a pair too."""
    end = np.array([0.0, 10, 20, 30, 10, 12, 20, 30])
    step = np.array([1, 2, 3, 4, 2, -1, 3, 4])
    per_rank = {0: np.arange(4), 1: np.arange(4, 8)}
    calls = _rooted_calls(per_rank, end, np.full(8, 64), step, same=True)
    assert calls[:4].tolist() == [0, 1, 2, 3]
    assert calls[[4, 6, 7]].tolist() == [1, 2, 3]
    assert calls[5] >= 4  # refused: a call of its own
    nbytes = np.array([64, 64, 64, 64, 64, 64, 128, 64])
    calls = _rooted_calls(per_rank, end, nbytes, step, same=True)
    assert calls[6] >= 4 and calls[[4, 7]].tolist() == [1, 3]


def test_a_rank_late_at_every_step_whose_first_call_waited_for_its_profiler() -> None:
    """A recorded 2-rank gloo job (tests/data/gloo_late_window/README.md): rank 1 comes
    ~15 ms late to each step's broadcast, and 1.09 s late to its first, which starting its
    profiler held up. That first call's delay is unknown (nothing synchronized the ranks
    before it in rank 1's trace): left out, rank 1 holds the group in every other call."""
    (run,) = scan_logdir(str(Path(__file__).parent / "data" / "gloo_late_window"))
    view = analyze_run(RunContext.of(run))
    assert view["slow_ranks"] == [1]
    (group,) = view["groups"]
    assert group["waits_for"] == 1 and group["verdict"] == "waits_for_rank"
    # held: rank 0's waits at the broadcasts of steps 2-4, ~15 ms each
    assert 3 * 14_000 < group["waits_for_us"] < 3 * 17_000
    late = {s["number"]: s["straggler"] for s in view["steps"] if s["straggler"]}
    assert sorted(late) == [1, 2, 3, 4] and {s["rank"] for s in late.values()} == {1}
    assert all(14_000 < late[n]["late_by_us"] < 17_000 for n in (2, 3, 4))


def test_calls_that_name_no_group_in_a_job_of_subgroups_are_said_to_be_ambiguous() -> None:
    """A recorded 4-rank gloo job (tests/data/gloo_subgroups/README.md): pairs (0, 1) and
    (2, 3) each run an all_reduce of one size per step, then all four one of another
    size; no call names its group. The view warns that two groups' calls may be paired
    as one; a job of one group (gloo_late_window) gets no such warning."""
    data = Path(__file__).parent / "data"
    (run,) = scan_logdir(str(data / "gloo_subgroups"))
    (warning,) = [w for w in analyze_run(RunContext.of(run))["warnings"] if "name no" in w]
    assert warning.startswith("32 collectives name no process group")
    assert "2 different sets of groups" in warning
    (run,) = scan_logdir(str(data / "gloo_late_window"))
    assert not [w for w in analyze_run(RunContext.of(run))["warnings"] if "name no" in w]


def test_a_wait_that_overlaps_an_earlier_calls_wait_is_held_once(tmp_path: Path) -> None:
    """Three 40 ms steps of a 2-rank job, each two all_reduces that rank 0 starts 1 ms
    apart while rank 1 comes 12 ms late to the first (as DDP's buckets on gloo's worker
    threads overlap). Rank 0's wait in the second, until rank 1 starts it at +15 ms, is
    the first one's until that ends (+14 ms): the second held the group 1 ms, not 13.
    Held per step: 12,000 + 1,000 µs (the first step's first call left out: nothing
    synchronized the ranks before it), all rank 1's: it is the rank waited for."""
    calls: list[Call] = []
    for step in range(3):
        t0 = 40_000.0 * step
        calls.append(("all_reduce", 1000, t0 + 14_000.0, {0: t0 + 1000.0, 1: t0 + 13_000.0}))
        calls.append(("all_reduce", 2000, t0 + 16_000.0, {0: t0 + 2000.0, 1: t0 + 15_000.0}))
    folder = tmp_path / "job"
    folder.mkdir()
    steps = [(n + 1, 40_000.0 * n, 39_900.0) for n in range(3)]
    for rank in range(2):
        sampled_rank(rank, calls, world=2, steps=steps).write(folder / f"rank{rank}.pt.trace.json")
    (run,) = scan_logdir(str(folder))
    view = analyze_run(RunContext.of(run))
    (group,) = view["groups"]
    assert group["waits_for"] == 1
    # +2 µs: rank 1's ends are 2 µs later (sampled_rank), so its gaps are 2 µs shorter
    assert group["waits_for_us"] == pytest.approx(2 * 12_000 + 3 * 1000, abs=10)
    assert view["slow_ranks"] == [1]
