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
were read so).

A run's what-if joins its baseline from stubs too (`recorded_stub`): a rank's summary
under the change keeps its nodes' recorded times and its steps' recorded bounds, all the
baseline's step times need, so no recorded summary is made beside it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.common import distinct
from ..distributed.matching import instances_of, match_instances
from ..distributed.summary import CollectiveTable, RankSummary
from .anchors import StepAnchors, no_device_nodes
from .changes import Change, Scaled
from .expand import PartPieces
from .graph import COLLECTIVE, CPU, DUR, Graph
from .joint import Joint
from .retime import walk_arrays
from .stub_tier import StubSummary
from .summaries import ReducedPart
from .view import baseline

TIE_US = 1e-3  # times this close count as a tie: each may be the one the path takes
STEP_SOURCE = "profiler_steps"  # a rank without them is one step, bounded by the whole job
LANE = "collectives and steps"


@dataclass
class Recorded:
    """What a stub holds of a rank, on its trace's clock: per collective node its name (an
    index into `names`) and recorded start and end, per row of its collective table its
    node (-1: none), per step its name, number and recorded start and end."""

    names: list[str]
    name: np.ndarray
    start: np.ndarray
    end: np.ndarray
    row_node: np.ndarray
    step_names: list[str]
    step_numbers: list[int | None]
    step_start: np.ndarray
    step_end: np.ndarray


class StubPart:
    """A rank of a join from what was recorded of it (`joint.JoinPart`): one node per
    collective at its recorded start and end, and a zero-length marker at each step's
    start and end; no edge sets them (each is its recorded time)."""

    def __init__(
        self,
        table: CollectiveTable,
        worker: str,
        rank: int | None,
        origin_us: float,
        recorded: Recorded,
        assumptions: list[str],
    ) -> None:
        self.table, self.worker, self.rank = table, worker, rank
        self.origin_us, self.assumptions = origin_us, assumptions
        self.collective_nodes = recorded.row_node
        count, n_steps = recorded.start.size, len(recorded.step_names)
        size = count + 2 * n_steps
        markers = count + 2 * np.arange(n_steps, dtype=np.int64)  # start, then end
        marker_events = 2 * np.arange(count, size, dtype=np.int64)  # each marker's start
        times = np.empty(2 * n_steps)
        times[0::2], times[1::2] = recorded.step_start, recorded.step_end
        self.anchors = StepAnchors(
            names=recorded.step_names,
            numbers=recorded.step_numbers,
            start_event=2 * markers,
            start_offset=np.zeros(n_steps),
            end_event=2 * (markers + 1) + 1,
            end_offset=np.zeros(n_steps),
            first_shift=0.0,
            device_nodes=no_device_nodes(n_steps),
        )
        self.graph = Graph(
            names=[*recorded.names, "step start", "step end"],
            kind=np.concatenate(
                [np.full(count, COLLECTIVE, np.int8), np.full(2 * n_steps, CPU, np.int8)]
            ),
            # "step start", "step end" in turn, after the collectives' names
            name=np.concatenate(
                [recorded.name, len(recorded.names) + np.arange(2 * n_steps) % 2]
            ).astype(np.int64),
            rank=np.zeros(size, np.int64),
            lane=np.zeros(size, np.int64),
            lanes=[LANE],
            row=np.full(size, -1, np.int64),
            start=np.concatenate([recorded.start, times]),
            end=np.concatenate([recorded.end, times]),
            scalable=np.zeros(size, bool),
            edge_dst=marker_events + 1,
            edge_src=marker_events,
            edge_role=np.full(2 * n_steps, DUR, np.int8),
            edge_lag=np.zeros(2 * n_steps),
        )

    def factors(self, change: Change | None) -> Scaled:
        n = len(self.graph)
        return Scaled(np.ones(n), np.ones(n), np.zeros(0), 0)

    def own_times(self, factors: Scaled) -> np.ndarray:
        return np.zeros(len(self.graph))

    def piece_table(self, factors: Scaled) -> PartPieces:
        """No pieces: the path never shows a stub (`stubs_on_path` makes it a full rank)."""
        empty = np.zeros(0, np.int64)
        return PartPieces(empty, np.zeros(0), empty, empty, [], None, 1)


def stub_of(summary: RankSummary | StubSummary, worker: str) -> StubPart | None:
    """The rank as a stub from the Distributed view's summary of it, or the fields of it a
    stub reads (`stub_tier.StubSummary`), which are the same (its assumptions not
    read: the view says how many ranks are stubs); None where it has no ProfilerStep (one
    step, the whole trace, whose bounds come from the whole job's graph: a stub cannot
    hold them)."""
    if summary.steps_source != STEP_SOURCE or not summary.steps:
        return None
    table, steps = summary.collectives, summary.steps
    recorded = Recorded(
        names=table.kinds,
        name=table.column("kind").astype(np.int64),
        start=table.column("start_us").astype(np.float64),
        end=table.column("end_us").astype(np.float64),
        row_node=np.arange(table.count, dtype=np.int64),
        step_names=[t["name"] for t in steps],
        step_numbers=[t["number"] for t in steps],
        step_start=np.array([t["start_us"] for t in steps], dtype=np.float64),
        step_end=np.array([t["end_us"] for t in steps], dtype=np.float64),
    )
    return StubPart(table, worker, summary.rank, summary.time_origin_us, recorded, [])


def recorded_stub(part: ReducedPart) -> StubPart | None:
    """The rank as recorded, as a stub, from the join's part of its summary under a change
    (its arrays as that part decoded them: the nodes of a summary keep their recorded
    times; its steps' recorded bounds are kept beside); None where a step is the whole
    trace (its bounds are the whole job's)."""
    if (part.anchors.start_event < 0).any():
        return None
    nodes, graph, summary = part.collective_nodes, part.graph, part.summary
    used = distinct(nodes[nodes >= 0])
    recorded = Recorded(
        names=graph.names,
        name=graph.name[used],
        start=graph.start[used],
        end=graph.end[used],
        row_node=np.where(nodes >= 0, np.searchsorted(used, nodes), -1).astype(np.int64),
        step_names=list(part.anchors.names),
        step_numbers=list(part.anchors.numbers),
        step_start=summary.column("step_recorded_start").astype(np.float64),
        step_end=summary.column("step_recorded_end").astype(np.float64),
    )
    return StubPart(part.table, part.worker, part.rank, part.origin_us, recorded, part.assumptions)


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
    """The ranks that end a step last (the job's clock), each step every rank has."""
    reference = min(s.origin_us for s in stubs)
    offsets = np.array([s.origin_us - reference for s in stubs])
    first = stubs[0].anchors.names
    common = set(first).intersection(*(s.anchors.names for s in stubs[1:]))
    order = [name for name in first if name in common]
    if not order:
        return set()
    ends = np.stack([_ends_of(s, order) for s in stubs]) + offsets[:, None]  # rank x step
    ranks = np.repeat(np.arange(len(stubs), dtype=np.int64), len(order))
    steps = np.tile(np.arange(len(order), dtype=np.int64), len(stubs))
    return _first_and_near(ends.reshape(-1), steps, ranks)


def _ends_of(stub: StubPart, order: list[str]) -> np.ndarray:
    """The stub's recorded end of each step of `order` (its trace clock)."""
    ends = stub.graph.end[stub.anchors.end_event // 2]
    if stub.anchors.names == order:  # every rank has the same steps: most runs
        return ends
    at = {name: i for i, name in enumerate(stub.anchors.names)}
    return ends[[at[name] for name in order]]


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
