"""Build a TraceModel from a trace file: decode batches, turn each into columns.

Per batch the work is a handful of C-speed passes (attribute gathers, hash interning,
one msgspec decode of the batch's args); no per-event Python objects outlive a batch.
Raw args go straight to a spill file, which the cache keeps and memory-maps.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
import tempfile
import threading
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from typing import Any, BinaryIO

import msgspec
import numpy as np

from ..store.categories import PHASE_CODES, Kind, Phase, kind_of
from ..store.model import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    TraceModel,
    decoders_for,
    empty_columns,
    file_identity,
)
from .decode import (
    DecodeReport,
    Piece,
    ProgressFn,
    Tail,
    TraceDecodeError,
    decode_tail,
    decode_whole_events,
    iter_event_batches,
    iter_event_pieces,
)
from .schema import CoreArgs, Event
from .values import lenient_int

_args_decoder, _one_args_decoder = decoders_for(CoreArgs)
_EMPTY_ARGS = CoreArgs()
_META = "M"


class Interner:
    """Values → dense codes, shared by every batch of one file."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def codes(self, items: list[Any]) -> np.ndarray:
        lookup = self.index.__getitem__
        try:
            return np.fromiter(map(lookup, items), dtype=np.int32, count=len(items))
        except KeyError:  # new values in this batch: add them, then look up again
            for value in dict.fromkeys(items):  # first-appearance order: stable codes
                if value not in self.index:
                    self.index[value] = len(self.values)
                    self.values.append(value)
            return np.fromiter(map(lookup, items), dtype=np.int32, count=len(items))


def _floats(values: list[Any], default: float = np.nan) -> np.ndarray:
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        return np.array([_to_float(v, default) for v in values], dtype=np.float64)


def _to_float(v: Any, default: float) -> float:
    if v is None:
        return default
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def _ints(values: list[Any], default: int = -1) -> np.ndarray:
    try:
        arr = np.array(values, dtype=np.int64)
        return arr
    except (TypeError, ValueError, OverflowError):
        return np.array([_to_int(v, default) for v in values], dtype=np.int64)


def _to_int(v: Any, default: int) -> int:
    number = lenient_int(v)
    return default if number is None else number


@dataclass
class Chunk:
    """Columns of one run of events, with codes into its own small string tables, so it
    can be built in another process and merged in order."""

    cols: dict[str, np.ndarray]
    tables: dict[str, list[Any]]
    args: bytes
    memory: dict[str, np.ndarray] | None
    meta: list[tuple[Any, Any, str, Any]]
    warnings: list[str]
    partial: bool = False
    used: int = 0  # bytes of the text slice these events came from (see decode_whole_events)


INTERNED = ("name", "cat", "pid", "tid")


def build_chunk(events: list[Event]) -> Chunk:
    """Turn decoded events into columns: a handful of C-speed passes per column."""
    interners = {k: Interner() for k in (*INTERNED, "ph")}
    phase_codes = interners["ph"].codes(list(map(attrgetter("ph"), events)))
    meta: list[tuple[Any, Any, str, Any]] = []
    meta_code = interners["ph"].index.get(_META)
    if meta_code is not None:
        is_meta = phase_codes == meta_code
        meta = _meta_entries(list(compress(events, is_meta.tolist())))
        events = list(compress(events, (~is_meta).tolist()))
        phase_codes = phase_codes[~is_meta]
    n = len(events)
    phase_table = np.array(
        [
            PHASE_CODES.get(p, Phase.OTHER) if isinstance(p, str) else Phase.OTHER
            for p in interners["ph"].values
        ],
        dtype=np.uint8,
    )
    cols: dict[str, np.ndarray] = {"ph": phase_table[phase_codes]}
    for key in INTERNED:
        cols[key] = interners[key].codes(list(map(attrgetter(key), events)))
    cols["kind"] = _kinds(interners["cat"].values, interners["name"].index, cols)
    cols["ts"] = _floats(list(map(attrgetter("ts"), events)))
    dur = _floats(list(map(attrgetter("dur"), events)), 0.0)
    dur[~np.isfinite(dur) | (dur < 0)] = 0.0
    cols["dur"] = dur
    flow = _ints(list(map(attrgetter("id"), events)))
    cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, flow, -1)
    raws, blob, warnings = _utf8_args(list(map(attrgetter("args"), events)))
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=n)
    cols["args_end"] = np.cumsum(lengths)
    args = _core_args(raws, lengths)
    _arg_columns(cols, args)
    return Chunk(
        cols=cols,
        tables={k: interners[k].values for k in INTERNED},
        args=blob,
        memory=_memory_part(cols, args),
        meta=meta,
        warnings=warnings,
    )


