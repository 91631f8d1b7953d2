"""TraceModel: one trace file as columns.

Every event (metadata `M` events aside) is one row; strings are interned into tables and
rows hold their codes. Args every view needs are columns; the rest of each event's args
stay as raw JSON bytes in one blob (memory-mapped from the cache), parsed only for the
rows a view asks about (`args_of`). Memory events get their own small table.

Views are pure functions of this model; nothing here knows about views.
"""

from __future__ import annotations

import contextlib
import mmap
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
import numpy as np

from .categories import Kind, Phase, complete_mask, kind_mask
from .decoders import decoders_for
from .derived_tables import ASKED, KEY_LOCKS, held_nbytes, is_recording
from .sparse_column import SparseColumn

T = TypeVar("T")

# Column name → dtype. Missing ints are -1, missing floats NaN.
EVENT_COLUMNS: dict[str, str] = {
    "ph": "u1",
    "kind": "u1",
    "cat": "i4",
    "name": "i4",
    "pid": "i4",
    "tid": "i4",
    "ts": "f8",
    "dur": "f8",
    "flow_id": "i8",
    "external_id": "i8",
    "correlation": "i8",
    "device": "i4",
    "stream": "i8",
    "blocks_per_sm": "f4",
    "occupancy": "f4",
    "args_end": "i8",
    "has_stack": "?",  # a non-empty `Call stack` arg (2021-22 traces)
    # A hash of the work args' text (`Input Dims`, `Input type`, `Concrete Inputs`,
    # `flops`) by the compiled scanner: equal calls have equal values; 0 where there
    # are none, -1 where unknown (read by the msgspec path).
    "work_sig": "i8",
    # A `python_function` event's `Python id` and `Python parent id` args (torch 2.x with
    # stacks): -1 where absent or null, and both -1 where the args do not read as a
    # struct of two optional ints (a string id, args that are not an object).
    "python_id": "i8",
    "python_parent_id": "i8",
}

NO_PYTHON_ID = -1  # as every missing int of the model
# Rows whose args one decode step of `iter_args` copies and holds (a few MB of text).
ARGS_CHUNK_ROWS = 4096

# Integer columns a load keeps in a narrower type (here) where every value of the trace
# fits, else in the declared one: ids and offsets as int32 (ids are counters in most
# traces: 4 bytes a row each saved), and the interned codes, devices and streams as int16
# (a trace has a few categories, processes, threads, devices and streams, and names by
# the thousand: 2 bytes a row each). A view reads them either way: arithmetic that could
# pass the narrow type's range casts to int64 first.
NARROW_COLUMNS: dict[str, str] = {
    **dict.fromkeys(
        ("flow_id", "external_id", "correlation", "args_end", "python_id", "python_parent_id"),
        "i4",
    ),
    **dict.fromkeys(("cat", "name", "pid", "tid", "device", "stream"), "i2"),
}

MEMORY_COLUMNS: dict[str, str] = {
    "row": "i8",
    "bytes": "f8",
    "addr": "i8",
    "device_type": "i4",
    "device_id": "i4",
    "total_allocated": "f8",
    "total_reserved": "f8",
}


