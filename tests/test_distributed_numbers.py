"""The distributed view's numbers computed by column give what one at a time gives: the
rounding (`rounding.rounded_all` against Python's `round`) and the clock offsets' per-rank
quantiles (against numpy's median and percentile of each rank's values)."""

from __future__ import annotations

import math

import numpy as np
from kinetoscope.analysis.distributed.clock_skew import _rank_quantiles
from kinetoscope.analysis.distributed.rounding import rounded, rounded_all


def same_floats(got: list[float], want: list[float]) -> bool:
    """Equal as floats, zeros of the same sign, NaN where NaN."""
    return len(got) == len(want) and all(
        (math.isnan(g) and math.isnan(w)) or (g == w and math.copysign(1, g) == math.copysign(1, w))
        for g, w in zip(got, want)
    )


def test_rounded_all_is_round_to_three_decimals() -> None:
    rng = np.random.default_rng(7)
    values: list[float] = []
    for scale in (1e-4, 1e-2, 1.0, 1e3, 1e6, 1e9, 1e13, 1e17):
        values += rng.normal(0.0, scale, 20_000).tolist()
    whole = rng.integers(-(10**9), 10**9, 20_000).tolist()
    halves = [(k + 0.5) / 1000 for k in whole]  # decimal ties: the product lands near .5
    values += halves
    values += np.nextafter(np.array(halves), np.inf).tolist()
    values += np.nextafter(np.array(halves), -np.inf).tolist()
    values += [k / 1000 for k in range(-20_000, 20_000)]
    values += [k * 0.0005 for k in range(-20_000, 20_000)]
    values += [0.0, -0.0, -0.0004, 2.675, 1.0005, 0.0005, -0.0005, 5e-324, 1e300, 2.0**60]
    values += [math.inf, -math.inf, math.nan]
    assert same_floats(rounded_all(values), [round(v, 3) for v in values])
    assert same_floats(rounded_all(np.array(values)), [rounded(v) for v in values])
    assert rounded_all([]) == []


def test_rank_quantiles_are_numpys_rank_by_rank() -> None:
    rng = np.random.default_rng(3)
    counts = rng.choice([0, 1, 2, 3, 7, 40, 41], size=300)
    values = rng.normal(0.0, 50.0, int(counts.sum())).round(1)  # ties among the values too
    median, low, high = _rank_quantiles(values, counts)
    first = 0
    for r, n in enumerate(counts.tolist()):
        own = values[first : first + n]
        first += n
        if n == 0:
            assert math.isnan(median[r]) and math.isnan(low[r]) and math.isnan(high[r])
            continue
        q25, q75 = np.percentile(own, [25, 75])
        assert (median[r], low[r], high[r]) == (np.median(own), q25, q75)
