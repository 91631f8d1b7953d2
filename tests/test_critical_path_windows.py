"""Steps' windows under a timing (`anchors.windows`): the whole-array passes give, bit for
bit, what the step-by-step rule gives, on random steps with ties, backlogs, overlapping
steps and GPU work that ends late; so do the passes over many ranks at once
(`windows_of_ranks`), and a job's steps taken as a grid of ranks (`outcome.job_steps`)."""

from __future__ import annotations

import numpy as np
import pytest
from kinetoscope.analysis.critical_path import outcome
from kinetoscope.analysis.critical_path.anchors import (
    StepAnchors,
    _step_windows,
    _windows_one_by_one,
    windows,
    windows_of_ranks,
)
from kinetoscope.analysis.critical_path.outcome import job_steps, listed_steps
from kinetoscope.analysis.critical_path.retime import Timing


def _random_anchors(rng: np.random.Generator, steps: int, events: int) -> StepAnchors:
    devices = [
        rng.integers(0, events // 2, size=int(rng.integers(0, 4))).astype(np.int64)
        for _ in range(steps)
    ]
    return StepAnchors(
        names=[f"ProfilerStep#{i}" for i in range(steps)],
        numbers=list(range(steps)),
        start_event=rng.integers(0, events, size=steps).astype(np.int64),
        start_offset=rng.choice([0.0, 0.5, 3.0], size=steps),
        end_event=rng.integers(0, events, size=steps).astype(np.int64),
        end_offset=rng.choice([0.0, -2.0, 1.25], size=steps),
        first_shift=float(rng.choice([0.0, 7.5])),
        device_nodes=devices,
    )


@pytest.mark.parametrize("seed", range(200))
def test_step_windows_equal_the_step_by_step_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    events = 2 * int(rng.integers(2, 40))
    value = rng.choice(np.arange(0.0, 100.0, 2.5), size=events)  # many ties
    anchors = _random_anchors(rng, int(rng.integers(1, 12)), events)
    fast, slow = _step_windows(anchors, value), _windows_one_by_one(anchors, value)
    for name in ("start", "end", "sink", "tail"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name


def _whole_trace(events: int) -> StepAnchors:
    """A rank without ProfilerSteps: one step, the whole trace."""
    one = np.full(1, -1, np.int64)
    return StepAnchors(["whole trace"], [None], one, np.zeros(1), one, np.zeros(1), 0.0, [])


def _timing(value: np.ndarray) -> Timing:
    return Timing(value, np.full(value.size, -1, np.int64), np.zeros(0))


@pytest.mark.parametrize("seed", range(60))
def test_many_ranks_windows_equal_each_ranks(seed: int) -> None:
    """Ranks of different step counts (and some of none, or of the whole trace) in one
    graph: each rank's windows from the passes over all of them are its own windows."""
    rng = np.random.default_rng(seed)
    events = 2 * int(rng.integers(2, 60))
    value = rng.choice(np.arange(0.0, 100.0, 2.5), size=events)
    ranks = [_random_anchors(rng, int(rng.integers(0, 9)), events) for _ in range(12)]
    ranks[int(rng.integers(0, 12))] = _whole_trace(events)
    together = windows_of_ranks(ranks, _timing(value))
    for anchors, fast in zip(ranks, together):
        slow = windows(anchors, _timing(value))
        for name in ("start", "end", "sink", "tail"):
            got, want = getattr(fast, name), getattr(slow, name)
            assert got.dtype == want.dtype and np.array_equal(got, want), name


class _Joined:
    """What `job_steps` reads of a joint: each rank's anchors."""

    def __init__(self, anchors: list[StepAnchors]) -> None:
        self.anchors = anchors


@pytest.mark.parametrize("seed", range(60))
def test_a_jobs_steps_as_a_grid_equal_them_step_by_step(seed: int) -> None:
    """Ranks of the same steps: the steps taken a column of ranks at a time equal those
    found a rank and a step at a time (the first rank to end last sets a step's end:
    many ties here); ranks whose steps differ are found by name, as before."""
    rng = np.random.default_rng(seed)
    events = 2 * int(rng.integers(2, 60))
    value = rng.choice(np.arange(0.0, 100.0, 2.5), size=events)
    steps = int(rng.integers(1, 9))
    ranks = [_random_anchors(rng, steps, events) for _ in range(int(rng.integers(1, 20)))]
    joint = _Joined(ranks)
    per_rank = windows_of_ranks(ranks, _timing(value))
    assert outcome._aligned(joint, per_rank)  # type: ignore[arg-type]
    fast, slow = job_steps(joint, per_rank), listed_steps(joint, per_rank)  # type: ignore[arg-type]
    assert (fast.names, fast.numbers) == (slow.names, slow.numbers)
    for name in ("start", "end", "sink", "tail"):
        got, want = getattr(fast, name), getattr(slow, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
