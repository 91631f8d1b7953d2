"""The model builder: chunks merged, in file order, into one `TraceModel` (global string
tables, row offsets, the columns grown in place, the raw args spilled to a file by a
background thread); the memory and args caps of a load checked as it grows."""

from __future__ import annotations

from typing import Any, BinaryIO

import numpy as np

from ..model.sparse_column import SPARSE_COLUMNS, SparseParts
from ..model.trace_model import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    NARROW_COLUMNS,
    TraceModel,
    empty_columns,
)
from .args_spill import ArgsSpill
from .column_sink import ColumnSink, Fill
from .columns import (
    INTERNED,
    Chunk,
    Interner,
    as_text,
    drop_empty_events,
    empty_events_warning,
    negative_duration_warning,
    to_int,
)
from .decode import DecodeReport, TraceDecodeError
from .limits import load_memory_bytes, max_args_bytes
from .text_blocks import too_large


class ModelBuilder:
    """Merges chunks, in file order, into one model: global string tables, row offsets,
    and the raw args written to the spill file by a background thread."""

    def __init__(self, args_sink: BinaryIO, report: DecodeReport | None = None) -> None:
        self.interners = {k: Interner() for k in INTERNED}
        self.events = ColumnSink(DENSE_COLUMNS, narrow=NARROW_COLUMNS)
        self.sparse = _sparse_parts()
        self.pending = _PendingSparse()
        self.mem_parts: list[dict[str, np.ndarray]] = []
        self.meta: list[tuple[Any, Any, str, Any]] = []
        self.warnings: list[str] = []
        self.partial = False
        self.args = ArgsSpill(args_sink)
        self.args_total = 0
        self.rows = 0
        self.negative_durations = 0
        self.empty_events = 0
        self.mem_nbytes = 0  # of the memory table's parts
        self.memory_cap = load_memory_bytes()
        self.args_cap = max_args_bytes()
        # The columns held, for a decoder that holds state of its own (a Perfetto
        # reader's open slices): it counts both against the cap (`report.held_bytes`).
        self.report = report or DecodeReport()

    def merge(self, chunk: Chunk) -> None:
        self.meta.extend(chunk.meta)
        self.warnings.extend(w for w in chunk.warnings if w not in self.warnings)
        self.partial = self.partial or chunk.partial
        self.negative_durations += chunk.negative_durations
        self.empty_events += drop_empty_events(chunk)
        cols = chunk.cols
        n = len(cols["ts"])
        if n == 0:
            return
        # The global codes and args offsets are written into the model's columns in
        # place (`fills`), not made in arrays of their own first.
        fills = {key: _remapped(self.interners[key], chunk, key) for key in INTERNED}
        fills["args_end"] = _offset(cols["args_end"], self.args_total)
        # Offsets grow with the rows: the last says whether all fit the narrow type.
        args_fit = int(cols["args_end"][-1]) + self.args_total <= _NARROW_MAX[_ARGS_END_TYPE]
        self.args_total += len(chunk.args)
        if self.args_total > self.args_cap:
            raise TraceDecodeError(
                "too_large",
                f"its event args need more than {self.args_cap >> 20} MB on disk "
                f"(KINETOSCOPE_MAX_ARGS_MB; {self.rows} events read so far), so it was stopped",
                0,
            )
        # Writes release the GIL: a writer thread overlaps them with decoding.
        self.args.write(chunk.args)
        if chunk.memory is not None:
            chunk.memory["row"] = chunk.memory["row"] + self.rows
            self.mem_parts.append(chunk.memory)
        self.events.append(cols, self._known_to_fit(chunk, args_fit), fills)
        self.pending.add({key: cols[key] for key in self.sparse}, self.rows, self.sparse)
        self.rows += n
        if chunk.memory is not None:
            self.mem_nbytes += sum(c.nbytes for c in chunk.memory.values())
        # The columns (held once: grown in place); the spilled args are memory-mapped
        # when the views read them, so they count against the same cap.
        self.report.held_bytes = self.events.nbytes() + self.mem_nbytes + self.args_total
        self.report.held_bytes += sum(parts.held for parts in self.sparse.values())
        self.report.held_bytes += self.pending.nbytes
        if self.report.held_bytes > self.memory_cap:
            raise too_large(self.memory_cap, self.rows)

    def _known_to_fit(self, chunk: Chunk, args_fit: bool) -> set[str]:
        """The narrow columns whose values of `chunk` are known to fit their narrow type:
        the scanner's int32 checks, and each interned column's codes (below the length of
        its table, which `fills` has grown to this chunk's values)."""
        fits = {k for k in chunk.int32_columns if NARROW_COLUMNS.get(k) == "i4"}
        fits.update(
            k
            for k in INTERNED
            if len(self.interners[k].values) <= _NARROW_MAX[NARROW_COLUMNS[k]] + 1
        )
        if args_fit:
            fits.add("args_end")
        return fits

    def drop(self) -> None:
        """Let go of the columns of a load that stops."""
        self.events = ColumnSink(DENSE_COLUMNS, rows=1)
        self.sparse = _sparse_parts()
        self.pending = _PendingSparse()
        self.mem_parts.clear()
        self.interners.clear()

    def flush(self) -> None:
        self.args.close()

    def finish(
        self, header: dict[str, Any], report: DecodeReport, source: dict[str, Any], args_blob: Any
    ) -> TraceModel:
        events = self.events.finish()
        self.pending.append_to(self.sparse)
        sparse = {}
        for key, parts in self.sparse.items():  # as a value per row where that is smaller
            column = parts.finish_smaller(self.rows)
            if isinstance(column, np.ndarray):
                events[key] = column
            else:
                sparse[key] = column
        memory = _concat(self.mem_parts, MEMORY_COLUMNS)
        warnings = list(report.warnings) + [w for w in self.warnings if w not in report.warnings]
        if self.negative_durations:  # the trace health's `negative_duration` count
            warnings.append(negative_duration_warning(self.negative_durations))
        if self.empty_events:
            warnings.append(empty_events_warning(self.empty_events))
        model = TraceModel(
            events=events,
            memory=memory,
            names=[as_text(v) for v in self.interners["name"].values],
            categories=[as_text(v) for v in self.interners["cat"].values],
            pids=list(self.interners["pid"].values),
            tids=list(self.interners["tid"].values),
            args_blob=args_blob,
            header=header,
            partial=report.partial or self.partial,
            warnings=warnings,
            source=source,
            sparse=sparse,
        )
        for pid, tid, kind, value in self.meta:
            if kind == "process_name" and value is not None:
                model.process_names[str(pid)] = str(value)
            elif kind == "thread_name" and value is not None:
                model.thread_names[f"{pid}/{tid}"] = str(value)
            elif kind == "process_labels" and value is not None:
                model.process_labels[str(pid)] = str(value)
            elif kind == "process_sort_index":
                model.process_sort[str(pid)] = to_int(value, 0)
            elif kind == "thread_sort_index":
                model.thread_sort[f"{pid}/{tid}"] = to_int(value, 0)
        return model


