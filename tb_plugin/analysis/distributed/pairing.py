"""The same call on every rank when the trace does not number its calls (no `Seq`).

Traces of one job may hold different subsets of its calls (sampled or filtered ranks,
profiler windows opened at different collectives), so the n-th all_reduce of one rank
need not be the n-th of another. Without a sequence number a call is told by what it is
and when it ended: a collective completes together, so the same call ends at nearly the
same wall time on every rank that ran it, whatever each rank waited.

Per rank, a clock correction `delta` (its ends minus the reference rank's, the median over
the instances of unrooted types whose bytes are the same on every rank, paired by
occurrence aligned by nearest end, `occurrence_shift`, and of equal bytes) and a tolerance:
`MIN_TOLERANCE_US` (10 ms: far above the microseconds to a few milliseconds by which one
call's ends differ across ranks, a loaded host's CPU collectives included, and far below
the 63 to 254 ms by which the different calls of the corpus' sampled ranks differ), or
`SPREAD_FACTOR` times the median distance of those ends from `delta` when larger.

Then, per (process group, type): the rank with the most instances
opens one call per instance; every other rank in turn pairs its instances with the
reference rank's by occurrence (aligned by nearest end), keeping a pair only when the
bytes agree (types whose bytes are the same on every rank, `rules.same_bytes_on_every_rank`;
unknown bytes agree with anything) and the clock-corrected ends are within the tolerance;
an instance left over goes to the call still free whose end is nearest to its own, under
the same two conditions (one instance a call, the nearest wins), else it opens a call of
its own. So calls of different sizes, or whose ends disagree far beyond the ranks'
spread, are never paired, and calls close together keep their order.

Rooted types (broadcast, reduce: `rules.is_rooted_collective`) are the exception: their
root may finish before the others arrive, so their ends need not meet (a rank that comes
late may end nearer the root's next call than its own). They are paired by their place in
a numbered step where both ranks ran as many of them, the others by occurrence, shifted as
the step pairs are (their most common shift) or, without any, aligned by nearest end; a
pair whose bytes differ, or that would take a call already paired by step, is refused.
"""

from __future__ import annotations

import numpy as np

from ..core.rules import is_rooted_collective, same_bytes_on_every_rank

MIN_TOLERANCE_US = 10_000.0  # see the module doc
SPREAD_FACTOR = 10.0


def occurrence_shift(own_end: np.ndarray, ref_end: np.ndarray) -> int:
    """How many places a rank's n-th instance is behind the reference rank's: ranks'
    traces may start at different collectives, but the same collective ends at about the
    same time on every rank. The most common index difference to the reference instance
    ending nearest, kept only when it fits the end times better than no shift."""
    order = np.argsort(ref_end, kind="stable")
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


def _agree(a: np.ndarray, b: np.ndarray, same_bytes: bool) -> np.ndarray:
    """Whether instances of bytes `a` and `b` may be one call (-1: unknown)."""
    if not same_bytes:
        return np.ones(np.broadcast(a, b).shape, dtype=bool)
    return (a < 0) | (b < 0) | (a == b)


