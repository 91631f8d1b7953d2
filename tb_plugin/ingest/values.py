"""Reading numbers out of trace values, by one rule everywhere.

Kineto writes ids, ranks, sizes and sequence numbers as JSON ints, but other writers (and
damaged files) give floats, numeric strings or hex strings; a view must read the same
value the same way wherever it looks at it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_INT64_LIMIT = 2**63


def lenient_int(value: Any) -> int | None:
    """`value` as an int64, or None when it is not a number.

    Ints within int64; finite floats truncated toward zero; strings holding a decimal
    number ("12", " 12 ", "1.0") or a hex number ("0x1f"). Booleans are not numbers.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -_INT64_LIMIT <= value < _INT64_LIMIT else None
    if isinstance(value, float):
        return int(value) if value == value and abs(value) < _INT64_LIMIT else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        number = int(text, 16) if text.lower().startswith("0x") else int(float(text))
    except (ValueError, OverflowError):
        return None
    return number if -_INT64_LIMIT <= number < _INT64_LIMIT else None


def lenient_floats(values: list[Any], default: float = np.nan) -> np.ndarray:
    """A column of floats: `default` for a value that is not a number."""
    try:
        out = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        out = np.array([_to_float(v, default) for v in values], dtype=np.float64)
    # -0 and -0.0 read as 0.0 (IEEE: -0.0 + 0.0 is +0.0), as the compiled scanner does.
    out += 0.0
    return out


def _to_float(v: Any, default: float) -> float:
    if v is None:
        return default
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def lenient_ints(values: list[Any], default: int = -1) -> np.ndarray:
    """A column of int64 by `lenient_int`: `default` for a value that is not a number."""
    try:
        return np.array(values, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.array([to_int(v, default) for v in values], dtype=np.int64)


def to_int(v: Any, default: int) -> int:
    number = lenient_int(v)
    return default if number is None else number
