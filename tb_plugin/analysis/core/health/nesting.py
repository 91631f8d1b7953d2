"""Which slices of a lane cross an earlier one: the test of `overlapping_events`, in
numpy passes over all lanes at once (a heap of open ends per lane, a Python loop, took
~0.3 s per million slices).

Slices sorted by (lane, start, longer first, file order); `low = start + tol` and
`high = end - tol`. A heap of the ends still open would drop those ending by `low` and
call the slice crossing when the earliest end left is below `high`: the same as

    slice i crosses  <=>  some earlier slice j of its lane has  low_i < end_j < high_i.

Found by walking back over the earlier slices that end after `low_i` (the latest first,
as the parent search of `tree_arrays` walks): one that ends below `high_i` crosses it;
one that ends in `[high_i, end_i)` (a child ending within the tolerance after its
parent) is passed over; the first that ends at `end_i` or later, `k`, ends the walk, for
no slice before `k` can be a witness for i unless it is one for `k` too (it ends after
`low_k <= low_i` and before `high_i <= high_k`). So i crosses exactly when the walk
finds a witness, or stopped at a `k` that crosses and the walk on from before `k` finds
one: rounds until no slice's answer changes (crossings are rare; one round on a healthy
trace). The compiled walk (`_nesting.c`) takes the slices in order instead, so the answer
of a slice that stops a walk is known when the walk reaches it: the same answers."""

from __future__ import annotations

import numpy as np

from ..block_search import last_at_least
from ..tree_arrays import _nesting, next_up, previous_reaching


def lane_crossings(lane: np.ndarray, start: np.ndarray, end: np.ndarray, tol: float) -> np.ndarray:
    """Per slice (sorted by lane, start, -end, file order; finite times), whether it
    crosses an earlier slice of its lane by more than `tol` each side."""
    crossing = np.zeros(start.size, dtype=bool)
    if start.size < 2:
        return crossing
    if _nesting is not None and start.dtype == np.float64 and end.dtype == np.float64:
        # The same walks in one pass in order (_nesting.c): a slice's walk asks whether
        # an earlier one crosses only once that one is answered.
        new_lane = np.ones(start.size, dtype=bool)
        np.not_equal(lane[1:], lane[:-1], out=new_lane[1:])
        if _nesting.lane_crossings(
            new_lane, np.ascontiguousarray(start), np.ascontiguousarray(end), tol, crossing
        ):
            return crossing
    return _lane_crossings_passes(lane, start, end, tol)


def _lane_crossings_passes(
    lane: np.ndarray, start: np.ndarray, end: np.ndarray, tol: float
) -> np.ndarray:
    """`lane_crossings` in numpy passes: the walks of all slices at once, in rounds."""
    crossing = np.zeros(start.size, dtype=bool)
    walks = _Walks(lane, start, end, tol)
    stop = np.full(start.size, -1, dtype=walks.seq.dtype)  # a walk met one ending no earlier
    walk = walks.long  # a shorter slice crosses nothing
    at = walks.latest_open(walk)
    while walk.size:
        walks.walk_back(walk, at, crossing, stop)
        # Slices whose walk stopped at one that crosses walk on from before it.
        walk = np.flatnonzero(~crossing & (stop >= 0))
        walk = walk[crossing[stop[walk]]]
        at = walks.open_before(walk, stop[walk])
        stop[walk] = -1
    return crossing


class _Walks:
    """The slices of every lane as one sequence, a sentinel (+inf) before each lane's
    first slice ending a walk there; per slice `end` and `high` (end - tol); `long`: the
    slices whose high is above their low (start + tol). Positions are int32 where they
    fit (the arrays are a lane's, held through the walks)."""

    def __init__(self, lane: np.ndarray, start: np.ndarray, end: np.ndarray, tol: float):
        n = start.size
        self.end = end
        self.high = end - tol
        first = np.ones(n, dtype=bool)
        first[1:] = lane[1:] != lane[:-1]
        size = n + int(first.sum())
        index = np.dtype(np.int32 if size < 1 << 31 else np.int64)
        # Each slice's place in the sequence.
        self.seq: np.ndarray = np.cumsum(first, dtype=index) + np.arange(n, dtype=index)
        del first
        low = start + tol
        self.long = np.flatnonzero(self.high > low)
        self.values = np.full(size, np.inf)
        # max(end, low): the same answers (no earlier slice of the lane has a later low),
        # and every target at most just above its own value, as `previous_reaching` asks.
        self.values[self.seq] = np.maximum(end, low)
        self.targets = np.full(size, np.inf)
        self.targets[self.seq] = next_up(low)  # reaching it: ending after low
        del low
        self.slice_at = np.full(size, -1, dtype=index)  # -1: a sentinel
        self.slice_at[self.seq] = np.arange(n, dtype=index)

    def latest_open(self, slices: np.ndarray) -> np.ndarray:
        """Per slice of `slices`, the latest earlier one of its lane ending after its low
        (as a sequence position; a sentinel for none)."""
        return previous_reaching(self.values, self.targets)[self.seq[slices]]

    def open_before(self, slices: np.ndarray, before: np.ndarray) -> np.ndarray:
        """Per slice, the latest one before slice `before` ending after its low."""
        return last_at_least(self.values, self.seq[before] - 1, self.targets[self.seq[slices]])

    def walk_back(
        self, walk: np.ndarray, at: np.ndarray, crossing: np.ndarray, stop: np.ndarray
    ) -> None:
        """Walk each slice in `walk` back from `at` (sequence positions of earlier slices
        ending after its low; a sentinel or -1: none) to a witness (`crossing`), a slice
        ending no earlier than it (`stop`), or none."""
        while walk.size:
            k = np.where(at >= 0, self.slice_at[at], -1)
            walk, k = walk[k >= 0], k[k >= 0]
            witness = self.end[k] < self.high[walk]
            crossing[walk[witness]] = True
            passed = ~witness & (self.end[k] < self.end[walk])  # within the tolerance
            ends_later = ~witness & ~passed
            stop[walk[ends_later]] = k[ends_later]
            walk, k = walk[passed], k[passed]
            at = self.open_before(walk, k)
