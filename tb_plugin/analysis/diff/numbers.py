"""One compared number: base, target, delta and delta %, where unknown is not zero."""

from __future__ import annotations

import math
from typing import Any

from .types import Compared


def known(value: Any) -> float | None:
    """A number of a view as a float; None (unknown) for None and non-finite values."""
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def rounded(value: float, digits: int) -> float:
    """`value` rounded, with no negative zero."""
    return round(value, digits) + 0.0


def compare(base: Any, target: Any) -> Compared:
    """Base and target as given (None: unknown); delta rounded to 3 decimals, delta % to 2,
    both None when a side is unknown, delta % also when the base is 0."""
    b, t = known(base), known(target)
    delta = None if b is None or t is None else rounded(t - b, 3)
    pct = None if delta is None or not b else rounded(100.0 * (t - b) / b, 2)  # type: ignore[operator]
    return {"base": b, "target": t, "delta": delta, "delta_pct": pct}


def changed(numbers: list[Compared]) -> bool:
    """Whether any of the numbers differs: a delta that is not 0, or one side known only."""
    return any(
        n["delta"] not in (0, None) or (n["base"] is None) != (n["target"] is None) for n in numbers
    )
