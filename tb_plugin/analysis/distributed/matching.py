"""The same collective on each rank: every rank's collective instances as flat arrays on
one clock, matched across ranks (by `Seq`, else by type, bytes and end time: pairing.py),
with each instance's synchronizing wait and transfer time (the rules: view.py's doc)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .pairing import Pairing
from .summary import CollectiveTable, RankSummary
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
    # per rank (index), its trace time minus the aligned time: aligned - offset = trace time
    offset: np.ndarray = field(default_factory=lambda: np.zeros(0))
    wait: np.ndarray = field(default_factory=lambda: np.zeros(0))
    transfer: np.ndarray = field(default_factory=lambda: np.zeros(0))
    matched: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    match: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def instances(summaries: list[RankSummary]) -> Instances:
    return instances_of([s.collectives for s in summaries], [s.time_origin_us for s in summaries])


def instances_of(tables: list[CollectiveTable], origins: list[float]) -> Instances:
    """Every rank's collectives (`tables[r]`, its trace clock starting at `origins[r]`) as
    one set of instances on the earliest origin's clock."""
    kind_names = sorted({k for t in tables for k in t.kinds})
    pg_names = sorted({p for t in tables for p in t.pgs})
    kind_id = {k: i for i, k in enumerate(kind_names)}
    pg_id = {p: i for i, p in enumerate(pg_names)}
    reference = min(origins) if origins else 0.0
    names = (
        "rank",
        "kind",
        "pg",
        "seq",
        "start",
        "end",
        "bytes",
        "gs",
        "gsf",
        "step",
        "dst",
        "src",
    )
    cols: dict[str, list[np.ndarray]] = {k: [] for k in names}
    for r, (t, origin) in enumerate(zip(tables, origins)):
        offset = origin - reference  # exact: origins are whole microseconds
        kmap = np.array([kind_id[k] for k in t.kinds] or [0], dtype=np.int64)
        pmap = np.array([pg_id[p] for p in t.pgs] or [0], dtype=np.int64)
        cols["rank"].append(np.full(t.count, r, dtype=np.int64))
        cols["kind"].append(kmap[t.column("kind")])
        cols["pg"].append(pmap[t.column("pg")])
        cols["seq"].append(t.column("seq"))
        cols["start"].append(t.column("start_us") + offset)
        cols["end"].append(t.column("end_us") + offset)
        cols["bytes"].append(t.column("nbytes"))
        cols["gs"].append(t.column("group_size"))
        cols["gsf"].append(t.column("gs_from"))
        cols["step"].append(t.column("step"))
        cols["dst"].append(t.column("dst"))
        cols["src"].append(t.column("src"))

    cat = functools.partial(_cat, cols)
    return Instances(
        kind_names=kind_names,
        pg_names=pg_names,
        rank=cat("rank", "i8"),
        kind=cat("kind", "i8"),
        pg=cat("pg", "i8"),
        seq=cat("seq", "i8"),
        start=cat("start", "f8"),
        end=cat("end", "f8"),
        nbytes=cat("bytes", "f8"),
        group_size=cat("gs", "i8"),
        step=cat("step", "i8"),
        dst=cat("dst", "i8"),
        src=cat("src", "i8"),
        gs_from=cat("gsf", "i8"),
        offset=np.array([o - reference for o in origins], dtype=np.float64),
    )


def _cat(cols: dict[str, list[np.ndarray]], name: str, dtype: str) -> np.ndarray:
    parts = cols[name]
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)


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
        pairing = Pairing(inst.rank, inst.end, inst.nbytes, unnumbered)
        for kind, block in unnumbered:
            value[block] = pairing.calls(kind, block, inst.rank, inst.end, inst.nbytes)
    value -= value.min()
    key = (pair * 2 + by_seq) * (int(value.max()) + 1) + value
    _, match = np.unique(key, return_inverse=True)
    match = match.ravel()
    inst.match = match
    members = np.bincount(match)
    last_start = np.full(members.size, -np.inf)
    np.maximum.at(last_start, match, inst.start)
    inst.matched = members[match] >= 2
    wait = np.clip(last_start[match] - inst.start, 0, duration)
    inst.wait = np.where(inst.matched, wait, 0.0)
    inst.transfer = duration - inst.wait


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