def _utf8_args(raws: list[msgspec.Raw]) -> tuple[list[msgspec.Raw], bytes, list[str]]:
    """The args and their joined bytes. msgspec does not check the UTF-8 of args it keeps
    raw; every reader of them would fail, so bad bytes become U+FFFD here, once."""
    blob = b"".join(raws)  # type: ignore[arg-type]
    if blob.isascii():
        return raws, blob, []
    try:
        blob.decode("utf-8")
        return raws, blob, []
    except UnicodeDecodeError:
        pass
    fixed = [msgspec.Raw(bytes(r).decode("utf-8", "replace").encode("utf-8")) for r in raws]
    warning = "bytes that are not UTF-8 in event args were replaced by U+FFFD"
    return fixed, b"".join(fixed), [warning]  # type: ignore[arg-type]


def _kinds(categories: list[Any], names: dict[Any, int], cols: dict[str, np.ndarray]) -> np.ndarray:
    ph, cat = cols["ph"], cols["cat"]
    table = np.array(
        [[kind_of(c if isinstance(c, str) else "", p, "") for p in Phase] for c in categories],
        dtype=np.uint8,
    ).reshape(len(categories), len(Phase))
    kinds = table[cat, ph] if len(categories) else np.zeros(len(ph), dtype=np.uint8)
    memory_code = names.get("[memory]")
    if memory_code is not None:
        kinds[(ph == Phase.INSTANT) & (cols["name"] == memory_code)] = Kind.MEMORY
    return kinds


def _core_args(raws: list[msgspec.Raw], lengths: np.ndarray) -> Any:
    has = lengths > 2
    if has.all():
        return _decode_core_args(raws)
    args = np.full(len(raws), _EMPTY_ARGS, dtype=object)
    if has.any():
        parsed = np.empty(int(has.sum()), dtype=object)
        parsed[:] = _decode_core_args(list(compress(raws, has.tolist())))
        args[has] = parsed
    return args


def _arg_columns(cols: dict[str, np.ndarray], args: Any) -> None:
    def values(name: str) -> list[Any]:
        return list(map(attrgetter(name), args))

    external = _ints(values("external_id"))
    cols["external_id"] = np.where(external >= 0, external, _ints(values("external_id_lower")))
    cols["correlation"] = _ints(values("correlation"))
    cols["device"] = _ints(values("device")).astype(np.int32)
    cols["stream"] = _ints(values("stream"))
    cols["blocks_per_sm"] = _floats(values("blocks_per_sm")).astype(np.float32)
    cols["occupancy"] = _floats(values("occupancy")).astype(np.float32)


def _memory_part(cols: dict[str, np.ndarray], all_args: Any) -> dict[str, np.ndarray] | None:
    rows = np.flatnonzero(cols["kind"] == Kind.MEMORY)
    if len(rows) == 0:
        return None
    args = [all_args[i] for i in rows.tolist()]  # memory events are a small share

    def values(name: str) -> list[Any]:
        return list(map(attrgetter(name), args))

    return {
        "row": rows.astype(np.int64),
        "bytes": _floats(values("nbytes"), 0.0),
        "addr": _ints(values("addr")),
        "device_type": _ints(values("device_type")).astype(np.int32),
        "device_id": _ints(values("device_id")).astype(np.int32),
        "total_allocated": _floats(values("total_allocated")),
        "total_reserved": _floats(values("total_reserved")),
    }


def _meta_entries(events: list[Event]) -> list[tuple[Any, Any, str, Any]]:
    raws = [e.args if len(e.args) else msgspec.Raw(b"{}") for e in events]
    out = []
    for e, a in zip(events, _decode_core_args(raws)):
        value = (
            a.name
            if a.name is not None
            else (a.sort_index if a.sort_index is not None else a.labels)
        )
        out.append((e.pid, e.tid, str(e.name), value))
    return out


