"""Build a TraceModel from a trace file: decode batches, turn each into columns.

Per batch the work is a handful of C-speed passes (attribute gathers, hash interning,
one msgspec decode of the batch's args); no per-event Python objects outlive a batch.
Raw args go straight to a spill file, which the cache keeps and memory-maps.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, BinaryIO

import numpy as np

from ..store.model import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    TraceModel,
    empty_columns,
    file_identity,
)
from . import storage
from .columns import INTERNED, Chunk, Interner, as_text, build_chunk, build_text_chunk, to_int
from .decode import DecodeReport, ProgressFn, TraceDecodeError, iter_event_batches
from .pieces import Piece, Tail, decode_tail, iter_event_pieces


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
            names=[as_text(v) for v in self.interners["name"].values],
            categories=[as_text(v) for v in self.interners["cat"].values],
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
                model.process_sort[str(pid)] = to_int(value, 0)
            elif kind == "thread_sort_index":
                model.thread_sort[f"{pid}/{tid}"] = to_int(value, 0)
        return model


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


# Gives the process pool, of that many workers, that decodes the text slices of one file:
# `store.pools.WorkerPools.decode_processes`, the owner of every pool.
DecodePool = Callable[[int], Executor]


def build_model(
    path: str,
    args_path: str | None = None,
    progress: ProgressFn | None = None,
    decode_pool: DecodePool | None = None,
) -> TraceModel:
    """Decode `path` into a TraceModel. Raw args are spilled to `args_path` (or to an
    anonymous temporary file) and memory-mapped, so they never sit in the heap.
    With `decode_pool`, a big file may be decoded in worker processes (see
    `PARALLEL_MIN_TEXT`); without it, always in this process."""
    source = file_identity(path)
    if not storage.stat(path).regular:
        # Opening a FIFO would block this thread until some writer appears.
        raise TraceDecodeError("not_a_file", "it is not a regular file, so it is not read", 0)
    report = DecodeReport()
    if args_path:
        sink: BinaryIO = open(args_path, "w+b")  # noqa: SIM115 - closed below
    else:
        sink = tempfile.TemporaryFile(prefix="kinetoscope-args-")  # noqa: SIM115
    builder = ModelBuilder(sink)
    try:
        # A remote object is streamed in blocks through the same decoder (never read
        # whole first); worker processes get text slices, never the path.
        with storage.open_binary(path) as f:
            workers = _parallel_workers(source["size"], path) if decode_pool else 0
            if decode_pool and workers:
                pool = decode_pool(workers)
                _decode_in_processes(f, source["size"], report, progress, builder, pool, workers)
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


def _parallel_workers(size: int, path: str) -> int:
    env = os.environ.get("KINETOSCOPE_DECODE_PROCESSES")
    wanted = int(env) if env and env.isdigit() else 0
    if wanted < 2:
        return 0
    with storage.open_binary(path) as f:
        gz = f.read(2) == b"\x1f\x8b"
    # Traces compress about 30x; a plain file's size is its text size.
    text_size = size * 30 if gz else size
    return wanted if text_size >= PARALLEL_MIN_TEXT else 0


def _decode_in_processes(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    builder: ModelBuilder,
    pool: Executor,
    workers: int,
) -> None:
    """Text slices are decoded in worker processes while this one inflates the next;
    chunks merge in file order. A slice cut inside an event gives its unused text back to
    the cutter together with every later slice in flight (they are cut again)."""
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
