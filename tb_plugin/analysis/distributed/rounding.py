"""The distributed view's numbers to 3 decimals (µs to the nanosecond), by Python's own
`round(x, 3)`, one number or a whole column at once.

A view of 2,048 ranks rounds ~450,000 step numbers; `round` one at a time took a fifth of
its time. `rounded_all` gives exactly what `round(float(x), 3)` gives: `round` picks the
integer k nearest to the exact x * 1000 (ties to even) and answers the double nearest to
k / 1000, which is what dividing k by 1000.0 gives (both exact, the division correctly
rounded). Only the product x * 1000 is rounded in floating point, and it can land on the
other side of a half only when it lies within a few units in the last place of one: those
numbers, and the huge or non-finite ones, are rounded by `round` itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DIGITS = 3
_SCALE = 10.0**DIGITS
_EXACT_BELOW = 2.0**50  # |x * 1000| under this: k and the product's ulp stay exact


def rounded(x: float) -> float:
    """`x` to 3 decimals (the one rule of the view's numbers)."""
    return round(float(x), DIGITS)


def rounded_all(values: np.ndarray | Sequence[float]) -> list[float]:
    """`[rounded(x) for x in values]`, the same floats, computed by column."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return []
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf: rounded by `round`
        scaled = x * _SCALE
        frac = scaled - np.floor(scaled)
        near_half = np.abs(frac - 0.5) <= 4 * np.spacing(np.abs(scaled))
        doubtful = near_half | ~(np.abs(scaled) < _EXACT_BELOW)
        out = np.rint(scaled) / _SCALE
    if doubtful.any():
        at = np.flatnonzero(doubtful)
        out[at] = [round(v, DIGITS) for v in x[at].tolist()]
    result: list[float] = out.tolist()
    return result
