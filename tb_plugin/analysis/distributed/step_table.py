"""Every rank's steps end to end, each time as one column: what the per-rank rows, the
per-step rows and the stragglers read, gathered from the summaries once instead of one
step dict at a time per use (2,048 ranks of 20 steps: 41,000 steps, ten times each).

Flat step `i = bounds[r] + j` is step j of rank r. The columns hold the summaries' own
values (Python floats), so sums over a rank's slice of them are the sums of its steps as
before, to the last bit; `array` gives one as numpy's float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .summary import RankSummary, StepTimes

TIMES = (
    "start_us",
    "end_us",
    "computation_us",
    "overlap_us",
    "communication_us",
    "other_us",
    "dataloader_us",
    "host_gap_us",
)
STEP_PARTS = TIMES[2:]  # the parts of a step's time, as a step row lists them


@dataclass
class StepTable:
    steps: list[StepTimes]
    bounds: list[int]  # rank r's steps are steps[bounds[r]:bounds[r + 1]]
    duration: list[float]  # end_us - start_us
    columns: dict[str, list[float]]  # each of TIMES
    _arrays: dict[str, np.ndarray] = field(default_factory=dict)

    def array(self, name: str) -> np.ndarray:
        """Column `name` (one of TIMES, or "duration") as float64."""
        if name not in self._arrays:
            values = self.duration if name == "duration" else self.columns[name]
            self._arrays[name] = np.array(values, dtype=np.float64)
        return self._arrays[name]

    def of_rank(self, name: str, r: int) -> list[float]:
        """Rank r's values of column `name` (or "duration")."""
        values = self.duration if name == "duration" else self.columns[name]
        return values[self.bounds[r] : self.bounds[r + 1]]


def step_table(summaries: list[RankSummary]) -> StepTable:
    steps = [st for s in summaries for st in s.steps]
    bounds = np.cumsum([0] + [len(s.steps) for s in summaries]).tolist()
    columns = {name: [st[name] for st in steps] for name in TIMES}  # type: ignore[literal-required]
    duration = [st["end_us"] - st["start_us"] for st in steps]
    return StepTable(steps, bounds, duration, columns)
