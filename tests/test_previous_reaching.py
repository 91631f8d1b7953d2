"""The parent search of nested ranges (`tree_arrays.previous_reaching`): the compiled stack
algorithm (`_nesting.c`) and numpy's passes against the definition written out by brute
force, on random ranges that nest, overlap, tie and have zero length, with and without the
first candidates an index of a superset hands on (the op ranges' search)."""

from __future__ import annotations

import numpy as np
import pytest
from kinetoscope.analysis.core import tree_arrays
from kinetoscope.analysis.core.tree_arrays import next_up, previous_reaching


def brute_force(values: np.ndarray, targets: np.ndarray, start: np.ndarray | None) -> np.ndarray:
    out = np.full(values.size, -1, dtype=np.int64)
    for i in range(values.size):
        j = i - 1 if start is None else int(start[i])
        while j >= 0 and values[j] < targets[i]:
            j -= 1
        out[i] = j
    return out


def ranges(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Ends of ranges sorted by (start, longer first) as a parent search reads them: the
    values, and the targets (the end, nudged past it where the range has zero length)."""
    rng = np.random.default_rng(seed)
    start = np.sort(rng.integers(0, 60, n)).astype(np.float64)
    end = start + rng.choice([0.0, 0.5, 1.0, 3.0, 10.0, 40.0], n)
    order = np.lexsort((-end, start))
    start, end = start[order], end[order]
    targets = np.where(end > start, end, next_up(end))
    return end, targets


@pytest.mark.parametrize("seed", range(40))
def test_both_ways_give_the_definition(seed: int) -> None:
    values, targets = ranges(seed, 1 + seed * 7)
    expected = brute_force(values, targets, None)
    assert np.array_equal(previous_reaching(values, targets), expected)
    assert np.array_equal(tree_arrays._previous_reaching_passes(values, targets, None), expected)


@pytest.mark.parametrize("seed", range(20))
def test_first_candidates_from_a_superset(seed: int) -> None:
    """Every other range dropped: each one's search starts at the last kept range at or
    before its parent among all of them (nothing between reaches it)."""
    values, targets = ranges(seed, 5 + seed * 11)
    parent = brute_force(values, targets, None)
    keep = np.arange(values.size) % 2 == 0
    last_kept = np.cumsum(keep) - 1
    start = np.where(parent >= 0, last_kept[np.maximum(parent, 0)], -1)[keep]
    expected = brute_force(values[keep], targets[keep], None)
    assert np.array_equal(previous_reaching(values[keep], targets[keep], start), expected)
    passes = tree_arrays._previous_reaching_passes(values[keep], targets[keep], start)
    assert np.array_equal(passes, expected)


def test_compiled_search_is_built() -> None:
    """The wheel and the test set-up build it; without it the numpy passes answer."""
    assert tree_arrays._nesting is not None
