"""The same collective on each rank: every rank's collective instances as flat arrays on
one clock, matched across ranks (by `Seq`, else by occurrence with an alignment shift),
with each instance's synchronizing wait and transfer time (the rules: view.py's doc)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .summary import RankSummary
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
    # per rank (index), its trace time minus the aligned time: aligned - offset = trace time
    offset: np.ndarray = field(default_factory=lambda: np.zeros(0))
    wait: np.ndarray = field(default_factory=lambda: np.zeros(0))
    transfer: np.ndarray = field(default_factory=lambda: np.zeros(0))
    matched: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    match: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def instances(summaries: list[RankSummary]) -> Instances:
    kind_names = sorted({k for s in summaries for k in s.collectives.kinds})
    pg_names = sorted({p for s in summaries for p in s.collectives.pgs})
    kind_id = {k: i for i, k in enumerate(kind_names)}
    pg_id = {p: i for i, p in enumerate(pg_names)}
    origins = [s.time_origin_us for s in summaries]
    reference = min(origins) if origins else 0.0
    names = ("rank", "kind", "pg", "seq", "start", "end", "bytes", "gs", "step", "dst", "src")
    cols: dict[str, list[np.ndarray]] = {k: [] for k in names}
    for r, s in enumerate(summaries):
        t = s.collectives
        offset = s.time_origin_us - reference  # exact: origins are whole microseconds
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
        cols["step"].append(t.column("step"))
        cols["dst"].append(t.column("dst"))
        cols["src"].append(t.column("src"))

    def cat(name: str, dtype: str) -> np.ndarray:
        parts = cols[name]
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

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
        offset=np.array([o - reference for o in origins], dtype=np.float64),
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
    for block in np.split(order, np.flatnonzero(np.diff(pair[order])) + 1):
        if (inst.seq[block] >= 0).all():
            value[block] = inst.seq[block]
            by_seq[block] = 1
            continue
        per_rank = np.split(block, np.flatnonzero(np.diff(inst.rank[block])) + 1)
        reference = max(per_rank, key=len)
        ref_end = inst.end[reference]
        ref_order = np.argsort(ref_end, kind="stable")
        for idx in per_rank:
            shift = 0 if idx is reference else _alignment(inst.end[idx], ref_end, ref_order)
            value[idx] = np.arange(idx.size) + shift
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


def _alignment(own_end: np.ndarray, ref_end: np.ndarray, order: np.ndarray) -> int:
    """How many places a rank's n-th collective is behind the reference rank's: ranks'
    traces may start at different collectives (a profiler window opened mid-step), but the
    same collective ends at about the same time on every rank. The most common index
    difference to the reference collective ending nearest, kept only when it fits the end
    times better than no shift. `order` sorts `ref_end`."""
    ref_sorted = ref_end[order]
    pos = np.clip(np.searchsorted(ref_sorted, own_end), 1, max(ref_sorted.size - 1, 1))
    if ref_sorted.size == 1:
        nearest = np.zeros(own_end.size, dtype=np.int64)
    else:
        left_closer = (own_end - ref_sorted[pos - 1]) <= (ref_sorted[pos] - own_end)
        nearest = np.where(left_closer, pos - 1, pos)
    diff = order[nearest] - np.arange(own_end.size)
    low = int(diff.min())
    mode = int(np.bincount(diff - low).argmax()) + low

    def misfit(shift: int) -> float:
        i = np.arange(own_end.size)
        j = i + shift
        ok = (j >= 0) & (j < ref_end.size)
        return float(np.median(np.abs(own_end[ok] - ref_end[j[ok]]))) if ok.any() else np.inf

    return mode if mode != 0 and misfit(mode) < misfit(0) else 0


def group_sizes(
    inst: Instances,
    summaries: list[RankSummary],
    groups: dict[str, ProcessGroupView],
    world_size: int | None,
    n_ranks: int,
) -> None:
    fallback = world_size or n_ranks
    pg_size = np.array(
        [
            (groups[name]["size"] or fallback) if name in groups else fallback
            for name in inst.pg_names
        ]
        or [fallback],
        dtype=np.int64,
    )
    known = inst.group_size >= 1
    inst.group_size = np.where(known, inst.group_size, pg_size[inst.pg] if inst.pg.size else 0)
