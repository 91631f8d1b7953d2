"""An answer's numeric columns written as JSON straight from numpy, by orjson, as
`msgspec.Raw` fragments inside the answer msgspec encodes: the bytes msgspec writes for the
column's list (tests/test_json_columns.py), without a Python object a number. (A `trace`
answer's `tolist`s and their encoding were ~30 % of its CPU on a 4 GB trace.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import numpy as np
import orjson

# msgspec writes a float from 1e16 up as "1e16", orjson as "1e+16"; below it both write
# the same shortest digits. A column reaching it is made a list, as without fragments.
FIXED_BELOW = 1e16
_NUMPY = orjson.OPT_SERIALIZE_NUMPY

# Makes each cut of a column as the answer holds it: `list_parts` or `column_parts`.
Parts = Callable[[np.ndarray, Sequence[tuple[int, int]]], list[Any]]


def same_digits(values: np.ndarray) -> bool:
    """Whether orjson writes `values` as msgspec writes `values.tolist()`: integers, bools,
    and float64 below FIXED_BELOW (NaN and infinities are null in both, but a column
    with an infinity is made a list: the comparison says no)."""
    if values.dtype.kind in "iub":
        return True
    if values.dtype != np.float64:
        return False  # float32: orjson writes its own shortest digits, not float64's
    return not bool((np.abs(values) >= FIXED_BELOW).any())


def column_parts(values: np.ndarray, cuts: Sequence[tuple[int, int]]) -> list[Any]:
    """`values[a:b]` for each cut, as the answer holds it: a JSON fragment, or a list."""
    if not same_digits(values):
        return list_parts(values, cuts)
    flat = np.ascontiguousarray(values)
    return [msgspec.Raw(orjson.dumps(flat[a:b], option=_NUMPY)) for a, b in cuts]


def list_parts(values: np.ndarray, cuts: Sequence[tuple[int, int]]) -> list[Any]:
    """`values[a:b]` for each cut as lists: the column made a list once, then cut."""
    whole = values.tolist()
    return [whole[a:b] for a, b in cuts]
