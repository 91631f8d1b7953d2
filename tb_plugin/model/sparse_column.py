"""A model column that few rows have a value in, held as those rows and their values.

A kernel's launch figures (`blocks per SM`, `est. achieved occupancy %`) are in kernel
events only: a few percent of a trace's rows (3 % of a 253 MB H100 trace's 925k rows,
12 % of a 259 MB V100 trace's), every other row NaN. A value per row held 7.4 MB of NaN
there for two columns read only at kernel rows; as rows and values they hold 0.5 MB.
Values read back (`take`, `dense`) are the dense column's, in its dtype."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Column name → the value of the rows that have none (the dense column's missing value).
SPARSE_COLUMNS: dict[str, float] = {"blocks_per_sm": np.nan, "occupancy": np.nan}


@dataclass(frozen=True)
class SparseColumn:
    """`values[i]` is row `rows[i]`'s (rows ascending, the file's order); every other row
    of the `size` rows has `fill`."""

    rows: np.ndarray
    values: np.ndarray
    fill: float
    size: int

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The values of `rows` (model row indices, in any order), as the dense column's
        `column[rows]`."""
        rows = np.asarray(rows)
        out = np.full(rows.shape, self.fill, dtype=self.values.dtype)
        if self.rows.size == 0 or rows.size == 0:
            return out
        at = np.searchsorted(self.rows, rows)
        np.minimum(at, self.rows.size - 1, out=at)
        hit = self.rows[at] == rows
        out[hit] = self.values[at[hit]]
        return out

    def dense(self) -> np.ndarray:
        """The whole column, a value per row (made anew: for a notebook's frame)."""
        out = np.full(self.size, self.fill, dtype=self.values.dtype)
        out[self.rows] = self.values
        return out

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.values.nbytes)


def has_value(values: np.ndarray, fill: float) -> np.ndarray:
    """Where `values` differ from `fill` (NaN: where they are not NaN)."""
    return ~np.isnan(values) if np.isnan(fill) else values != fill


def row_type(size: int) -> type[np.signedinteger]:
    """Row indices as int32 where the model's rows fit it (half the bytes)."""
    return np.int32 if size <= np.iinfo(np.int32).max else np.int64


class SparseParts:
    """A sparse column built a chunk at a time, as a load merges its chunks."""

    def __init__(self, dtype: str, fill: float) -> None:
        self.dtype = np.dtype(dtype)
        self.fill = fill
        self.rows: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.held = 0  # bytes of the parts

    def append(self, part: np.ndarray, first_row: int) -> None:
        """The rows with a value of `part`, the dense column of rows from `first_row`."""
        at = np.flatnonzero(has_value(part, self.fill))
        if at.size:
            self.values.append(part[at].astype(self.dtype, copy=False))
            rows = at.astype(row_type(first_row + part.size), copy=False)
            rows += first_row
            self.rows.append(rows)
            self.held += self.values[-1].nbytes + rows.nbytes

    def finish(self, size: int) -> SparseColumn:
        return SparseColumn(
            _joined(self.rows, row_type(size)), _joined(self.values, self.dtype), self.fill, size
        )


def _joined(parts: Sequence[np.ndarray], dtype: np.dtype | type) -> np.ndarray:
    if not parts:
        return np.empty(0, dtype=dtype)
    return np.concatenate(parts).astype(dtype, copy=False)


def sparse_from_dense(column: np.ndarray, fill: float) -> SparseColumn:
    """`column` (a value per row) as a sparse column."""
    parts = SparseParts(column.dtype.str, fill)
    parts.append(np.asarray(column), 0)
    return parts.finish(int(column.size))
