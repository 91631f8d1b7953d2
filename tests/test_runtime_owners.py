"""`runtime_owners._match_pairs`: the first item with a query's (thread, id), -1 when none
and for ids below 1, whether the items' keys ascend already (the sort skipped) or not;
checked against a dictionary of first items."""

from __future__ import annotations

import numpy as np
import pytest
from kinetoscope.analysis.core.runtime_owners import _match_pairs


def _first_items(
    key_a: np.ndarray, key_b: np.ndarray, q_a: np.ndarray, q_b: np.ndarray
) -> list[int]:
    table: dict[tuple[int, int], int] = {}
    for i, (a, b) in enumerate(zip(key_a.tolist(), key_b.tolist())):
        if b > 0:
            table.setdefault((a, b), i)
    return [table.get((a, b), -1) for a, b in zip(q_a.tolist(), q_b.tolist())]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("ascending", [True, False])
def test_match_pairs_is_the_first_item_of_each_key(seed: int, ascending: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    key_a = np.sort(rng.integers(0, 4, n)).astype(np.int64) * 1000 + 7
    key_b = rng.integers(-1, 40, n).astype(np.int32)  # repeats: the first one wins
    if ascending:
        key_b = np.sort(key_b)  # with one thread or sorted per thread below
        for t in np.unique(key_a):
            mine = key_a == t
            key_b[mine] = np.sort(key_b[mine])
    q = int(rng.integers(0, 200))
    q_a = rng.choice(np.unique(key_a).tolist() + [3], q).astype(np.int64)
    q_b = rng.integers(-1, 45, q).astype(np.int32)
    got = _match_pairs(key_a, key_b, q_a, q_b)
    assert got.dtype == np.int64
    assert got.tolist() == _first_items(key_a, key_b, q_a, q_b)
