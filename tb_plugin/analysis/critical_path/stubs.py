"""A run's recorded critical path without every rank's graph. At the recorded timing the
path enters a rank only where that rank ends a step last or arrives last at a collective
(ties included): every other rank matters to the join only through the times of its
collectives and steps, which the Distributed view's summary of it holds. Such a rank joins
as a `StubPart`: its collectives and step bounds pinned at those times, no local path.

`candidates` names the ranks the path may enter, from the stubs' times alone; the run
summarises those in full and joins the rest as stubs, then walks the path
(`stubs_on_path`): a stub it runs through is summarised in full and the join made again
(the times the stubs hold are the Distributed view's, which can differ from a graph's by
a rounding). The path, its times and its steps are those of the join of every rank's
summary; what a stub cannot say is its own assumptions (the view says how many ranks
were read so)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..distributed.matching import instances_of, match_instances
from ..distributed.summary import RankSummary
from .anchors import StepAnchors
from .changes import Change, Scaled
from .expand import PartPieces
from .graph import COLLECTIVE, CPU, DUR, Graph
from .joint import Joint
from .retime import walk_arrays
from .view import baseline

TIE_US = 1e-3  # times this close count as a tie: each may be the one the path takes
STEP_SOURCE = "profiler_steps"  # a rank without them is one step, bounded by the whole job
LANE = "collectives and steps"


@dataclass
class StubPart:
    """A rank of a join from the Distributed view's summary of it (`joint.JoinPart`):
    one node per collective at its recorded start and end, and a zero-length marker at
    each step's start and end; no edge sets them (each is its recorded time)."""

    summary: RankSummary
    worker: str
    rank: int | None

    def __post_init__(self) -> None:
        s = self.summary
        self.table = s.collectives
        count = s.collectives.count
        kinds = s.collectives.column("kind").astype(np.int64)
        steps = s.steps
        n_steps = len(steps)
        step_start = np.array([t["start_us"] for t in steps], dtype=np.float64)
        step_end = np.array([t["end_us"] for t in steps], dtype=np.float64)
        markers = count + 2 * np.arange(n_steps, dtype=np.int64)  # start, then end
        times = np.empty(2 * n_steps)
        times[0::2], times[1::2] = step_start, step_end
        start = np.concatenate([s.collectives.column("start_us").astype(np.float64), times])
        end = np.concatenate([s.collectives.column("end_us").astype(np.float64), times])
        size = count + 2 * n_steps
        n_kinds = len(s.collectives.kinds)
        marker_names = np.tile(np.array([n_kinds, n_kinds + 1], np.int64), n_steps)
        self.collective_nodes = np.arange(count, dtype=np.int64)
        self.anchors = StepAnchors(
            names=[t["name"] for t in steps],
            numbers=[t["number"] for t in steps],
            start_event=2 * markers,
            start_offset=np.zeros(n_steps),
            end_event=2 * (markers + 1) + 1,
            end_offset=np.zeros(n_steps),
            first_shift=0.0,
            device_nodes=[np.zeros(0, np.int64) for _ in steps],
        )
        self.origin_us = s.time_origin_us
        self.assumptions: list[str] = []  # not read: the view says how many ranks are stubs
        self.graph = Graph(
            names=[*s.collectives.kinds, "step start", "step end"],
            kind=np.concatenate(
                [np.full(count, COLLECTIVE, np.int8), np.full(2 * n_steps, CPU, np.int8)]
            ),
            name=np.concatenate([kinds, marker_names]),
            rank=np.zeros(size, np.int64),
            lane=np.zeros(size, np.int64),
            lanes=[LANE],
            row=np.full(size, -1, np.int64),
            start=start,
            end=end,
            scalable=np.zeros(size, bool),
            edge_dst=2 * np.arange(count, size, dtype=np.int64) + 1,
            edge_src=2 * np.arange(count, size, dtype=np.int64),
            edge_role=np.full(2 * n_steps, DUR, np.int8),
            edge_lag=np.zeros(2 * n_steps),
        )

    def factors(self, change: Change | None) -> Scaled:
        n = len(self.graph)
        return Scaled(np.ones(n), np.ones(n), np.zeros(0), 0)

    def own_times(self, factors: Scaled) -> np.ndarray:
        return np.zeros(len(self.graph))

    def piece_table(self, factors: Scaled) -> PartPieces:
        """None: the path never shows a stub (`stubs_on_path` makes it a full rank)."""
        empty = np.zeros(0, np.int64)
        return PartPieces(empty, np.zeros(0), empty, empty, [], None, 1)


