"""The same collective on each rank: every rank's collective instances as flat arrays on
one clock, matched across ranks (by `Comms Id` where the trace has it, else by process
group, type and `Seq`, else by type, bytes and end time: pairing.py),
with each instance's synchronizing wait and transfer time (the rules: view.py's doc)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .pairing import Pairing
from .summary import COLUMNS, CollectiveTable, RankSummary
from .types import ProcessGroupView


@dataclass
class Instances:
    """Every collective instance of every rank, as flat arrays."""

    kind_names: list[str]
    pg_names: list[str]
    rank: np.ndarray
    kind: np.ndarray
    pg: np.ndarray
    seq: np.ndarray
    start: np.ndarray  # aligned across ranks
    end: np.ndarray
    nbytes: np.ndarray
    group_size: np.ndarray
    step: np.ndarray
    dst: np.ndarray  # a send's global destination rank, -1
    src: np.ndarray  # a recv's global source rank, -1
    # where group_size comes from: summary.GS_SOURCES index (0 unknown)
    gs_from: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # the step's N (ProfilerStep#N) each instance starts in, -1 outside or unnumbered
    step_number: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # per rank (index), its trace time minus the aligned time: aligned - offset = trace time
    offset: np.ndarray = field(default_factory=lambda: np.zeros(0))
    wait: np.ndarray = field(default_factory=lambda: np.zeros(0))
    transfer: np.ndarray = field(default_factory=lambda: np.zeros(0))
    matched: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    match: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # `Comms Id` (0 unknown): instances that carry one are the call of that id
    comms_id: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))


def instances(summaries: list[RankSummary]) -> Instances:
    """Every rank's collective instances, as `instances_of` their summaries' tables."""
    return instances_of([s.collectives for s in summaries], [s.time_origin_us for s in summaries])


def instances_of(tables: list[CollectiveTable], origins: list[float]) -> Instances:
    """Every rank's collectives (`tables[r]`, its trace clock starting at `origins[r]`)
    end to end (rank after rank), each column joined from the tables' packed bytes at
    once; kinds and process groups as indices into the sorted names of the whole job;
    times moved onto the earliest origin's clock."""
    kind_names = sorted({k for t in tables for k in t.kinds})
    pg_names = sorted({p for t in tables for p in t.pgs})
    reference = min(origins) if origins else 0.0
    counts = np.array([t.count for t in tables], dtype=np.int64)
    rank = np.repeat(np.arange(len(tables), dtype=np.int64), counts)
    # exact: origins are whole microseconds
    offset = np.array([o - reference for o in origins], dtype=np.float64)

    def column(name: str) -> np.ndarray:
        return np.frombuffer(b"".join(getattr(t, name) for t in tables), dtype=COLUMNS[name])

    def names(local: str, table_of: str, ids: list[str]) -> np.ndarray:
        """Each instance's index into `ids` (the tables index their own name lists)."""
        at = {n: i for i, n in enumerate(ids)}
        maps = [[at[n] for n in getattr(t, table_of)] or [0] for t in tables]
        first = np.cumsum([0] + [len(m) for m in maps])[:-1]
        joined = np.array([i for m in maps for i in m], dtype=np.int64)
        return joined[column(local).astype(np.int64) + first[rank]] if rank.size else rank

    return Instances(
        kind_names=kind_names,
        pg_names=pg_names,
        rank=rank,
        kind=names("kind", "kinds", kind_names),
        pg=names("pg", "pgs", pg_names),
        seq=column("seq").astype(np.int64),
        start=column("start_us").astype(np.float64) + offset[rank],
        end=column("end_us").astype(np.float64) + offset[rank],
        nbytes=column("nbytes").astype(np.float64),
        group_size=column("group_size").astype(np.int64),
        step=column("step").astype(np.int64),
        dst=column("dst").astype(np.int64),
        src=column("src").astype(np.int64),
        gs_from=column("gs_from").astype(np.int64),
        step_number=column("step_number").astype(np.int64),
        offset=offset,
        comms_id=np.concatenate([t.column("comms_id") for t in tables] or [np.zeros(0)]).astype(
            np.uint64
        ),
    )