class Pairing:
    """Per-rank clock corrections and tolerances of one job's unnumbered instances."""

    def __init__(
        self,
        rank: np.ndarray,
        end: np.ndarray,
        nbytes: np.ndarray,
        blocks: list[tuple[str, np.ndarray]],
    ) -> None:
        """`blocks`: per (process group, type) without `Seq`, its type and its instances
        sorted by (rank, start)."""
        n_ranks = int(rank.max()) + 1 if rank.size else 0
        counts = np.bincount(rank[np.concatenate([b for _, b in blocks])], minlength=n_ranks)
        self.reference = int(np.argmax(counts)) if blocks else 0
        diffs: list[list[np.ndarray]] = [[] for _ in range(n_ranks)]
        for kind, block in blocks:
            if is_rooted_collective(kind) or not same_bytes_on_every_rank(kind):
                continue  # ends need not meet; bytes cannot tell calls apart
            per_rank = _split_by_rank(rank, block)
            ref = per_rank.get(self.reference)
            if ref is None:
                continue
            for r, idx in per_rank.items():
                if r == self.reference:
                    continue
                i, j = _occurrence_pairs(end[idx], end[ref])
                ok = _agree(nbytes[idx[i]], nbytes[ref[j]], True)
                diffs[r].append(end[idx[i[ok]]] - end[ref[j[ok]]])
        self.delta = np.zeros(n_ranks)
        self.tolerance = np.full(n_ranks, MIN_TOLERANCE_US)
        for r, parts in enumerate(diffs):
            d = np.concatenate(parts) if parts else np.zeros(0)
            if d.size:
                self.delta[r] = float(np.median(d))
                spread = float(np.median(np.abs(d - self.delta[r])))
                self.tolerance[r] = max(MIN_TOLERANCE_US, SPREAD_FACTOR * spread)

    def calls(
        self,
        kind: str,
        block: np.ndarray,
        rank: np.ndarray,
        end: np.ndarray,
        nbytes: np.ndarray,
        step_number: np.ndarray,
    ) -> np.ndarray:
        """A call number per instance of `block` (one process group and type)."""
        per_rank = _split_by_rank(rank, block)
        same = same_bytes_on_every_rank(kind)
        if is_rooted_collective(kind):
            return _rooted_calls(per_rank, end, nbytes, step_number, same)
        ranks = sorted(per_rank, key=lambda r: (-per_rank[r].size, r))
        ref = per_rank[ranks[0]]
        call_end = end[ref] - self.delta[ranks[0]]
        call_bytes = nbytes[ref]
        got = {ranks[0]: np.arange(ref.size)}
        ref_places = _step_places(step_number[ref])
        for r in ranks[1:]:
            idx = per_rank[r]
            own = end[idx] - self.delta[r]
            call = np.full(idx.size, -1, dtype=np.int64)
            a, b = _step_pairs(_step_places(step_number[idx]), ref_places)
            keep = _agree(nbytes[idx[a]], call_bytes[b], same)
            a, b = a[keep], b[keep]
            if a.size and np.median(np.abs(own[a] - call_end[b])) > self.tolerance[r]:
                a, b = a[:0], b[:0]  # the step numbers do not name the same iterations
            call[a] = b
            taken = np.zeros(call_end.size, dtype=bool)
            taken[b] = True
            i, j = _occurrence_pairs(end[idx], end[ref])
            ok = _agree(nbytes[idx[i]], call_bytes[j], same) & (call[i] < 0) & ~taken[j]
            ok &= np.abs(own[i] - call_end[j]) <= self.tolerance[r]
            call[i[ok]] = j[ok]
            taken[j[ok]] = True
            rest = np.flatnonzero(call < 0)
            free = np.flatnonzero(~taken)
            if rest.size and free.size:
                near = _nearest_calls(
                    own[rest], nbytes[idx[rest]], call_end[free], call_bytes[free], same
                )
                hit = near >= 0
                hit[hit] = np.abs(own[rest[hit]] - call_end[free[near[hit]]]) <= self.tolerance[r]
                call[rest[hit]] = free[near[hit]]
            fresh = np.flatnonzero(call < 0)
            call[fresh] = call_end.size + np.arange(fresh.size)
            call_end = np.concatenate([call_end, own[fresh]])
            call_bytes = np.concatenate([call_bytes, nbytes[idx[fresh]]])
            got[r] = call
        return np.concatenate([got[r] for r in per_rank])  # block order


def _split_by_rank(rank: np.ndarray, block: np.ndarray) -> dict[int, np.ndarray]:
    """`block` (sorted by rank, then start) as each rank's instances."""
    parts = np.split(block, np.flatnonzero(np.diff(rank[block])) + 1)
    return {int(rank[p[0]]): p for p in parts if p.size}


def _step_places(steps: np.ndarray) -> np.ndarray:
    """Per instance in a numbered step (positions, in start order within a step): its
    position, its step's number, how many of them that step holds, its place there."""
    at = np.flatnonzero(steps >= 0)
    at = at[np.argsort(steps[at], kind="stable")]
    number = steps[at]
    first = np.flatnonzero(np.r_[True, number[1:] != number[:-1]]) if at.size else at
    count = np.diff(np.r_[first, at.size])
    place = np.arange(at.size) - np.repeat(first, count)
    return np.stack([at, number, np.repeat(count, count), place])