@dataclass
class TraceModel:
    events: dict[str, np.ndarray]
    memory: dict[str, np.ndarray]
    names: list[str]
    categories: list[str]
    pids: list[Any]
    tids: list[Any]
    args_blob: Any  # bytes, or a read-only np.memmap of uint8
    process_names: dict[str, str] = field(default_factory=dict)  # str(pid) → name
    thread_names: dict[str, str] = field(default_factory=dict)  # f"{pid}/{tid}" → name
    process_labels: dict[str, str] = field(default_factory=dict)
    process_sort: dict[str, int] = field(default_factory=dict)
    thread_sort: dict[str, int] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    partial: bool = False
    warnings: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)
    sparse: dict[str, SparseColumn] = field(default_factory=dict)  # not in events: column_at

    def __post_init__(self) -> None:
        # Read-only whether built now or mapped from the cache (which is read-only
        # anyway): a view that writes into a column fails on a fresh model too.
        sparse = [a for c in self.sparse.values() for a in (c.rows, c.values)]
        for column in (*self.events.values(), *self.memory.values(), *sparse):
            column.flags.writeable = False

    def __len__(self) -> int:
        return int(self.events["ts"].shape[0])

    # --- lookups -------------------------------------------------------------

    def column_at(self, name: str, rows: np.ndarray | int) -> np.ndarray:
        """Event column `name`'s values at `rows`, whether it is dense or sparse."""
        return self.sparse[name].take(rows) if name in self.sparse else self.events[name][rows]

    def full_column(self, name: str) -> np.ndarray:
        """Event column `name`, a value per row (a sparse one made dense anew)."""
        return self.sparse[name].dense() if name in self.sparse else self.events[name]

    def name_code(self, name: str) -> int:
        """Code of `name`, or -1 when no event has it."""
        index = self.__dict__.get("_name_index")
        if index is None:
            index = {n: i for i, n in enumerate(self.names)}
            self.__dict__["_name_index"] = index
        return int(index.get(name, -1))

    def derived(self, key: str, build: Callable[[TraceModel], T]) -> T:
        """A structure computed from the model once (an index, a tree) and kept with it;
        concurrent requests wait for the one build instead of repeating it, and builds
        of different structures run side by side (views computed in threads)."""
        found = self.__dict__.get(key)
        if is_recording():
            ASKED[-1].add(key)
        if found is None:
            # One lock per structure, re-entrant: a structure may be built from another
            # (kernel classes from the op tree); no two wait on each other in a cycle,
            # since a structure never needs itself.
            with KEY_LOCKS:
                lock = self.__dict__.setdefault("_derived_locks", {}).setdefault(
                    key, threading.RLock()
                )
            with lock:
                found = self.__dict__.get(key)
                if found is None:
                    found = build(self)
                    self.__dict__[key] = found
                    with KEY_LOCKS:
                        self.__dict__.setdefault("_derived_keys", []).append(key)
        return found  # type: ignore[no-any-return]

    def attach_captures(self, load: Callable[[], list[TraceModel]]) -> None:
        """How to get the models of the CUDA/HIP graph captures profiled beside this
        trace (a run folder's `capture_traces/`): set by whoever loaded the model, called
        only when a view asks (loading them costs nothing at this model's load)."""
        self.__dict__["_capture_loader"] = load

    def capture_models(self) -> list[TraceModel]:
        """The capture traces' models (empty when none was found or none was attached)."""
        load = self.__dict__.get("_capture_loader")
        return list(load()) if load is not None else []

    def derived_nbytes(self) -> int:
        """About what the derived structures hold (their arrays and containers)."""
        keys = list(self.__dict__.get("_derived_keys", ()))
        return sum(held_nbytes(self.__dict__.get(k)) for k in keys)  # one let go: 0

    def rows_of(self, *kinds: Kind) -> np.ndarray:
        """Row indices of events of the given kinds, in file order."""
        return np.flatnonzero(kind_mask(self.events["kind"], kinds))

    def has_complete(self, kind: Kind) -> bool:
        """Whether any duration (`X`) event is of `kind`: what a page's "is there data"
        check asks on every status request, answered from `kind_phase_counts` (one pass,
        not a pass per question; a 4 GB trace has 9M rows)."""
        return bool(self.kind_phase_counts()[kind, Phase.COMPLETE])

    def kind_phase_counts(self) -> np.ndarray:
        """Events per (kind, phase)."""
        return self.derived(_KIND_PHASE_COUNTS, _kind_phase_counts)

    def complete_names(self, kind: Kind) -> np.ndarray:
        """The name codes of the duration (`X`) events of `kind`, sorted."""
        return self.derived(_COMPLETE_NAMES, _complete_names)[int(kind)]

    def summary(self) -> dict[str, Any]:
        """`kind_phase_counts` and `complete_names` as JSON values: the disk cache keeps
        them with the columns, so a cached model answers a page's "is there data" check
        (`has_complete`, the Module page's module names) without reading a column."""
        return {
            _KIND_PHASE_COUNTS: self.kind_phase_counts().tolist(),
            _COMPLETE_NAMES: [
                codes.tolist() for codes in self.derived(_COMPLETE_NAMES, _complete_names)
            ],
        }

    def keep_summary(self, summary: dict[str, Any]) -> None:
        """A `summary` known already (from the disk cache), kept as the derived
        structures it stands for."""
        if _KIND_PHASE_COUNTS in summary:
            counts = np.array(summary[_KIND_PHASE_COUNTS], dtype=np.int64)
            self.derived(_KIND_PHASE_COUNTS, lambda _: counts)
        if _COMPLETE_NAMES in summary:
            names = [np.array(c, dtype=np.int64) for c in summary[_COMPLETE_NAMES]]
            self.derived(_COMPLETE_NAMES, lambda _: names)

    def complete_rows(self, *kinds: Kind) -> np.ndarray:
        """Rows of duration (`X`) events of the given kinds."""
        return np.flatnonzero(complete_mask(self.events, kinds))

    def names_of(self, rows: np.ndarray) -> list[str]:
        codes = self.events["name"][rows]
        return [self.names[c] for c in codes.tolist()]

    def raw_args(self, row: int) -> bytes:
        ends = self.events["args_end"]
        start = int(ends[row - 1]) if row > 0 else 0
        return bytes(self.args_blob[start : int(ends[row])])

    def scan_args(self, pattern: re.Pattern[bytes]) -> Iterator[tuple[int, re.Match[bytes]]]:
        """Matches of `pattern` in the raw args with their byte offsets in the blob (map
        them to rows with `np.searchsorted(events["args_end"], offset, "right")`). The blob
        is read in chunks cut between events, and pages of a memory-mapped blob are let go
        after each chunk, so scanning gigabytes of args keeps little of them resident."""
        blob = self.args_blob
        ends = self.events["args_end"]
        total = int(ends[-1]) if len(ends) else 0
        start = 0
        while start < total:
            i = int(np.searchsorted(ends, start + ARGS_SCAN_CHUNK, side="right")) - 1
            stop = int(ends[i]) if i >= 0 else 0
            if stop <= start:  # one event's args larger than a chunk
                stop = int(ends[np.searchsorted(ends, start, side="right")])
            data = bytes(blob[start:stop])
            _release_pages(blob, start, stop)
            for match in pattern.finditer(data):
                yield start + match.start(), match
            start = stop

    def release_args(self, start: int, stop: int) -> None:
        """Let go of the pages of args bytes [start, stop) of a memory-mapped blob, after
        reading many rows' args (as `scan_args` does): they stay in the page cache."""
        _release_pages(self.args_blob, start, stop)

    def args_of(self, rows: Sequence[int] | np.ndarray, shape: type[T]) -> list[T]:
        """Decode the args of `rows` into `shape` (a msgspec Struct with defaults)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return []
        ends = self.events["args_end"]
        starts = np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
        stops = ends[rows]
        spans = zip(starts.tolist(), stops.tolist())
        mapping = _whole_map(self.args_blob)
        if mapping is not None:  # a slice of the map is its bytes: one object per row
            pieces = [mapping[a:b] if b > a else b"{}" for a, b in spans]
        else:
            # A memoryview's slices are plain buffers: slicing the memory-mapped array
            # itself makes a memmap object per row (about 1.5 µs each).
            blob = memoryview(self.args_blob)
            pieces = [blob[a:b].tobytes() if b > a else b"{}" for a, b in spans]
        decoder, one = decoders_for(shape)
        try:
            return decoder.decode(b"[" + b",".join(pieces) + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            out: list[T] = []
            for piece in pieces:
                try:
                    out.append(one.decode(piece))
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    out.append(msgspec.convert({}, shape))
            return out

    def iter_args(
        self, rows: Sequence[int] | np.ndarray, shape: type[T], chunk_rows: int = ARGS_CHUNK_ROWS
    ) -> Iterator[T]:
        """`args_of(rows, shape)` one object at a time, decoded `chunk_rows` rows at a time:
        a pass over millions of rows (every `Call stack` of a multi-GB trace) holds one
        chunk's copies of the text and its objects, not all of them at once."""
        rows = np.asarray(rows, dtype=np.int64)
        for start in range(0, rows.size, max(1, chunk_rows)):
            yield from self.args_of(rows[start : start + chunk_rows], shape)

    @property
    def time_origin_us(self) -> float:
        """Add this to `ts` for absolute epoch microseconds (2024+ traces are relative)."""
        base = self.header.get("baseTimeNanoseconds")
        return float(base) / 1000.0 if isinstance(base, (int, float)) else 0.0

    def device_properties(self) -> list[dict[str, Any]]:
        props = self.header.get("deviceProperties") or self.header.get("computeProperties")
        return [p for p in props if isinstance(p, dict)] if isinstance(props, list) else []