def match_instances(inst: Instances) -> None:
    """Waits and transfer of every instance (see the module doc)."""
    n = inst.start.size
    duration = np.clip(inst.end - inst.start, 0, None)
    inst.wait = np.zeros(n)
    inst.transfer = duration.copy()
    inst.matched = np.zeros(n, dtype=bool)
    inst.match = np.arange(n, dtype=np.int64)
    if n == 0:
        return
    value = np.zeros(n, dtype=np.int64)
    by_seq = np.zeros(n, dtype=np.int64)
    pair = inst.pg * (int(inst.kind.max()) + 1) + inst.kind
    order = np.lexsort((inst.start, inst.rank, pair))
    unnumbered: list[tuple[str, np.ndarray]] = []
    for block in np.split(order, np.flatnonzero(np.diff(pair[order])) + 1):
        if (inst.seq[block] >= 0).all():
            value[block] = inst.seq[block]
            by_seq[block] = 1
        else:
            unnumbered.append((inst.kind_names[int(inst.kind[block[0]])], block))
    if unnumbered:
        step_number = inst.step_number if inst.step_number.size == n else np.full(n, -1)
        pairing = Pairing(inst.rank, inst.end, inst.nbytes, unnumbered)
        for kind, block in unnumbered:
            value[block] = pairing.calls(kind, block, inst.rank, inst.end, inst.nbytes, step_number)
    value -= value.min()
    key = (pair * 2 + by_seq) * (int(value.max()) + 1) + value
    match = _calls(key, inst.comms_id if inst.comms_id.size == n else np.zeros(n, np.uint64))
    inst.match = match
    members = np.bincount(match)
    last_start = np.full(members.size, -np.inf)
    np.maximum.at(last_start, match, inst.start)
    inst.matched = members[match] >= 2
    wait = np.clip(last_start[match] - inst.start, 0, duration)
    inst.wait = np.where(inst.matched, wait, 0.0)
    inst.transfer = duration - inst.wait


def _calls(key: np.ndarray, comms_id: np.ndarray) -> np.ndarray:
    """Each instance's call: by its `Comms Id` where it has one (the producer's own name
    of the call: right across communicator splits that reuse a group's name, and for
    point-to-point calls, whose sequence numbers count per peer), else by `key`."""
    named = comms_id > 0
    if not named.any():  # traces before PyTorch 2.12: one key, the one-column unique
        return np.asarray(np.unique(key, return_inverse=True)[1]).ravel()
    space = named.astype(np.int64)
    ident = np.where(named, comms_id.view(np.int64), key)
    _, match = np.unique(np.stack([space, ident], axis=1), axis=0, return_inverse=True)
    return np.asarray(match).ravel()


def transfer_parts(inst: Instances) -> tuple[np.ndarray, np.ndarray]:
    """Per instance, its transfer when matched (0 otherwise) and its whole duration when
    unmatched (0 otherwise): an instance seen on one rank only is neither wait nor
    transfer (nobody can tell which it was), it is `unmatched`."""
    duration = np.clip(inst.end - inst.start, 0, None)
    return np.where(inst.matched, inst.transfer, 0.0), np.where(inst.matched, 0.0, duration)


def group_sizes(
    inst: Instances,
    summaries: list[RankSummary],
    groups: dict[str, ProcessGroupView],
    world_size: int | None,
    n_ranks: int,
) -> None:
    """Each instance's group size: its own (args, sizes), else its process group's size,
    else the world size, else the ranks found; `gs_from` says which (GS_SOURCES)."""
    fallback, fallback_from = (world_size, 4) if world_size else (n_ranks, 5)
    sizes = [groups[name]["size"] if name in groups else None for name in inst.pg_names]
    pg_size = np.array([s or fallback for s in sizes] or [fallback], dtype=np.int64)
    pg_from = np.array([3 if s else fallback_from for s in sizes] or [0], dtype=np.int64)
    known = inst.group_size >= 1
    if inst.pg.size == 0:
        return
    if inst.gs_from.size != known.size:
        inst.gs_from = known.astype(np.int64)  # built without it: known sizes are from args
    inst.group_size = np.where(known, inst.group_size, pg_size[inst.pg])
    inst.gs_from = np.where(known, inst.gs_from, pg_from[inst.pg])