def build_text_chunk(body: bytes) -> Chunk:
    """In a worker process: decode a text slice and build its columns."""
    report = DecodeReport()
    events, used = decode_whole_events(body, report)
    chunk = build_chunk(events)
    chunk.used = used
    chunk.warnings = report.warnings
    chunk.partial = report.partial
    return chunk


class ModelBuilder:
    """Merges chunks, in file order, into one model: global string tables, row offsets,
    and the raw args written to the spill file by a background thread."""

    def __init__(self, args_sink: BinaryIO) -> None:
        self.interners = {k: Interner() for k in INTERNED}
        self.parts: list[dict[str, np.ndarray]] = []
        self.mem_parts: list[dict[str, np.ndarray]] = []
        self.meta: list[tuple[Any, Any, str, Any]] = []
        self.warnings: list[str] = []
        self.partial = False
        self.args_sink = args_sink
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kinetoscope-args")
        self._pending_write: Future[int] | None = None
        self.args_total = 0
        self.rows = 0

    def merge(self, chunk: Chunk) -> None:
        self.meta.extend(chunk.meta)
        self.warnings.extend(w for w in chunk.warnings if w not in self.warnings)
        self.partial = self.partial or chunk.partial
        cols = chunk.cols
        n = len(cols["ts"])
        if n == 0:
            return
        for key in INTERNED:
            interner = self.interners[key]
            mapping = interner.codes(chunk.tables[key])
            cols[key] = mapping[cols[key]]
        cols["args_end"] = cols["args_end"] + self.args_total
        self.args_total += len(chunk.args)
        # Writes release the GIL: a writer thread overlaps them with decoding.
        if self._pending_write is not None:
            self._pending_write.result()
        self._pending_write = self._writer.submit(self.args_sink.write, chunk.args)
        if chunk.memory is not None:
            chunk.memory["row"] = chunk.memory["row"] + self.rows
            self.mem_parts.append(chunk.memory)
        self.parts.append(cols)
        self.rows += n

    def flush(self) -> None:
        if self._pending_write is not None:
            self._pending_write.result()
            self._pending_write = None
        self._writer.shutdown()

    def finish(
        self, header: dict[str, Any], report: DecodeReport, source: dict[str, Any], args_blob: Any
    ) -> TraceModel:
        events = _concat(self.parts, EVENT_COLUMNS)
        memory = _concat(self.mem_parts, MEMORY_COLUMNS)
        warnings = list(report.warnings) + [w for w in self.warnings if w not in report.warnings]
        model = TraceModel(
            events=events,
            memory=memory,
            names=[_text(v) for v in self.interners["name"].values],
            categories=[_text(v) for v in self.interners["cat"].values],
            pids=list(self.interners["pid"].values),
            tids=list(self.interners["tid"].values),
            args_blob=args_blob,
            header=header,
            partial=report.partial or self.partial,
            warnings=warnings,
            source=source,
        )
        for pid, tid, kind, value in self.meta:
            if kind == "process_name" and value is not None:
                model.process_names[str(pid)] = str(value)
            elif kind == "thread_name" and value is not None:
                model.thread_names[f"{pid}/{tid}"] = str(value)
            elif kind == "process_labels" and value is not None:
                model.process_labels[str(pid)] = str(value)
            elif kind == "process_sort_index":
                model.process_sort[str(pid)] = _to_int(value, 0)
            elif kind == "thread_sort_index":
                model.thread_sort[f"{pid}/{tid}"] = _to_int(value, 0)
        return model


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _decode_core_args(raws: list[msgspec.Raw]) -> list[CoreArgs]:
    try:
        # One join, then one copy to frame it (`b"[" + ... + b"]"` copies twice).
        listed = b"".join((b"[", b",".join(raws), b"]"))  # type: ignore[arg-type]
        return _args_decoder.decode(listed)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        out = []
        for r in raws:
            try:
                out.append(_one_args_decoder.decode(r) if len(r) else _EMPTY_ARGS)
            except (
                msgspec.DecodeError,
                msgspec.ValidationError,
                UnicodeDecodeError,
                RecursionError,
            ):
                out.append(_EMPTY_ARGS)
        return out


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