def _step_pairs(own: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (own, reference) of the instances that are the k-th of the same numbered
    step on both ranks (`_step_places` of each), in the steps where both ran as many of
    them: a process group's calls are issued in one order on every rank, so these are the
    same call whatever their ends say (a loaded host records ends tens of milliseconds
    apart)."""
    width = int(max(own[2].max(initial=0), ref[2].max(initial=0))) + 1

    def key(places: np.ndarray) -> np.ndarray:
        return (places[1] * width + places[2]) * width + places[3]

    _, i, j = np.intersect1d(key(own), key(ref), return_indices=True)
    return own[0][i], ref[0][j]


def _occurrence_pairs(own_end: np.ndarray, ref_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (own, reference) paired by occurrence, shifted by `occurrence_shift`."""
    shift = occurrence_shift(own_end, ref_end)
    i = np.arange(own_end.size)
    j = i + shift
    ok = (j >= 0) & (j < ref_end.size)
    return i[ok], j[ok]


def _nearest_calls(
    own: np.ndarray, own_bytes: np.ndarray, call_end: np.ndarray, call_bytes: np.ndarray, same: bool
) -> np.ndarray:
    """Per own instance, the call ending nearest among those whose bytes agree, one
    instance a call (the nearest keeps it); -1 for none."""
    best = np.full(own.size, -1, dtype=np.int64)
    if call_end.size == 0:
        return best
    for size in np.unique(own_bytes).tolist():
        mine = np.flatnonzero(own_bytes == size)
        allowed = np.flatnonzero(_agree(np.full(call_end.size, size), call_bytes, same))
        if allowed.size == 0:
            continue
        order = allowed[np.argsort(call_end[allowed], kind="stable")]
        ends = call_end[order]
        pos = np.clip(np.searchsorted(ends, own[mine]), 1, max(ends.size - 1, 1))
        if ends.size == 1:
            best[mine] = order[0]
            continue
        left = (own[mine] - ends[pos - 1]) <= (ends[pos] - own[mine])
        best[mine] = order[np.where(left, pos - 1, pos)]
    chosen = np.flatnonzero(best >= 0)
    distance = np.abs(own[chosen] - call_end[best[chosen]])
    by_call = chosen[np.lexsort((distance, best[chosen]))]
    first = np.r_[True, np.diff(best[by_call]) != 0]
    best[by_call[~first]] = -1  # another instance of the rank is nearer that call
    return best


def _rooted_calls(
    per_rank: dict[int, np.ndarray],
    end: np.ndarray,
    nbytes: np.ndarray,
    step_number: np.ndarray,
    same: bool,
) -> np.ndarray:
    """Rooted types: by place in step, else by occurrence (`_rooted_places`), refusing
    different bytes."""
    reference = max(per_rank.values(), key=len)
    ref_places = _step_places(step_number[reference])
    out = []
    lone = reference.size + 1_000_000  # refused instances: calls of their own
    for idx in per_rank.values():
        if idx is reference:
            value, refused = np.arange(idx.size), np.zeros(idx.size, dtype=bool)
        else:
            value, refused = _rooted_places(idx, reference, end, step_number, ref_places)
        j = np.clip(value, 0, reference.size - 1)
        inside = (value >= 0) & (value < reference.size)
        ok = ~refused & (~inside | _agree(nbytes[idx], nbytes[reference[j]], same))
        value = np.where(ok, value, lone + np.arange(idx.size))
        lone += idx.size
        out.append(value)
    return np.concatenate(out)  # block order


def _rooted_places(
    idx: np.ndarray,
    reference: np.ndarray,
    end: np.ndarray,
    step_number: np.ndarray,
    ref_places: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per instance of a rank (`idx`), the reference position of its call, and whether
    it is refused: the k-th of a numbered step on both ranks is that place's call; the
    others by occurrence, shifted by the step pairs' most common shift (without any, by
    `occurrence_shift` of the ends), refused where that takes a call paired by step."""
    a, b = _step_pairs(_step_places(step_number[idx]), ref_places)
    if a.size:
        shift_of = b - a
        low = int(shift_of.min())
        shift = int(np.bincount(shift_of - low).argmax()) + low
    else:
        shift = occurrence_shift(end[idx], end[reference])
    value = np.arange(idx.size) + shift
    taken = np.zeros(reference.size, dtype=bool)
    taken[b] = True
    inside = (value >= 0) & (value < reference.size)
    refused = inside & taken[np.clip(value, 0, reference.size - 1)]
    value[a] = b
    refused[a] = False
    return value, refused
