"""A model's columns, grown in place as its chunks merge.

Each chunk's columns are copied into the end of one anonymous memory map per column, and
a map grows by remapping its pages (mremap), not by copying them. So a load never holds
its columns twice: no list of parts joined at the end (the join doubled the columns at
the peak of the load), and no heap block copied as it grows (realloc of an array in the
heap copies it and keeps the old block in the heap: +50 MB of RSS at the last growth of
a 259 MB trace's columns, measured).

A small load's columns stay numpy arrays in the heap (a map per column costs system
calls and page faults that a run of 2,048 small ranks pays 2,048 times); they move into
maps, copied once, when they pass `HEAP_ROWS`.

The columns named in `trace_model.NARROW_COLUMNS` are kept in the narrower integer type
it gives while every value fits, and become their declared type (copied once) at the
first chunk with a value that does not. A caller that knows a part's values fit (the
compiled scanner checks each value as it writes it; interned codes are below their
table's length) says so, and the sink does not look again.

A column whose values a caller computes from a part (interned codes through their global
table, args offsets) is written by it straight into its place in the map (`fills`): not
made in an array first and copied. The maps' pages are made present a little ahead of
the rows written, a step at a time (MADV_POPULATE_WRITE), not by one page fault each
(measured: 80 MB of rows written in 0.035 s of CPU instead of 0.053 s).

Where the compiled scanner is built, a part's copied columns are written by one call
(`_scan.place`, which checks each narrow value as it writes it) that lets the GIL go once:
a numpy copy lets it go and takes it back for each column (the merging thread waited for
the scanning threads at each), and a narrow column not known to fit took a pass for its
minimum and one for its maximum first.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Collection, Mapping

import numpy as np

from ..model.sparse_column import fits_integer_type as _fits

try:
    from ._scan import place as _place  # type: ignore[import-not-found]
except ImportError:  # built without a C compiler: numpy copies each column
    _place = None

# Rows room is made for at first; each growth doubles the room. Up to HEAP_ROWS the
# columns are arrays in the heap (resized in place), past it anonymous maps.
FIRST_ROWS = 1 << 12
HEAP_ROWS = 1 << 16
# Private: a shared anonymous map is a file of its first size (touched past it, the
# remapped pages fault with SIGBUS).
_PRIVATE = getattr(mmap, "MAP_PRIVATE", 0)
_NONE: Mapping[str, str] = {}
# Bytes of a map made present at once, ahead of the rows written (one system call each;
# pages made present but not written yet are held: at most this much per column).
POPULATE_STEP = 64 << 10
_MADV_POPULATE_WRITE = 23  # Linux 5.14; elsewhere the pages fault in as they are written
_PAGE = mmap.PAGESIZE

# The numpy type characters `_scan.place` reads and writes (`_scan.c`: type_size).
_PLACE_TYPES = frozenset("bhilqBfd?")

# Writes a column's new rows into the view of them it is given (what it returns is unused).
Fill = Callable[[np.ndarray], object]


class Remap:
    """A fill: int32 `codes` written as `table[codes]` (codes in range; numpy's "wrap")."""

    __slots__ = ("codes", "table")

    def __init__(self, codes: np.ndarray, table: np.ndarray) -> None:
        self.codes, self.table = codes, table

    def __call__(self, out: np.ndarray) -> object:
        # "wrap": codes are in range; numpy buffers `out` in its default mode ("raise").
        return self.table.take(self.codes, out=out, mode="wrap")


class Offset:
    """A fill: integer `values` written plus `start`."""

    __slots__ = ("start", "values")

    def __init__(self, values: np.ndarray, start: int) -> None:
        self.values, self.start = values, start

    def __call__(self, out: np.ndarray) -> object:
        return np.add(self.values, self.start, out=out, casting="unsafe")


class ColumnSink:
    """Columns of `spec` (name → dtype) appended to in place; `finish` gives them. The
    columns named in `narrow` have its narrower type while their values fit."""

    def __init__(
        self, spec: dict[str, str], rows: int = FIRST_ROWS, narrow: Mapping[str, str] = _NONE
    ) -> None:
        self.rows = 0
        self.room = max(rows, 1)
        self.declared = {k: np.dtype(v) for k, v in spec.items()}
        self.dtypes = {k: np.dtype(narrow.get(k, t)) for k, t in self.declared.items()}
        self.narrow = {k for k in narrow if k in spec and self.dtypes[k] != self.declared[k]}
        self.heap: dict[str, np.ndarray] = {
            k: np.empty(self.room, dtype=t) for k, t in self.dtypes.items()
        }
        self.maps: dict[str, mmap.mmap] = {}  # once past HEAP_ROWS
        self.present: dict[str, int] = {}  # bytes of each map made present so far

    def _column(self, key: str) -> np.ndarray:
        # A view of a map only while it is written: a map with views cannot be resized.
        return np.frombuffer(self.maps[key], self.dtypes[key]) if self.maps else self.heap[key]

    def append(
        self,
        part: dict[str, np.ndarray],
        fits: Collection[str] = (),
        fills: dict[str, Fill] | None = None,
    ) -> None:
        """Add rows after the rows held: each column of the spec copied from `part` (of one
        length) or written by its function in `fills`. A narrow column named in `fits`
        holds only values of its narrow type (not checked again); one filled and not named
        there is made its declared type."""
        fills = fills or {}
        n = len(part["ts"]) if "ts" in part else len(next(iter(part.values())))
        if self.rows + n > self.room:
            self._grow(max(self.rows + n, 2 * self.room))
        placed = self._placeable(part, fills) if n else []
        for key in [k for k in self.narrow if n and k not in fits]:
            if key in fills or (key not in placed and not _fits(part[key], self.dtypes[key])):
                self._widen(key)
        lo, hi = self.rows, self.rows + n
        if self.maps:  # the placed columns' pages are made present by `_scan.place`
            self._make_present(hi, [k for k in self.dtypes if k not in placed])
        for key in self._place(placed, part, fills, lo):
            if key in self.narrow:  # else wrapped as numpy's cast wraps it
                self._widen(key)  # its `lo` rows so far copied: this part's written again
            column = self._column(key)[lo:hi]
            if key in fills:
                fills[key](column)
            else:
                column[:] = part[key]
        for key in [k for k in self.dtypes if k not in placed]:
            if key in fills:
                fills[key](self._column(key)[lo:hi])
            else:
                self._column(key)[lo:hi] = part[key]
        self.rows = hi

    def _placeable(self, part: dict[str, np.ndarray], fills: Mapping[str, Fill]) -> list[str]:
        """The columns that `_scan.place` writes: those copied from `part` whose types it
        converts (a copy, or signed integers to another size), and the integer columns
        filled by a `Remap` or an `Offset`."""
        if _place is None:
            return []
        return [
            k
            for k, dtype in self.dtypes.items()
            if _placeable_source(_source(part, fills, k), dtype)
        ]

    def _place(
        self, keys: list[str], part: dict[str, np.ndarray], fills: Mapping[str, Fill], lo: int
    ) -> list[str]:
        """Columns `keys` (of `part`, or filled) written into their rows from `lo` on, in
        one call that lets the GIL go once (a copy or fill each by numpy lets it go and
        waits to take it back from the scanning threads once a column), the maps' pages
        made present there too: the columns with a value that does not fit their narrow
        type, whose rows are to be written again once widened."""
        if not keys:
            return []
        columns = self.maps or self.heap  # the whole columns: no view of a map is kept
        sources = [v for v in (_source(part, fills, k) for k in keys) if v is not None]
        types = "".join(v.dtype.char + self.dtypes[k].char for k, v in zip(keys, sources))
        hows = [_how(fills.get(k)) for k in keys]
        dst = [columns[k] for k in keys]
        refused = _place(dst, sources, types.encode(), lo, hows, bool(self.maps))
        return [keys[i] for i in refused]

    def _make_present(self, rows: int, keys: list[str]) -> None:
        """The maps' pages of columns `keys` present up to `rows` rows and a step past."""
        for key in keys:
            dtype = self.dtypes[key]
            done, need = self.present.get(key, 0), rows * dtype.itemsize
            if need <= done or done < 0:
                continue
            start = done // _PAGE * _PAGE  # the map's end, where it grew since, may not be
            end = min(len(self.maps[key]), -(-(need + POPULATE_STEP) // _PAGE) * _PAGE)
            try:
                self.maps[key].madvise(_MADV_POPULATE_WRITE, start, end - start)
                self.present[key] = end
            except (OSError, ValueError, AttributeError):  # not Linux 5.14+: pages fault in
                self.present[key] = -1

    def _grow(self, room: int) -> None:
        if self.heap and room <= HEAP_ROWS:
            for column in self.heap.values():  # no view of them exists: safe in place
                column.resize(room, refcheck=False)
        elif self.heap:
            for key, dtype in self.dtypes.items():
                self.maps[key] = _new_map(room * dtype.itemsize)
                np.frombuffer(self.maps[key], dtype)[: self.rows] = self.heap[key][: self.rows]
            self.heap = {}
        else:
            for key, dtype in self.dtypes.items():
                size, used = room * dtype.itemsize, self.rows * dtype.itemsize
                self.maps[key] = _resized(self.maps[key], size, used)
        self.room = room

    def _widen(self, key: str) -> None:
        """Column `key` as its declared type from now on (its rows so far copied)."""
        rows, dtype = self._column(key)[: self.rows], self.declared[key]
        if self.heap:
            wide = np.empty(self.room, dtype=dtype)
            wide[: self.rows] = rows
            self.heap[key] = wide
        else:
            new = _new_map(self.room * dtype.itemsize)
            np.frombuffer(new, dtype=dtype)[: self.rows] = rows
            del rows
            self.maps[key].close()
            self.maps[key] = new
            if self.present.get(key, 0) >= 0:  # the rows copied made their pages present
                self.present[key] = self.rows * dtype.itemsize // _PAGE * _PAGE
        self.dtypes[key] = dtype
        self.narrow.discard(key)

    def nbytes(self) -> int:
        """Bytes of the rows held (the room beyond them is never touched, so not resident)."""
        return sum(t.itemsize for t in self.dtypes.values()) * self.rows

    def finish(self) -> dict[str, np.ndarray]:
        """The columns, cut to the rows held; the sink is left empty."""
        out = {}
        for key, dtype in self.dtypes.items():
            if self.heap:
                out[key] = self.heap[key]
                out[key].resize(self.rows, refcheck=False)
                continue
            size = max(self.rows * dtype.itemsize, 1)  # a map is never empty
            self.maps[key] = _resized(self.maps[key], size, self.rows * dtype.itemsize)
            out[key] = np.frombuffer(self.maps[key], dtype=dtype, count=self.rows)
        self.heap, self.maps, self.present = {}, {}, {}
        return out


def _converts(source: np.dtype, dtype: np.dtype) -> bool:
    """Whether `_scan.place` writes values of `source` as `dtype`: the same type, or
    signed integers of another size (checked to fit as they are written)."""
    if not (source.isnative and dtype.isnative):
        return False
    if source == dtype:
        return source.char in _PLACE_TYPES
    return source.kind == dtype.kind == "i" and {source.char, dtype.char} <= _PLACE_TYPES


def _source(part: dict[str, np.ndarray], fills: Mapping[str, Fill], key: str) -> np.ndarray | None:
    """The values `_scan.place` reads for column `key`: the part's, or those a `Remap` or
    an `Offset` fill is made of (None: another fill, which numpy writes)."""
    fill = fills.get(key)
    if fill is None:
        return part[key]
    if isinstance(fill, Remap):  # `_scan.place` looks up int32 codes in an int32 table
        table, codes = fill.table, fill.codes
        int32 = table.dtype == codes.dtype == np.int32 and table.flags.c_contiguous
        return codes if int32 and table.dtype.isnative and len(table) else None
    return fill.values if isinstance(fill, Offset) else None


def _how(fill: Fill | None) -> object:
    """What `_scan.place` does to a column's source: a `Remap`'s table, an `Offset`'s
    start, or nothing (None: a copy)."""
    if isinstance(fill, Remap):
        return fill.table
    return fill.start if isinstance(fill, Offset) else None


def _placeable_source(source: np.ndarray | None, dtype: np.dtype) -> bool:
    return source is not None and _converts(source.dtype, dtype) and source.flags.c_contiguous


def _resized(old: mmap.mmap, size: int, used: int) -> mmap.mmap:
    """`old` resized to `size` bytes (its first `used` kept): remapped where the system
    can (Linux), else copied into a new map."""
    try:
        old.resize(size)
        return old
    except (OSError, SystemError, ValueError):
        new = _new_map(size)
        new[:used] = old[:used]
        old.close()
        return new


def _new_map(size: int) -> mmap.mmap:
    # Not MADV_HUGEPAGE: fewer faults, but the appends of the V100 mix took 0.10-0.15 s
    # instead of 0.045 s of CPU (the kernel compacting memory for huge pages, measured).
    return mmap.mmap(-1, size, flags=_PRIVATE) if _PRIVATE else mmap.mmap(-1, size)