def stub_of(summary: RankSummary, worker: str) -> StubPart | None:
    """The rank as a stub; None where it has no ProfilerStep (one step, the whole trace,
    whose bounds come from the whole job's graph: a stub cannot hold them)."""
    if summary.steps_source != STEP_SOURCE or not summary.steps:
        return None
    return StubPart(summary, worker, summary.rank)


def candidates(stubs: list[StubPart]) -> set[int]:
    """The ranks (indices into `stubs`, in the join's order) the recorded path may enter:
    of the ranks that arrive last at a collective matched across ranks, or end a step
    every rank has last, the first in the join's order (where the evaluation's ties
    go, `retime.evaluate`), and each within TIE_US of the last (a graph's time and the
    summary's may differ by a rounding)."""
    return _last_arrivals(stubs) | _last_step_ends(stubs)


def _first_and_near(value: np.ndarray, group: np.ndarray, index: np.ndarray) -> set[int]:
    """Per group of `value`s, the first `index` at its maximum and those within TIE_US."""
    last = np.full(int(group.max()) + 1, -np.inf)
    np.maximum.at(last, group, value)
    exact = value == last[group]
    first = np.full(last.size, np.iinfo(np.int64).max)
    np.minimum.at(first, group[exact], index[exact])
    near = index[~exact & (value >= last[group] - TIE_US)]
    return set(first[first < np.iinfo(np.int64).max].tolist()) | set(near.tolist())


def _last_arrivals(stubs: list[StubPart]) -> set[int]:
    inst = instances_of([s.table for s in stubs], [s.origin_us for s in stubs])
    match_instances(inst)
    members = np.flatnonzero(inst.matched)
    if not members.size:
        return set()
    return _first_and_near(inst.start[members], inst.match[members], inst.rank[members])


def _last_step_ends(stubs: list[StubPart]) -> set[int]:
    """The ranks that end a step last (the job's clock)."""
    reference = min(s.origin_us for s in stubs)
    offsets = np.array([s.origin_us - reference for s in stubs])
    common = set(stubs[0].anchors.names).intersection(*(s.anchors.names for s in stubs[1:]))
    ranks = np.arange(len(stubs), dtype=np.int64)
    out: set[int] = set()
    for name in common:
        at = [s.anchors.names.index(name) for s in stubs]
        ends = offsets + [s.graph.end[s.anchors.end_event[i] // 2] for s, i in zip(stubs, at)]
        out |= _first_and_near(ends, np.zeros(ranks.size, np.int64), ranks)
    return out


def stubs_on_path(joint: Joint) -> set[int]:
    """The parts (indices into `joint.parts`) that are stubs and that a step's recorded
    path runs through. An arrival node (a collective's last arrival) is no part's: its
    rank, the last to arrive, labels its wait and the stub's rank and worker say the
    same; the path runs on through the member it waited for, a part's node."""
    is_stub = np.array([isinstance(p, StubPart) for p in joint.parts], dtype=bool)
    if not is_stub.any():
        return set()
    outcome = baseline(joint)
    steps, graph = outcome.steps, joint.graph
    found: set[int] = set()
    in_parts = int(joint.node_offset[-1]) + len(joint.parts[-1].graph)
    for i in range(len(steps)):
        events = walk_arrays(graph, outcome.timing, int(steps.sink[i]), float(steps.start[i]))[0]
        nodes = events // 2
        ranks = graph.rank[nodes[nodes < in_parts]]  # an arrival's is only its label
        found.update(ranks[is_stub[ranks]].tolist())
    return found
