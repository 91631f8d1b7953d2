"""Steps' windows under a timing (`anchors.windows`): the whole-array passes give, bit for
bit, what the step-by-step rule gives, on random steps with ties, backlogs, overlapping
steps and GPU work that ends late."""

from __future__ import annotations

import numpy as np
import pytest
from kinetoscope.analysis.critical_path.anchors import (
    StepAnchors,
    _step_windows,
    _windows_one_by_one,
)


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