# The columns held a value per row (the others as their rows with a value).
DENSE_COLUMNS = {k: t for k, t in EVENT_COLUMNS.items() if k not in SPARSE_COLUMNS}
_NARROW_MAX = {t: int(np.iinfo(t).max) for t in set(NARROW_COLUMNS.values())}
_ARGS_END_TYPE = NARROW_COLUMNS["args_end"]


# Rows of chunks whose sparse columns are taken in at once: a column's rows with a value
# are found by a dozen numpy calls, whose cost a chunk of ~4k rows pays mostly per call
# (8 columns of a 253 MB trace's 234 chunks: 0.035 s of the merging thread's CPU, which
# every scanning thread waits on). The rows wait copied into buffers of their own (0.9 MB),
# not as views of the chunks' columns, which held the scanner's buffers (+5-10 MB peak).
SPARSE_BATCH_ROWS = 1 << 14


class _PendingSparse:
    """The sparse columns of the chunks merged since they were last taken in, copied one
    after another into a buffer per column: their `SparseParts` get a batch of chunks'
    rows at once."""

    def __init__(self) -> None:
        self.buffers: dict[str, np.ndarray] = {}
        self.first_row = 0  # the model row of the first row held
        self.rows = 0

    @property
    def nbytes(self) -> int:
        """Bytes of the rows held (the buffers' room past them is not written)."""
        return sum(b.itemsize for b in self.buffers.values()) * self.rows

    def add(
        self, columns: dict[str, np.ndarray], first_row: int, sparse: dict[str, SparseParts]
    ) -> None:
        """The rows of `columns` (from model row `first_row` on) held to be taken in with
        later ones; the rows held before are taken in first where these do not fit."""
        n = len(next(iter(columns.values())))
        if any(self.buffers.get(k, c).dtype != c.dtype for k, c in columns.items()):
            self.append_to(sparse)  # another decoder's types: buffers of these
            self.buffers = {}
        if self.rows + n > SPARSE_BATCH_ROWS:
            self.append_to(sparse)
        if n > SPARSE_BATCH_ROWS:  # a chunk this big pays little per call: taken in now
            for key, parts in sparse.items():
                parts.append(columns[key], first_row)
            return
        if not self.buffers:
            self.buffers = {k: np.empty(SPARSE_BATCH_ROWS, c.dtype) for k, c in columns.items()}
        if self.rows == 0:
            self.first_row = first_row
        for key, column in columns.items():
            self.buffers[key][self.rows : self.rows + n] = column
        self.rows += n

    def append_to(self, sparse: dict[str, SparseParts]) -> None:
        """The rows held appended to each column's parts (which copy what they keep)."""
        if self.rows:
            for key, parts in sparse.items():
                parts.append(self.buffers[key][: self.rows], self.first_row)
        self.rows = 0


def _sparse_parts() -> dict[str, SparseParts]:
    return {
        key: SparseParts(EVENT_COLUMNS[key], fill, NARROW_COLUMNS.get(key))
        for key, fill in SPARSE_COLUMNS.items()
    }


def _remapped(interner: Interner, chunk: Chunk, key: str) -> Fill:
    """Writes the chunk's codes of `key` as the file's codes (its table interned)."""
    mapping = interner.codes(chunk.tables[key])
    codes = chunk.cols[key]
    # "wrap": codes are in range; numpy buffers `out` in its default mode ("raise").
    return lambda out: mapping.take(codes, out=out, mode="wrap")


def _offset(ends: np.ndarray, start: int) -> Fill:
    """Writes a chunk's args offsets counted from the file's args start."""
    return lambda out: np.add(ends, start, out=out, casting="unsafe")


def _concat(parts: list[dict[str, np.ndarray]], spec: dict[str, str]) -> dict[str, np.ndarray]:
    """Join the parts column by column, letting go of each column's parts once joined:
    the peak is the model plus one column's parts, not two copies of every column."""
    if not parts:
        return empty_columns(spec)
    out = {}
    for key, dtype in spec.items():
        out[key] = np.concatenate([p.pop(key) for p in parts]).astype(dtype, copy=False)
    parts.clear()
    return out
