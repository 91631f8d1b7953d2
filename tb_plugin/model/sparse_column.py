"""A model column that few rows have a value in, held as those rows and their values.

A kernel's launch figures (`blocks per SM`, `est. achieved occupancy %`) are in kernel
events only: a few percent of a trace's rows (3 % of a 253 MB H100 trace's 925k rows,
12 % of a 259 MB V100 trace's), every other row NaN. A value per row held 7.4 MB of NaN
there for two columns read only at kernel rows; as rows and values they hold 0.5 MB. The
scanner's hash of the work args (`work_sig`) is 0 in the rows without them (all but the
ops': 81 % of the H100 trace's rows): 2 MB as rows and values, not 7.4 MB. The ids that
link events (flow, correlation, External id) and a GPU event's device and stream are
missing (-1) in most rows too (89 %, 89 %, 70 %, 96 % there). A load whose decoder
writes a value in most rows keeps a value per row (`SparseParts`).
Values read back (`take`, `dense`) are the dense column's, in its dtype."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache, cached_property

import msgspec
import numpy as np

try:
    from . import _sparse  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's steps give the same values
    _sparse = None

_ONE = np.uint64(1)
# Rows merged before a column whose rows and values hold more than a value per row
# turns dense as it loads (the first chunks, a trace's start, may not be like the rest:
# all ops, so all hashed); whether it is kept dense is decided by all its rows.
DENSE_AFTER_ROWS = 1 << 20
# Column name → the value of the rows that have none (the dense column's missing value).
SPARSE_COLUMNS: dict[str, float] = {
    "blocks_per_sm": np.nan,
    "occupancy": np.nan,
    "work_sig": 0,
    "flow_id": -1,
    "device": -1,
    "stream": -1,
    "correlation": -1,
    "external_id": -1,
}


class SparseColumn(msgspec.Struct, frozen=True, dict=True):
    """`values[i]` is row `rows[i]`'s (rows ascending, the file's order); every other row
    of the `size` rows has `fill`."""

    rows: np.ndarray
    values: np.ndarray
    fill: float
    size: int

    def take(self, rows: np.ndarray | int) -> np.ndarray:
        """The values of `rows` (model row indices in any order and shape, one row, or a
        mask over every row), as the dense column's `column[rows]`."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        if self.rows.size == 0 or rows.size == 0:
            return np.full(rows.shape, self.fill, dtype=self.values.dtype)
        taken = self._take_compiled(rows) if _sparse is not None else None
        return taken if taken is not None else self._take_numpy(rows)

    def _take_compiled(self, rows: np.ndarray) -> np.ndarray | None:
        """`take` in one compiled pass (`_sparse.take`: 15 ms of a cold report's views'
        CPU on a 250 MB V100 trace in numpy's dozen passes, 5 ms in it), None where it
        does not apply (rows of another type, values not plain numbers, whose bytes it
        copies, a row outside the column): numpy's answer then."""
        assert _sparse is not None
        kind, size = self.values.dtype.kind, self.values.dtype.itemsize
        if rows.dtype not in (np.int32, np.int64) or kind not in "biuf" or size not in (1, 2, 4, 8):
            return None
        words, before = self._rank
        out = np.empty(rows.shape, dtype=self.values.dtype)  # one row: 0-d, as numpy's
        flat = np.ascontiguousarray(rows)  # 1-d at least: its buffer is all the call reads
        values = np.ascontiguousarray(self.values)
        if not _sparse.take(flat, flat.itemsize, words, before, values, self._fill_bytes, out):
            return None
        return out

    @cached_property
    def _fill_bytes(self) -> bytes:
        """The missing value's bytes in the values' type, as np.full writes it."""
        return np.full(1, self.fill, dtype=self.values.dtype).tobytes()

    def _take_numpy(self, rows: np.ndarray) -> np.ndarray:
        """`take` in numpy's steps, for rows in the column (a mask made rows already)."""
        words, before = self._rank
        at = rows >> 6
        word = words[at]
        shift = (rows & 63).astype(np.uint64)
        # A row's place among the rows with a value: those of the words before its word,
        # and those of its word below it.
        place = before[at]
        del at
        below = _ONE << shift
        below -= _ONE
        below &= word
        place += bit_count(below)
        del below
        word >>= shift
        has = (word & _ONE).astype(bool)
        if has.all():  # every row asked has a value (kernels' devices): no mask to apply
            return self.values[place]
        out = np.full(rows.shape, self.fill, dtype=self.values.dtype)
        out[has] = self.values[place[has]]
        return out

    @cached_property
    def _rank(self) -> tuple[np.ndarray, np.ndarray]:
        """Which rows have a value, a bit each (64 to a word), and the rows with one before
        each word: a row's value found in a few steps (a search of `rows` took 5.5 ms of
        CPU for 170k rows, this 2.7 ms; 0.17 MB for a 925k-row trace)."""
        marked = np.zeros(-(-self.size // 64) * 64, dtype=bool)
        marked[self.rows] = True
        words = np.packbits(marked, bitorder="little").view("<u8")
        del marked
        before = np.zeros(words.size, dtype=np.int64)
        np.cumsum(bit_count(words)[:-1], out=before[1:])
        return words, before

    def dense(self) -> np.ndarray:
        """The whole column, a value per row (made anew: for a notebook's frame)."""
        out = np.full(self.size, self.fill, dtype=self.values.dtype)
        out[self.rows] = self.values
        return out

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.values.nbytes)


# The set bits of each byte value: `bit_count` where numpy has no bitwise_count (< 2.0;
# the package takes numpy from 1.22).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1)


def bit_count(words: np.ndarray) -> np.ndarray:
    """The set bits of each uint64 word (uint8), as numpy 2's `np.bitwise_count`."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    as_bytes = np.ascontiguousarray(words).view(np.uint8).reshape(*words.shape, 8)
    return _BYTE_BITS.astype(np.uint8)[as_bytes].sum(axis=-1, dtype=np.uint8)


def has_value(values: np.ndarray, fill: float) -> np.ndarray:
    """Where `values` differ from `fill` (NaN: where they are not NaN)."""
    return ~np.isnan(values) if np.isnan(fill) else values != fill


_INT32_MAX = int(np.iinfo(np.int32).max)


def row_type(size: int) -> type[np.signedinteger]:
    """Row indices as int32 where the model's rows fit it (half the bytes)."""
    return np.int32 if size <= _INT32_MAX else np.int64


class SparseParts:
    """A sparse column built a chunk at a time, as a load merges its chunks; dense (a value
    per row) once its rows and values would hold more than that (a decoder that writes a
    value into every row: the Perfetto reader's `work_sig`, unknown everywhere). Values
    are of the `narrow` type while they fit it (`trace_model.NARROW_COLUMNS`), else of
    `dtype`."""

    def __init__(self, dtype: str, fill: float, narrow: str | None = None) -> None:
        self.declared = np.dtype(dtype)
        self.dtype = np.dtype(narrow or dtype)
        self.fill = fill
        self.rows: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.dense: list[np.ndarray] | None = None  # the parts, once dense
        self.held = 0  # bytes of the parts

    def append(self, part: np.ndarray, first_row: int) -> None:
        """The rows with a value of `part`, the dense column of rows from `first_row`."""
        if self.dense is None and first_row >= DENSE_AFTER_ROWS and self._better_dense(first_row):
            self.dense = [self.finish(first_row).dense()]
            self.rows, self.values = [], []
        if self.dense is not None:
            self._widen_for(part)
            self.dense.append(part.astype(self.dtype))
            self.held = (first_row + part.size) * self.dtype.itemsize
            return
        at = np.flatnonzero(has_value(part, self.fill))
        if at.size:
            values = part[at]
            self._widen_for(values)
            self.values.append(values.astype(self.dtype, copy=False))
            rows = at.astype(row_type(first_row + part.size), copy=False)
            rows += first_row
            self.rows.append(rows)
            self.held += self.values[-1].nbytes + rows.nbytes

    def _widen_for(self, values: np.ndarray) -> None:
        """The declared type from now on (the parts so far converted) where `values` do
        not fit the narrow one."""
        if self.dtype == self.declared or values.size == 0:
            return
        if fits_integer_type(values, self.dtype):
            return
        self.dtype = self.declared
        self.values = [v.astype(self.dtype) for v in self.values]
        if self.dense is not None:
            self.dense = [v.astype(self.dtype) for v in self.dense]
        self.held = sum(a.nbytes for a in (*self.rows, *self.values, *(self.dense or ())))

    def finish(self, size: int) -> SparseColumn:
        """The column as rows and values (`finish_smaller`: or as a value per row)."""
        return SparseColumn(
            _joined(self.rows, row_type(size)), _joined(self.values, self.dtype), self.fill, size
        )

    def finish_smaller(self, size: int) -> SparseColumn | np.ndarray:
        """The column as it holds fewer bytes: rows and values, or a value per row."""
        if self.dense is not None:
            return _joined(self.dense, self.dtype)
        column = self.finish(size)
        return column.dense() if self._better_dense(size) else column

    def _better_dense(self, rows: int) -> bool:
        return dense_is_smaller(self.held, rows, self.dtype.itemsize)


def dense_is_smaller(held: int, rows: int, itemsize: int) -> bool:
    """Whether a value per row of `rows` (of `itemsize` bytes) would hold less than 4/3 of
    the `held` bytes of rows and values (a sparse column is read in more steps: kept where
    it saves a quarter: the External ids of a V100 trace, in 59 % of its rows, stay dense)."""
    return 4 * held > 3 * rows * itemsize


# Rows of chunks whose sparse columns are taken in at once: a column's rows with a value
# are found by a dozen numpy calls, whose cost a chunk of ~4k rows pays mostly per call
# (8 columns of a 253 MB trace's 234 chunks: 0.035 s of the merging thread's CPU, which
# every scanning thread waits on). The rows wait copied into buffers of their own (0.9 MB),
# not as views of the chunks' columns, which held the scanner's buffers (+5-10 MB peak).
SPARSE_BATCH_ROWS = 1 << 14


class SparseColumnsBuilder:
    """A load's sparse columns, built from its chunks' dense columns in file order, as
    every decoder's merge gives them: the rows of the chunks merged since the last batch
    wait copied one after another into a buffer per column, and each column's
    `SparseParts` takes a batch of `SPARSE_BATCH_ROWS` rows in at once."""

    def __init__(self, specs: dict[str, tuple[str, float, str | None]]) -> None:
        """`specs`: column name → its declared dtype, its fill and its narrow dtype."""
        self.parts = {key: SparseParts(*spec) for key, spec in specs.items()}
        self.buffers: dict[str, np.ndarray] = {}
        self.size = 0  # rows appended (the model row of the next chunk's first)
        self.waiting = 0  # rows in the buffers, the last of those appended

    @property
    def held(self) -> int:
        """Bytes of the parts and of the rows waiting (the buffers' room past them is not
        written)."""
        waiting = sum(b.itemsize for b in self.buffers.values()) * self.waiting
        return waiting + sum(parts.held for parts in self.parts.values())

    def append(self, columns: Mapping[str, np.ndarray]) -> None:
        """The next rows, as their dense columns (every column of `specs`, one length):
        held to be taken in with later ones; the rows held before are taken in first
        where these do not fit."""
        taken = {key: columns[key] for key in self.parts}
        n = len(next(iter(taken.values())))
        if any(self.buffers.get(k, c).dtype != c.dtype for k, c in taken.items()):
            self._take_in_waiting()  # another decoder's types: buffers of these
            self.buffers = {}
        if self.waiting + n > SPARSE_BATCH_ROWS:
            self._take_in_waiting()
        if n > SPARSE_BATCH_ROWS:  # a chunk this big pays little per call: taken in now
            for key, parts in self.parts.items():
                parts.append(taken[key], self.size)
            self.size += n
            return
        self._make_room(taken, self.waiting + n)
        for key, column in taken.items():
            self.buffers[key][self.waiting : self.waiting + n] = column
        self.waiting += n
        self.size += n

    def _make_room(self, taken: Mapping[str, np.ndarray], rows: int) -> None:
        """Buffers that hold `rows` (at most SPARSE_BATCH_ROWS), grown as rows come: a small
        file's load makes no full batch's buffers (128 KB a column, each mapped and
        unmapped by the allocator)."""
        room = len(next(iter(self.buffers.values()))) if self.buffers else 0
        if rows <= room:
            return
        size = min(SPARSE_BATCH_ROWS, max(rows, 2 * room, 1024))
        grown = {k: np.empty(size, c.dtype) for k, c in taken.items()}
        for key, buffer in self.buffers.items():
            grown[key][: self.waiting] = buffer[: self.waiting]
        self.buffers = grown

    def _take_in_waiting(self) -> None:
        """The rows waiting appended to each column's parts (which copy what they keep)."""
        if self.waiting:
            first_row = self.size - self.waiting
            for key, parts in self.parts.items():
                parts.append(self.buffers[key][: self.waiting], first_row)
        self.waiting = 0

    def finish_smaller(self) -> dict[str, SparseColumn | np.ndarray]:
        """Each column as it holds fewer bytes (`SparseParts.finish_smaller`)."""
        self._take_in_waiting()
        self.buffers = {}
        return {key: parts.finish_smaller(self.size) for key, parts in self.parts.items()}


def fits_integer_type(values: np.ndarray, dtype: np.dtype) -> bool:
    """Whether every one of `values` (at least one) lies within the integer `dtype`: the
    narrow columns' check, as a load's sparse and dense columns take each chunk."""
    if values.dtype.itemsize <= dtype.itemsize and values.dtype.kind == "i":
        return True
    low, high = _limits(dtype)
    return bool(low <= values.min() and values.max() <= high)


@cache
def _limits(dtype: np.dtype) -> tuple[int, int]:
    """An integer type's least and greatest value (`np.iinfo` is a few µs a call, and
    every narrow column of every chunk of a load asks)."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _joined(parts: Sequence[np.ndarray], dtype: np.dtype | type) -> np.ndarray:
    if not parts:
        return np.empty(0, dtype=dtype)
    if len(parts) == 1:  # a small file's one part: no copy to join it
        return parts[0].astype(dtype, copy=False)
    return np.concatenate(parts).astype(dtype, copy=False)


def sparse_from_dense(column: np.ndarray, fill: float) -> SparseColumn:
    """`column` (a value per row) as a sparse column."""
    parts = SparseParts(column.dtype.str, fill)
    parts.append(np.asarray(column), 0)
    return parts.finish(int(column.size))
