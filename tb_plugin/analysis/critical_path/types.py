"""The critical path's and the what-if's wire types: their query parameters and their
responses (the TypeScript types and the docs' examples are checked against them)."""

from __future__ import annotations

from typing import Literal, TypedDict

from ..distributed.types import RankError


class CriticalPathParams(TypedDict, total=False):
    step: str  # a step's name or number; absent: every step (the whole span)
    offset: int  # the first path segment of the page (default 0)
    limit: int  # at most this many segments (default and most: 5,000)


class WhatIfParams(TypedDict, total=False):
    kernel: str  # the GPU activities of this name
    op: str  # this op's host time and the device work it launched
    collective: str  # the transfers of this collective type (all_reduce, ...)
    rank_all: int  # 1: everything on a rank (with `rank`) or on every rank
    rank: int  # the change on this rank only
    factor: float  # the new time over the old: 0.5 is twice as fast
    offset: int  # the first segment of the predicted path's page (default 0)
    limit: int  # at most this many segments (default and most: 5,000)


class TopGainsParams(TypedDict, total=False):
    factor: float  # default 0.5


class PathSegment(TypedDict):
    rank: int | None  # the trace's rank (None: the trace does not say)
    worker: str
    kind: str  # cpu, kernel, memcpy, memset, collective, wait, idle
    name: str
    start_us: float  # on the trace's own clock (its `ts`), under the timing shown
    dur_us: float
    lane: str  # the track: "pid/tid" as the trace writes them (a GPU stream: device/stream)


class PathName(TypedDict):
    kind: str
    name: str
    dur_us: float
    share_pct: float  # of the path's length


class PathRank(TypedDict):
    rank: int | None
    worker: str
    dur_us: float


class RankClock(TypedDict):
    rank: int | None
    worker: str
    offset_us: float  # the job's clock = this rank's trace time + offset_us


class StepPath(TypedDict):
    step: str
    number: int | None
    start_us: float  # the job's clock (a span: its trace's)
    step_us: float
    by_kind: dict[str, float]


class CriticalPathView(TypedDict):
    scope: Literal["span", "run"]
    step: str | None  # the step whose path `segments` hold; None: every step
    step_us: float  # that step's length; every step: the mean (span_us over the steps)
    span_us: float  # every step together
    steps: list[StepPath]
    segments: list[PathSegment]  # the page [offset, offset + limit) of the path
    segments_total: int  # the path's segments, every page
    offset: int
    limit: int
    by_kind: dict[str, float]
    by_name: list[PathName]  # the names longest on the path first (at most 50)
    by_rank: list[PathRank]
    # The gaps of no recorded cause taking at least a tenth of the path (a launch delay of
    # work that waited for something unrecorded): what bounds what a change can save
    bound_by: list[str]
    clocks: list[RankClock]  # every rank's clock on the job's (steps' `start_us`)
    assumptions: list[str]  # sync edges the trace does not show, taken as said here
    warnings: list[str]


class Change(TypedDict):
    kind: Literal["kernel", "op", "collective", "rank_all"]
    name: str
    factor: float
    rank: int | None


class StepPrediction(TypedDict):
    step: str
    baseline_us: float
    predicted_us: float


class WhatIfView(TypedDict):
    scope: Literal["span", "run"]
    change: Change
    label: str
    matched: int  # calls (ops), activities (kernels) or collectives the change applies to
    baseline_step_us: float  # the mean step (the span over its steps), as recorded
    predicted_step_us: float  # the mean step, re-timed
    baseline_span_us: float  # every step together, as recorded
    predicted_span_us: float  # every step together, re-timed
    saving_us: float  # over the whole span: baseline_span_us - predicted_span_us
    saving_pct: float  # of the span (the mean step's saving too)
    steps: list[StepPrediction]
    critical_path_step: str | None  # the predicted median step, whose path follows
    critical_path: list[PathSegment]  # its page [offset, offset + limit)
    critical_path_total: int  # its segments, every page
    by_kind: dict[str, float]  # of that path
    bound_by: list[str]  # the gaps of no recorded cause taking a tenth of it or more
    method: Literal["graph", "summaries"]
    assumptions: list[str]
    warnings: list[str]


class Gain(TypedDict):
    kind: Literal["kernel", "op", "collective"]
    name: str
    path_us: float  # its time on the recorded critical path (all steps)
    predicted_step_us: float  # the mean step, re-timed
    saving_us: float  # over the whole span (every step)
    saving_pct: float  # of the span


class TopGainsView(TypedDict):
    scope: Literal["span", "run"]
    factor: float
    baseline_step_us: float  # the mean step, as recorded
    baseline_span_us: float
    gains: list[Gain]  # the changes that save time, largest saving first
    assumptions: list[str]


class RunCriticalPathView(CriticalPathView):
    """`run_critical_path`: the job's critical path, and the ranks left out."""

    errors: list[RankError]


class RunWhatIfView(WhatIfView):
    """`run_whatif`: the job re-timed, and the ranks left out."""

    errors: list[RankError]


class RunTopGainsView(TopGainsView):
    """`run_top_gains`: the job's top gains, and the ranks left out."""

    errors: list[RankError]


class CriticalPathLoading(TypedDict):
    """The run-level routes answer 202 with this while each rank's trace is read."""

    run: str
    span: str
    state: Literal["loading"]
    ranks_done: int
    ranks_total: int
