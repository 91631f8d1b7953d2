"""`lexsort_head` gives what `np.lexsort(keys)[:count]` gives: the same positions in the
same order, ties (equal keys) in input order, NaN last, for every count."""

from __future__ import annotations

import numpy as np
import pytest
from kinetoscope.analysis.core.common import lexsort_head


def _keys(rng: np.random.Generator, size: int, kind: str) -> tuple[np.ndarray, ...]:
    when = rng.integers(0, 5, size).astype(np.float64)  # many ties on the second key
    if kind == "int":
        primary = -rng.integers(0, 4, size)
    elif kind == "bool":
        primary = rng.random(size) < 0.3
    else:
        primary = rng.choice([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], size)
    return when, primary


@pytest.mark.parametrize("kind", ["int", "bool", "float"])
@pytest.mark.parametrize("size", [0, 1, 2, 7, 300])
def test_lexsort_head_is_the_full_sorts_head(kind: str, size: int) -> None:
    rng = np.random.default_rng(size)
    for _ in range(20):
        keys = _keys(rng, size, kind)
        full = np.lexsort(keys)
        for count in (0, 1, 2, 3, size // 2, size - 1, size, size + 5):
            assert np.array_equal(lexsort_head(keys, count), full[: max(count, 0)])


def test_lexsort_head_all_nan_primary_falls_back() -> None:
    keys = (np.arange(10.0)[::-1], np.full(10, np.nan))
    assert np.array_equal(lexsort_head(keys, 4), np.lexsort(keys)[:4])
