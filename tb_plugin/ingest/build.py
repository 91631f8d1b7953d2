"""Build a TraceModel from a trace file: decode runs of events, turn each into columns.

A big file's text is cut into slices as it is inflated, and scanning threads read them
into columns (the compiled scanner, without the GIL) while this thread inflates the next
and merges the done ones, in file order, into the model (`model_builder`). Per run the
work is a handful of C-speed passes; no per-event Python objects outlive a run. Raw
args go straight to a spill file, which the cache keeps and memory-maps.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, BinaryIO, Union

import msgspec
import numpy as np

from ..model.trace_model import TraceModel
from . import storage
from .columns import Chunk
from .decode import DecodeReport, ProgressFn, TraceDecodeError, iter_event_batches
from .event_text import decode_run, skip_separator
from .formats import FORMATS, TraceFormat
from .heap import release_failed_load, return_freed_memory
from .model_builder import ModelBuilder, SpillDiskFull
from .naming import parse_trace_name
from .native_chunk import (
    as_chunk,
    chunk_from_text,
    release_scan_buffers,
    scan_slice,
    text_slice_chunk,
)
from .pieces import Piece, Seamed, Tail, decode_tail, iter_event_pieces, piece_text
from .scan_threads import THREADS_MIN_TEXT, scan_threads, text_size  # noqa: F401 - still importable here
from .schema import Event
from .spill_blocks import DIRECT_MIN_TEXT
from .storage import file_identity

# A file this small (on disk: gzip's text may be ~10 times as big) keeps its args in memory
# rather than in a spill file: the temporary file and its memory map cost more than a small
# rank's decoding (a 2,048-rank job's summaries load one small file after another).
ARGS_IN_MEMORY_MAX_FILE = 256 << 10
TRIM_AFTER_BYTES = 16 << 20  # a smaller load gives no memory back (heap.return_freed_memory)

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
    anonymous temporary file) and memory-mapped, so they never sit in the heap; without
    `args_path`, a small file's (ARGS_IN_MEMORY_MAX_FILE) are kept as bytes.
    With `decode_pool`, a big file may be decoded in worker processes (see
    `PARALLEL_MIN_TEXT`); without it, always in this process."""
    source = file_identity(path)
    if not storage.stat(path).regular:
        # Opening a FIFO would block this thread until some writer appears.
        raise TraceDecodeError("not_a_file", "it is not a regular file, so it is not read", 0)
    report = DecodeReport()
    sink = _args_sink(args_path, source["size"])
    builder = ModelBuilder(sink, report, source["size"], _spill_dir(args_path, sink))
    try:
        # A remote object is streamed in blocks through the same decoder (never read
        # whole first); worker processes get text slices, never the path.
        with storage.open_binary(path) as f:
            trace_format = _format_of(path)
            if trace_format.decoder:
                trace_format.decode()(f, source["size"], report, progress, builder.merge)
            else:
                _decode_json(f, source["size"], report, progress, builder, decode_pool)
        builder.flush()
        sink.flush()
        blob: Any = b""
        if builder.args_total > 0:
            if isinstance(sink, io.BytesIO):
                blob = sink.getvalue()
            else:
                blob = np.memmap(sink, dtype=np.uint8, mode="r")
    except BaseException as exc:
        builder.flush()
        builder.drop()
        release_failed_load(exc)
        if isinstance(exc, SpillDiskFull) and not args_path:  # no other disk to try
            raise TraceDecodeError("too_large", exc.message, 0) from None
        raise
    finally:
        builder.flush()
        sink.close()
        release_scan_buffers()
    header = {k: v for k, v in report.header.items() if k != "traceEvents"}
    model = builder.finish(header, report, source, blob)
    if report.held_bytes >= TRIM_AFTER_BYTES:  # a small one frees little: the trim costs more
        return_freed_memory()
    if model.partial and len(model) == 0:  # damaged before its first event: say so
        raise TraceDecodeError(
            "unreadable",
            "no event could be read ("
            + "; ".join(w.split("; kept")[0] for w in model.warnings[:2])
            + ")",
            0,
        )
    return model


def _args_sink(args_path: str | None, size: int) -> BinaryIO:
    """Where the raw args go (the caller closes it): `args_path`, else memory for a small
    file (`io.BytesIO`), else an anonymous temporary file."""
    if args_path:
        return open(args_path, "w+b")  # noqa: SIM115 - closed by the caller
    if size <= ARGS_IN_MEMORY_MAX_FILE:
        return io.BytesIO()
    return tempfile.TemporaryFile(prefix="kinetoscope-args-")  # noqa: SIM115


def _spill_dir(args_path: str | None, sink: BinaryIO) -> str | None:
    """The folder whose disk holds the spill; None where it is held in memory."""
    if isinstance(sink, io.BytesIO):
        return None
    return os.path.dirname(os.path.abspath(args_path)) if args_path else tempfile.gettempdir()