# Args text copied per scan step: the copy is the scan's peak memory (32 MiB cost ~30 MB
# of peak RSS on a 259 MB trace), and 4 MiB steps scan faster, too (measured).
ARGS_SCAN_CHUNK = 4 << 20


def _whole_map(blob: Any) -> mmap.mmap | None:
    """The memory map under a memory-mapped blob that maps exactly the blob (its slices
    are the blob's bytes, made without a view object: args of 457k rows read in 0.134 s
    instead of 0.152 s), else None."""
    mapping = getattr(blob, "_mmap", None)
    if not isinstance(mapping, mmap.mmap) or getattr(blob, "offset", None) != 0:
        return None
    return mapping if len(mapping) == len(blob) else None


def _release_pages(blob: Any, start: int, stop: int) -> None:
    """Drop the pages of [start, stop) of a read-only memory-mapped blob from this process
    (the kernel's page cache keeps them; touching them again maps them back)."""
    mapping = getattr(blob, "_mmap", None)
    if mapping is None or not hasattr(mapping, "madvise"):
        return
    page = mmap.PAGESIZE
    lo = start - start % page
    hi = min(stop, len(blob))
    if hi > lo:
        with contextlib.suppress(OSError, ValueError):
            mapping.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def empty_columns(spec: dict[str, str], n: int = 0) -> dict[str, np.ndarray]:
    return {k: np.empty(n, dtype=v) for k, v in spec.items()}


