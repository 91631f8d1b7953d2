"""A joined graph evaluated under a change: each step's window per rank and for the job,
and each step's critical path on demand.

A job's step n ends when its last rank ends step n, and starts where the job's step n-1
ended (the first: where its first rank started it): so consecutive steps tile the job's
time and a step's length is the job's period, whatever the ranks' phases. One trace
alone is a job of one rank, whose steps are `core/steps.py`'s."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .anchors import Windows, windows_of_ranks
from .changes import Change
from .joint import Joint
from .retime import Timing, evaluate
from .segments import PathBuilder, Segments, concat


@dataclass
class JobSteps:
    names: list[str]
    numbers: list[int | None]
    start: np.ndarray
    end: np.ndarray
    sink: np.ndarray  # event the step's end came from
    tail: np.ndarray

    @property
    def durations(self) -> np.ndarray:
        return self.end - self.start

    def __len__(self) -> int:
        return len(self.names)


class Outcome:
    def __init__(self, joint: Joint, change: Change | None = None) -> None:
        self.joint = joint
        self.change = change
        lag, self.factors = joint.lags(change)
        self.timing: Timing = evaluate(joint.graph, lag)
        self.rank_windows: list[Windows] = windows_of_ranks(joint.anchors, self.timing)

    @cached_property
    def steps(self) -> JobSteps:
        return job_steps(self.joint, self.rank_windows)

    @cached_property
    def builder(self) -> PathBuilder:
        labels, node_label = self.joint.labels
        expand = self.joint.piece_expand(self.factors)
        return PathBuilder(self.joint.graph, self.timing, labels, node_label, expand)

    def path(self, step: int) -> Segments:
        """The segments of step `step`'s critical path, in time order."""
        s = self.steps
        return self.builder.step(int(s.sink[step]), float(s.tail[step]), float(s.start[step]))

    def paths(self) -> Segments:
        """Every step's path, one after another."""
        labels, _ = self.joint.labels
        return concat(
            [self.path(i) for i in range(len(self.steps))], labels, self.joint.graph.lanes
        )


def job_steps(joint: Joint, per_rank: list[Windows]) -> JobSteps:
    """The steps every rank has (by name, in the first rank's order)."""
    if not joint.anchors:
        empty = np.zeros(0)
        return JobSteps([], [], empty, empty, np.zeros(0, np.int64), empty)
    first = joint.anchors[0]
    if _aligned(joint, per_rank):
        return _aligned_steps(first.names, first.numbers, per_rank)
    return listed_steps(joint, per_rank)


def listed_steps(joint: Joint, per_rank: list[Windows]) -> JobSteps:
    """`job_steps` a step and a rank at a time, each rank's steps found by name."""
    common = set(joint.anchors[0].names)
    for a in joint.anchors[1:]:
        common &= set(a.names)
    first = joint.anchors[0]
    keep = [i for i, name in enumerate(first.names) if name in common]
    names = [first.names[i] for i in keep]
    at = [{name: i for i, name in enumerate(a.names)} for a in joint.anchors]
    n = len(names)
    start, end = np.zeros(n), np.zeros(n)
    sink, tail = np.zeros(n, np.int64), np.zeros(n)
    previous = -np.inf
    for j, name in enumerate(names):
        idx = [(r, at[r][name]) for r in range(len(per_rank))]
        starts = [per_rank[r].start[i] for r, i in idx]
        ends = [per_rank[r].end[i] for r, i in idx]
        last = int(np.argmax(ends))
        r, i = idx[last]
        end[j] = ends[last]
        sink[j], tail[j] = per_rank[r].sink[i], per_rank[r].tail[i]
        start[j] = max(min(starts), previous)
        previous = end[j]
    return JobSteps(names, [first.numbers[i] for i in keep], start, end, sink, tail)


def _aligned(joint: Joint, per_rank: list[Windows]) -> bool:
    """Every rank has the same steps in the same order, each name once, and no window is
    NaN: then each step's columns across ranks are a column of a grid."""
    names = joint.anchors[0].names
    if len(set(names)) != len(names) or any(a.names != names for a in joint.anchors[1:]):
        return False
    return not any(np.isnan(w.start).any() or np.isnan(w.end).any() for w in per_rank)


def _aligned_steps(
    names: list[str], numbers: list[int | None], per_rank: list[Windows]
) -> JobSteps:
    """`job_steps` of ranks of the same steps (`_aligned`), a step a column: the step ends
    at its first rank (in the join's order) to end last, and starts at the earliest
    rank's start, no earlier than the step before ended."""
    starts = np.stack([w.start for w in per_rank])
    ends = np.stack([w.end for w in per_rank])
    step = np.arange(len(names))
    last = np.argmax(ends, axis=0)
    end = ends[last, step]
    sink = np.stack([w.sink for w in per_rank])[last, step].astype(np.int64)
    tail = np.stack([w.tail for w in per_rank])[last, step].astype(np.float64)
    start = np.maximum(starts.min(axis=0), np.concatenate([[-np.inf], end[:-1]]))
    return JobSteps(list(names), list(numbers), start, end, sink, tail)


def median_step(durations: np.ndarray) -> int:
    """The step whose length is the median (the lower middle of an even count)."""
    if durations.size == 0:
        return -1
    order = np.argsort(durations, kind="stable")
    return int(order[(durations.size - 1) // 2])