def _decode_json(
    f: BinaryIO,
    size: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    builder: ModelBuilder,
    decode_pool: DecodePool | None,
) -> None:
    """The JSON fast path: text slices scanned in threads (or worker processes) for big
    files, else batch after batch in this thread."""
    text = text_size(f, size)
    builder.args.direct = text >= DIRECT_MIN_TEXT
    workers = _parallel_workers(text) if decode_pool else 0
    threads = scan_threads(text)
    if decode_pool and workers:
        work = _SliceWork(decode_pool(workers), workers, text_slice_chunk)
        _decode_slices(f, size, report, progress, builder, work)
    elif threads > 1:
        with ThreadPoolExecutor(threads, thread_name_prefix="kinetoscope-scan") as pool:
            work = _SliceWork(pool, threads, scan_slice)
            _decode_slices(f, size, report, progress, builder, work)
    else:
        for batch in iter_event_batches(f, size, report, progress, read_text=chunk_from_text):
            builder.merge(as_chunk(batch))


def _format_of(path: str) -> TraceFormat:
    """The format of the file at `path`: the one its name states, else JSON (torch's
    names and any other name the CLI is pointed at)."""
    parsed = parse_trace_name(path.rsplit("/", 1)[-1])
    return FORMATS[parsed.format] if parsed is not None else FORMATS["json"]


# --- decoding in worker threads or processes --------------------------------------------

# Decoding happens in this process unless KINETOSCOPE_DECODE_PROCESSES asks for workers
# (N >= 2), and then only for files with at least this much text. Workers cost more than
# they save on the machines measured (2 cores, shared): each starts an interpreter and
# imports numpy and msgspec (~0.3 s of CPU), every slice and chunk is pickled across, and
# every process holds its own chunk. A 259 MB trace took ~1.3 s more CPU and ~100 MB more
# RSS with two workers for no shorter wall time; a 1 GB one took 25 % more CPU and went
# over 1x its JSON size in RSS (in-process: 0.93x), and was faster only on idle cores.
PARALLEL_MIN_TEXT = 640 << 20


def _parallel_workers(text: int) -> int:
    env = os.environ.get("KINETOSCOPE_DECODE_PROCESSES")
    wanted = int(env) if env and env.isdigit() else 0
    if wanted < 2:
        return 0
    return wanted if text >= PARALLEL_MIN_TEXT else 0


class _SliceWork(msgspec.Struct):
    """Who decodes the text slices: a pool of `workers`, running `task` on each slice."""

    pool: Executor
    workers: int
    task: Callable[[bytes | Seamed], Chunk]


Slice = Union[bytes, Seamed]
InFlight = deque[tuple[Slice, "Future[Chunk]"]]


def _stop_at_damaged_slice(body: bytes, report: DecodeReport, inflight: InFlight) -> list[Event]:
    """A slice of gzip text that does not decode whole: after damage the inflater repeats
    earlier text at wrong places, so only the events before the damage are kept (the
    slice decoded again as `decode_run` does for gzip text) and nothing after is read."""
    for _, later in inflight:
        later.cancel()
    inflight.clear()
    part = DecodeReport(compressed=True)
    events = decode_run(body, skip_separator(body, 0), len(body), part, 0)
    report.partial = report.stopped = True
    # A scanning thread's offsets count from the start of its slice.
    said = [w.replace("of the decompressed text", "of a slice of the text") for w in part.warnings]
    report.warnings.extend(w for w in said if w not in report.warnings)
    if not part.stopped:
        report.warnings.append("the gzip data is damaged: stopped reading there")
    return events


def _decode_slices(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    builder: ModelBuilder,
    work: _SliceWork,
) -> None:
    """Text slices are decoded in workers (threads or processes) while this thread
    inflates the next; chunks merge in file order. A slice cut inside an event gives its
    unused text back to the cutter together with every later slice in flight (they are
    cut again)."""
    pieces = iter_event_pieces(f, total, report, progress)
    inflight: InFlight = deque()
    piece: Piece | None = next(pieces)
    while True:
        # Twice as many slices as workers: slices are inflated ahead while every worker
        # scans (1 MiB each: a few MiB more held).
        if isinstance(piece, (bytes, Seamed)) and len(inflight) < 2 * work.workers:
            if len(piece):
                inflight.append((piece, work.pool.submit(work.task, piece)))
            piece = next(pieces)
            continue
        if not inflight:
            break
        body, future = inflight.popleft()
        chunk = future.result()
        if chunk.partial and report.compressed:
            damaged = _stop_at_damaged_slice(piece_text(body), report, inflight)
            builder.merge(as_chunk(damaged))
            pieces.close()
            return
        builder.merge(chunk)
        if chunk.used == len(body):
            continue
        text = piece_text(body)
        rest = text[chunk.used :] + b"".join(piece_text(b) for b, _ in inflight)
        for _, later in inflight:
            later.cancel()
        inflight.clear()
        if isinstance(piece, Tail):
            piece = Tail(rest + piece.text, in_array=True, in_object=piece.in_object)
        else:
            piece = pieces.send(rest + (piece_text(piece) if piece is not None else b""))
    assert isinstance(piece, Tail)
    for batch in decode_tail(piece, report, read_text=chunk_from_text):
        builder.merge(as_chunk(batch))