def model_nbytes(model: TraceModel) -> int:
    """Memory the model holds: its columns and what was derived from it (indexes, trees)."""
    return columns_nbytes(model) + model.derived_nbytes()


def columns_nbytes(model: TraceModel) -> int:
    """Memory its columns hold: what a view's cost is measured against (what was derived
    meanwhile varies with the views asked before)."""
    cols = sum(a.nbytes for a in (*model.events.values(), *model.memory.values()))
    return int(cols + sum(c.nbytes for c in model.sparse.values()))


_KIND_PHASE_COUNTS = "_kind_phase_counts"
_COMPLETE_NAMES = "_complete_names"
_BLOCK = 1 << 16  # rows at a time: temporaries of ~0.5 MB, reused, not fresh pages per block


def _kind_phase_counts(model: TraceModel) -> np.ndarray:
    """Events per (kind, phase)."""
    kind, ph, phases = model.events["kind"], model.events["ph"], int(max(Phase)) + 1
    cells = (int(max(Kind)) + 1) * phases
    counts = np.zeros(cells, dtype=np.int64)
    for lo in range(0, kind.size, _BLOCK):
        flat = kind[lo : lo + _BLOCK].astype(np.intp) * phases + ph[lo : lo + _BLOCK]
        counts += np.bincount(flat, minlength=cells)
    return counts.reshape(-1, phases)


def _complete_names(model: TraceModel) -> list[np.ndarray]:
    """Per kind, the distinct name codes of its `X` events: marked in a (kind, name)
    table, or, for a name table too big for that, by sorting."""
    ev, kinds, names = model.events, int(max(Kind)) + 1, max(len(model.names), 1)
    present = np.zeros(kinds * names, dtype=bool) if kinds * names <= 1 << 24 else None
    found: list[np.ndarray] = []
    for lo in range(0, ev["kind"].size, _BLOCK):
        rows = slice(lo, lo + _BLOCK)
        complete = ev["ph"][rows] == Phase.COMPLETE
        flat = ev["kind"][rows][complete].astype(np.int64) * names + ev["name"][rows][complete]
        if present is not None:
            present[flat] = True
        else:
            found.append(np.unique(flat))
    if present is not None:
        flat = np.flatnonzero(present)
    else:
        flat = np.unique(np.concatenate(found)) if found else np.empty(0, np.int64)
    kind_of = flat // names
    return [flat[kind_of == k] % names for k in range(kinds)]