def build_model(
    path: str, args_path: str | None = None, progress: ProgressFn | None = None
) -> TraceModel:
    """Decode `path` into a TraceModel. Raw args are spilled to `args_path` (or to an
    anonymous temporary file) and memory-mapped, so they never sit in the heap."""
    source = file_identity(path)
    if not stat.S_ISREG(os.stat(path).st_mode):
        # Opening a FIFO would block this thread until some writer appears.
        raise TraceDecodeError("not_a_file", "it is not a regular file, so it is not read", 0)
    report = DecodeReport()
    if args_path:
        sink: BinaryIO = open(args_path, "w+b")  # noqa: SIM115 - closed below
    else:
        sink = tempfile.TemporaryFile(prefix="kinetoscope-args-")  # noqa: SIM115
    builder = ModelBuilder(sink)
    try:
        with open(path, "rb") as f:
            workers = _parallel_workers(source["size"], path)
            if workers:
                _decode_in_processes(f, source["size"], report, progress, builder, workers)
            else:
                for batch in iter_event_batches(f, source["size"], report, progress):
                    builder.merge(build_chunk(batch))
        builder.flush()
        sink.flush()
        blob: Any = np.memmap(sink, dtype=np.uint8, mode="r") if builder.args_total > 0 else b""
    finally:
        builder.flush()
        sink.close()
    header = {k: v for k, v in report.header.items() if k != "traceEvents"}
    return builder.finish(header, report, source, blob)


# --- decoding in worker processes -------------------------------------------------------

# Decoding happens in this process unless KINETOSCOPE_DECODE_PROCESSES asks for workers
# (N >= 2), and then only for files with at least this much text. Workers cost more than
# they save on the machines measured (2 cores, shared): each starts an interpreter and
# imports numpy and msgspec (~0.3 s of CPU), every slice and chunk is pickled across, and
# every process holds its own chunk. A 259 MB trace took ~1.3 s more CPU and ~100 MB more
# RSS with two workers for no shorter wall time; a 1 GB one took 25 % more CPU and went
# over 1x its JSON size in RSS (in-process: 0.93x), and was faster only on idle cores.
PARALLEL_MIN_TEXT = 640 << 20
_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _parallel_workers(size: int, path: str) -> int:
    env = os.environ.get("KINETOSCOPE_DECODE_PROCESSES")
    wanted = int(env) if env and env.isdigit() else 0
    if wanted < 2:
        return 0
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    # Traces compress about 30x; a plain file's size is its text size.
    text_size = size * 30 if gz else size
    return wanted if text_size >= PARALLEL_MIN_TEXT else 0


def _get_pool(workers: int) -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            # spawn, not fork: TensorBoard is multi-threaded, and a forked copy of it
            # could deadlock on a lock some thread held.
            _pool = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn")
            )
        return _pool


def _decode_in_processes(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    builder: ModelBuilder,
    workers: int,
) -> None:
    """Text slices are decoded in worker processes while this one inflates the next;
    chunks merge in file order. A slice cut inside an event gives its unused text back to
    the cutter together with every later slice in flight (they are cut again)."""
    pool = _get_pool(workers)
    pieces = iter_event_pieces(f, total, report, progress)
    inflight: deque[tuple[bytes, Future[Chunk]]] = deque()
    piece: Piece | None = next(pieces)
    while True:
        if isinstance(piece, bytes) and len(inflight) <= workers:
            if piece:
                inflight.append((piece, pool.submit(build_text_chunk, piece)))
            piece = next(pieces)
            continue
        if not inflight:
            break
        body, future = inflight.popleft()
        chunk = future.result()
        builder.merge(chunk)
        if chunk.used == len(body):
            continue
        rest = body[chunk.used :] + b"".join(b for b, _ in inflight)
        for _, later in inflight:
            later.cancel()
        inflight.clear()
        if isinstance(piece, Tail):
            piece = Tail(rest + piece.text, in_array=True)
        else:
            piece = pieces.send(rest + (piece or b""))
    assert isinstance(piece, Tail)
    for batch in decode_tail(piece, report):
        builder.merge(build_chunk(batch))
