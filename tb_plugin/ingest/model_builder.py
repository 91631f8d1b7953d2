"""The model builder: chunks merged, in file order, into one `TraceModel` (global string
tables, row offsets, the columns grown in place, the raw args spilled to a file by a
background thread); the memory and args caps of a load checked as it grows."""

from __future__ import annotations

import errno
from typing import Any, BinaryIO

import numpy as np

from ..model.sparse_column import SPARSE_COLUMNS, SparseColumnsBuilder
from ..model.trace_model import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    NARROW_COLUMNS,
    TraceModel,
    empty_columns,
)
from .args_spill import ArgsSpill
from .column_sink import ColumnSink, Fill, Offset, Remap
from .columns import (
    INTERNED,
    Chunk,
    Interner,
    as_text,
    drop_empty_events,
    empty_events_warning,
    negative_duration_warning,
)
from .decode import DecodeReport, TraceDecodeError
from .limits import FREE_DISK, args_cap, load_memory_bytes
from .text_blocks import too_large
from .values import to_int


class SpillDiskFull(OSError):
    """The args would pass the free space of the spill's disk (ENOSPC, before writing):
    a store whose cache is full spills to a temporary file instead, as on a failed write."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.message = message


class ModelBuilder:
    """Merges chunks, in file order, into one model: global string tables, row offsets,
    and the raw args written to the spill file by a background thread."""

    def __init__(
        self,
        args_sink: BinaryIO,
        report: DecodeReport,
        file_bytes: int,
        spill_dir: str | None,
    ) -> None:
        self.interners = {k: Interner() for k in INTERNED}
        self.events = ColumnSink(DENSE_COLUMNS, narrow=NARROW_COLUMNS)
        self.sparse = _sparse_columns()
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
        # Checked before each write: past it nothing more is written.
        self.args_cap, self.args_bound = args_cap(file_bytes, spill_dir)
        # The columns held, for a decoder that holds state of its own (a Perfetto
        # reader's open slices): it counts both against the cap (`report.held_bytes`).
        self.report = report

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
        fills: dict[str, Fill] = {k: _remapped(self.interners[k], chunk, k) for k in INTERNED}
        fills["args_end"] = _offset(cols["args_end"], self.args_total)
        # Offsets grow with the rows: the last says whether all fit the narrow type.
        args_fit = int(cols["args_end"][-1]) + self.args_total <= _NARROW_MAX[_ARGS_END_TYPE]
        self.args_total += len(chunk.args)
        if self.args_total > self.args_cap:
            raise self._args_refused()
        # Writes release the GIL: a writer thread overlaps them with decoding.
        self.args.write(chunk.args)
        if chunk.memory is not None:
            chunk.memory["row"] = chunk.memory["row"] + self.rows
            self.mem_parts.append(chunk.memory)
        self.events.append(cols, self._known_to_fit(chunk, args_fit), fills)
        self.sparse.append(cols)
        self.rows += n
        if chunk.memory is not None:
            self.mem_nbytes += sum(c.nbytes for c in chunk.memory.values())
        # The columns (held once: grown in place); the spilled args are memory-mapped
        # when the views read them, so they count against the same cap.
        self.report.held_bytes = self.events.nbytes() + self.mem_nbytes + self.args_total
        self.report.held_bytes += self.sparse.held
        if self.report.held_bytes > self.memory_cap:
            raise too_large(self.memory_cap, self.rows)

    def _args_refused(self) -> Exception:
        message = (
            f"its event args need more than {self.args_cap >> 20} MB on disk "
            f"({self.args_bound}; {self.rows} events read so far), so it was stopped"
        )
        if self.args_bound == FREE_DISK:  # the store may spill elsewhere (a full cache)
            return SpillDiskFull(errno.ENOSPC, message)
        return TraceDecodeError("too_large", message, 0)

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
        self.sparse = _sparse_columns()
        self.mem_parts.clear()
        self.interners.clear()

    def flush(self) -> None:
        self.args.close()

    def finish(
        self, header: dict[str, Any], report: DecodeReport, source: dict[str, Any], args_blob: Any
    ) -> TraceModel:
        events = self.events.finish()
        sparse = {}
        for key, column in self.sparse.finish_smaller().items():
            if isinstance(column, np.ndarray):  # a value per row where that is smaller
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


def _sparse_columns() -> SparseColumnsBuilder:
    specs = {k: (EVENT_COLUMNS[k], v, NARROW_COLUMNS.get(k)) for k, v in SPARSE_COLUMNS.items()}
    return SparseColumnsBuilder(specs)


def _remapped(interner: Interner, chunk: Chunk, key: str) -> Remap:
    """Writes the chunk's codes of `key` as the file's codes (its table interned)."""
    return Remap(chunk.cols[key], interner.codes(chunk.tables[key]))


def _offset(ends: np.ndarray, start: int) -> Offset:
    """Writes a chunk's args offsets counted from the file's args start."""
    return Offset(ends, start)


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
