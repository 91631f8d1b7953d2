"""Interval arithmetic on numpy arrays: unions and how much of a window they cover."""

from __future__ import annotations

import numpy as np

try:
    from . import _nesting  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's passes give the same union
    _nesting = None


class IntervalUnion:
    """The union of intervals [start, end), merged and sorted, with prefix lengths so the
    covered length inside any window is two binary searches."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        starts = np.asarray(starts, dtype=np.float64)
        ends = np.asarray(ends, dtype=np.float64)
        self.starts, self.ends = _merged(starts, ends)
        self.prefix = _prefix(self.starts, self.ends)

    @classmethod
    def of_merged(cls, starts: np.ndarray, ends: np.ndarray, prefix: np.ndarray) -> IntervalUnion:
        """A union from what one held (`starts`, `ends`, `prefix`: kept on disk), not
        merged again."""
        union = cls.__new__(cls)
        union.starts, union.ends, union.prefix = starts, ends, prefix
        return union

    def __len__(self) -> int:
        return int(self.starts.size)

    @property
    def total(self) -> float:
        return float(self.prefix[-1])

    def covered(self, lo: np.ndarray | float, hi: np.ndarray | float) -> np.ndarray:
        """Length of the union inside each window [lo, hi) (vectorised over windows)."""
        lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
        hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
        if self.starts.size == 0:
            return np.zeros(lo.shape)
        # Intervals fully inside come from the prefix sums; the two edge ones are clipped.
        first = np.searchsorted(self.ends, lo, side="right")  # first interval ending after lo
        last = np.searchsorted(self.starts, hi, side="left")  # intervals starting before hi
        total = self.prefix[np.maximum(last, first)] - self.prefix[first]
        n = self.starts.size
        has = last > first
        fi = np.minimum(first, n - 1)
        li = np.maximum(last - 1, 0)
        # Clip the first interval's start to lo and the last interval's end to hi
        # (np.maximum: what np.clip with no upper bound calls, without its Python layers;
        # this runs for every step of thousands of small ranks).
        total -= np.where(has, np.maximum(lo - self.starts[fi], 0), 0)
        total -= np.where(has, np.maximum(self.ends[li] - hi, 0), 0)
        return np.maximum(total, 0)

    def union(self, other: IntervalUnion) -> IntervalUnion:
        """Both unions' intervals merged. Each is sorted already, so they are interleaved
        by start, and merged in one pass: no scan for an order they do not have, no
        filter of empty intervals (a union holds none); the same floats."""
        starts, ends = _merged(*_interleaved(self, other))
        return IntervalUnion.of_merged(starts, ends, _prefix(starts, ends))

    def clip(self, lo: float, hi: float) -> IntervalUnion:
        return IntervalUnion(np.clip(self.starts, lo, hi), np.clip(self.ends, lo, hi))


def _prefix(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The covered length before each merged interval, and in all (the last)."""
    return np.concatenate([[0.0], np.cumsum(ends - starts)])


def _interleaved(a: IntervalUnion, b: IntervalUnion) -> tuple[np.ndarray, np.ndarray]:
    """The intervals of two unions in one array sorted by start, `a`'s first among equal
    starts: a stable sort of two sorted runs (timsort merges them in one pass)."""
    starts = np.concatenate([a.starts, b.starts])
    order = np.argsort(starts, kind="stable")
    return starts[order], np.concatenate([a.ends, b.ends])[order]


def _merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The intervals with end > start merged: sorted by start, each merged interval from
    the start of one that begins after every earlier one ended to the largest end of
    those it holds. In one pass where built (`_nesting.c`) and the starts already ascend
    (a device's kernels, a union's own), else sorted first; the same floats either way."""
    if _nesting is not None and starts.size:
        merged = _merge_native(starts, ends)
        if merged is not None:
            return merged
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    if _nesting is not None and starts.size:
        merged = _merge_native(starts, ends)
        assert merged is not None  # sorted now
        return merged
    return _merge_sorted(starts, ends)


def _merge_native(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`_nesting.merge_intervals`' union of float64 intervals, None where the kept starts
    do not ascend."""
    assert _nesting is not None
    starts, ends = np.ascontiguousarray(starts), np.ascontiguousarray(ends)
    out_starts, out_ends = np.empty(starts.size), np.empty(starts.size)
    count = _nesting.merge_intervals(starts, ends, out_starts, out_ends)
    if count < 0:
        return None
    # A copy where the union is much smaller: the arrays' unused tails go with them.
    if count < starts.size // 2:
        return out_starts[:count].copy(), out_ends[:count].copy()
    return out_starts[:count], out_ends[:count]


def _merge_sorted(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The merge in numpy passes, of intervals with end > start sorted by start."""
    if starts.size == 0:
        return np.empty(0), np.empty(0)
    running_end = np.maximum.accumulate(ends)
    # A new merged interval starts where it begins after everything before it ended.
    new = np.empty(starts.size, dtype=bool)
    new[0] = True
    new[1:] = starts[1:] > running_end[:-1]
    return starts[new], np.maximum.reduceat(ends, np.flatnonzero(new))


def weighted_capped_integral(
    starts: np.ndarray, ends: np.ndarray, values: np.ndarray, lo: float, hi: float, cap: float = 1.0
) -> float:
    """∫ min(sum of values of intervals covering t, cap) dt over [lo, hi)."""
    starts = np.clip(np.asarray(starts, dtype=np.float64), lo, hi)
    ends = np.clip(np.asarray(ends, dtype=np.float64), lo, hi)
    keep = ends > starts
    if not keep.any():
        return 0.0
    starts, ends, values = starts[keep], ends[keep], np.asarray(values, np.float64)[keep]
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([values, -values])
    order = np.argsort(times, kind="stable")
    times, deltas = times[order], deltas[order]
    level = np.cumsum(deltas)
    widths = np.diff(times)
    return float(np.sum(np.minimum(np.clip(level[:-1], 0, None), cap) * widths))
