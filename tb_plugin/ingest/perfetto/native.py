"""Read a Perfetto protobuf trace with the compiled reader (`_native.c`), into the same
columns, warnings and header as the protobuf runtime's reader (`events.py`) makes.

The compiled reader reads runs of whole packets without the GIL and without a Python
object per packet or event: it holds the state between packets (interned tables, tracks,
open slices, flows, events in begin order) and cuts chunks of columns as `read.py` cuts
its batches (smaller ones: `BATCH`). Python keeps the rest, by the same code as the other
reader: the runs (`stream.packet_runs`), compressed packets (inflated step by step), legacy
JSON values, Chrome metadata, a category's arrow kind, and chunks whose core args need the column
builder's own reading. `KINETOSCOPE_SCANNER=python` (or no compiler at install) reads
with `events.py` instead.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from queue import Empty, Queue
from typing import Any, BinaryIO, Union

from ..columns import Chunk, build_chunk
from ..heap import return_freed_memory
from ..limits import load_memory_bytes, max_open_slices
from ..scan_threads import THREADS_MIN_TEXT, scan_threads, text_size
from ..text_blocks import DecodeReport, ProgressFn, TraceDecodeError, too_large, too_many_open
from .callbacks import ReaderCallbacks
from .chunks import chunk_of
from .rules import (
    BAD_VALUE,
    CHECK_EVERY,
    HOLD_MAX,
    failure,
    finish_warnings,
    meta_events,
    native_module,
    progress_steps,
)
from .stream import inflated_runs, kept_before_damage, one_ahead, packet_runs

_DONE, _COMPRESSED, _TOO_LARGE = 0, 1, 2
# A file of about this much text (a gzipped one's guessed as `text_size` guesses it) or
# more is read in a thread beside the inflating: several runs (`stream.RUN_BYTES`).
THREAD_MIN_TEXT = 32 << 20
# Events and args bytes of a chunk, at most: smaller than read.py's batches (`rules.BATCH`),
# as the chunks a delivery cuts are merged while the next is cut and one at a time is held
# (a slice spanning a whole trace delivers all its events at its end; a chunk's rows take
# ~170 bytes each of columns besides their args): the H100 OWLv2 trace tiled 7 times
# peaked 147-151 MB at 16,384, 137-142 MB at 8,192, for 0.4 % more instructions.
BATCH = 8_192
BATCH_BYTES = 8 << 20
# Chunks cut by the reading thread and not yet merged by the other, at most: the reading
# thread waits for room (`_Cut`; a run's markers never wait). A delivery of the ~100k
# events held behind a slice that ends cuts chunks faster than they merge; unbounded, they
# all sat in the heap at once (their rows 8 bytes a column), beside the model's columns at
# the end of the load.
CHUNKS_IN_FLIGHT = 2
Raw = dict[str, Any]  # one of the compiled reader's chunks
# The reading thread tells this one a run's status once read, its chunks, None at its end.
Message = Union[int, Raw, None]


def available() -> bool:
    """Whether Perfetto traces are read by the compiled reader."""
    return native_module() is not None


def decode_native(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    merge: Callable[[Chunk], None],
) -> None:
    """As `read.decode_perfetto`, with the compiled reader."""
    _read_file(f, total, report, progress, merge)
    # The reader's tables and held events are gone: their pages go back before the
    # builder joins its columns (the load's peak), not after it.
    return_freed_memory()


def _read_file(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None,
    merge: Callable[[Chunk], None],
) -> None:
    module = native_module()
    assert module is not None
    header: dict[str, Any] = {}
    reader = module.Reader(
        ReaderCallbacks(header),
        cap=load_memory_bytes(),
        check_every=CHECK_EVERY,
        batch=BATCH,
        batch_bytes=BATCH_BYTES,
        seed=int.from_bytes(os.urandom(8), "little"),
        max_open=max_open_slices(),
    )
    threads = _threads(f, total)
    progress, step = progress_steps(progress, total)
    load = _Load(reader, report, merge, step)
    with kept_before_damage(report, lambda: reader.packets):
        runs = packet_runs(f, total, report, progress)
        if threads:
            load.read_in_thread(runs)
        else:
            for run in one_ahead(runs):
                load.read(run, nested=False)
                load.deliver(reader.slots > HOLD_MAX)
    finish_warnings(report, *reader.finish())
    load.deliver(True)
    reader.flush()
    load.merge_chunks()
    merge(build_chunk(meta_events(reader.meta())))
    report.header.update(header)


def _threads(f: BinaryIO, total: int) -> bool:
    """Whether runs are read in a thread of their own: for a file of a few runs or more
    (`THREAD_MIN_TEXT`), where the JSON scanner's threads wait for 128 MB (its threads
    hold slices in flight and arenas of their own; this one thread holds a run more: on
    the H100 OWLv2 trace, 56 MB of JSON, 17 MB of packets, 93 -> 94 MB of peak RSS, and
    0.21 s of CPU in one thread became 0.13 s and 0.08 s beside it).
    KINETOSCOPE_SCAN_THREADS decides where set (1: no); one core says no."""
    big = text_size(f, total) >= THREAD_MIN_TEXT
    return scan_threads(THREADS_MIN_TEXT if big else 0) > 1  # the variable, set, at any size


class _Load:
    """One file's runs through the compiled reader, its chunks to the builder."""

    def __init__(
        self,
        reader: Any,
        report: DecodeReport,
        merge: Callable[[Chunk], None],
        step: Callable[[], None] | None,
    ) -> None:
        self.reader, self.report, self.merge, self.step = reader, report, merge, step
        self.module: Any = native_module()
        self.cap, self.max_open = load_memory_bytes(), max_open_slices()

    def too_large(self) -> TraceDecodeError:
        """The refusal: of too many slices open at once, else of the memory held."""
        events = self.report.event_count + self.reader.slots
        if self.reader.open_slices > self.max_open:
            return too_many_open(self.max_open, events)
        return too_large(self.cap, events)

    def read_in_thread(self, runs: Iterator[memoryview]) -> None:
        """The runs read in a reading thread (the compiled reader lets the GIL go) while this
        one inflates the runs ahead, checks their packets and, while it is the faster of the
        two, encodes the args that need no sequence state (`prepare_packets`), and merges
        the chunks as the reading thread cuts them (a slice that spans a whole trace holds
        its events until its end: then they go out at once, a few chunks at a time held,
        not all of them). The reading thread goes on to the next run once a run's packets
        are read (`_Pipeline`), so a run's chunks merge here while it reads the next; a run
        with compressed packets stops it (this thread reads them, then the rest of that
        run). The reader's order is one reader's, and the text counts as `one_ahead` counts
        it (the run after a run inflated before its compressed packets are read); a run's
        prepared args (at most `PREPARED_GROWTH` times its bytes) are not counted."""
        with ThreadPoolExecutor(1, thread_name_prefix="kinetoscope-perfetto") as pool:
            pipeline = _Pipeline(self, runs, pool)
            try:
                pipeline.run()
            except BaseException:  # a limit, a deadline: the reading thread is let finish
                pipeline.abandon()
                raise

    def read_top(
        self, run: memoryview, checks: bytes, prepared: bytes, cut: _Cut
    ) -> tuple[int, int, bytes | None]:
        """In the reading thread: a run up to its end or its first packet of compressed
        packets; its status to `cut` once its packets are read (the next run may then
        start), then its events delivered, each chunk to `cut` as it is cut; None last."""
        reader = self.reader
        try:
            status, pos, data = reader.read(run, 0, False, self.report.held_bytes, checks, prepared)
            if status == _TOO_LARGE:
                raise self.too_large()
            cut.put(status)
            if status == _DONE:
                all_done = reader.slots > HOLD_MAX
                while True:
                    more = reader.deliver(all_done)
                    for raw in reader.chunks():
                        cut.put(raw)
                    if not more:
                        break
            return status, pos, data
        finally:
            cut.put(None)

    def finish_compressed(self, run: memoryview, pos: int, data: bytes) -> None:
        """A run's packet of compressed packets (`data`), and the run's packets after it
        (from `pos`), read in this thread."""
        self._compressed(data)
        self.read(run, nested=False, start=pos)
        self.deliver(self.reader.slots > HOLD_MAX)

    def read(self, run: bytes | memoryview, nested: bool, start: int = 0) -> None:
        """The packets of a run (from `start`); a top-level packet of compressed packets
        is inflated here and its packets read in turn (events.py's _packet)."""
        reader, pos = self.reader, start
        while True:
            status, pos, data = reader.read(run, pos, nested, self.report.held_bytes)
            if status == _DONE:
                return
            if status == _TOO_LARGE:
                raise self.too_large()
            self._compressed(data)

    def _compressed(self, data: bytes) -> None:
        """A top-level packet of compressed packets: inflated step by step, its packets read
        run by run; a zlib or framing error skips it (after the packets before it)."""
        reader = self.reader
        try:
            for inner in inflated_runs(data, self.report, self.step):
                self.read(inner, nested=True)
                if reader.over_cap(self.report.held_bytes):
                    raise self.too_large()
                self.deliver(False)  # a packet may inflate to gigabytes
        except BAD_VALUE as err:
            reader.skip(failure(err))
        if reader.count_packet(self.report.held_bytes):
            raise self.too_large()

    def deliver(self, all_done: bool) -> None:
        """The events done go out (events.py's _take), a chunk at a time."""
        while self.reader.deliver(all_done):
            self.merge_chunks()
        self.merge_chunks()

    def merge_chunks(self) -> None:
        self.merge_raws(self.reader.chunks())

    def merge_raws(self, raws: list[Raw]) -> None:
        for raw in raws:
            self.report.event_count += raw["events"]
            self.merge(chunk_of(raw))


class _Cut:
    """What the reading thread hands the merging one, in order. Only chunks wait for room
    (`CHUNKS_IN_FLIGHT` cut and not yet merged), not a run's markers (its status once read,
    its end): so the reading thread goes on while the merging one prepares the next run
    (with markers counted, the x7 H100 OWLv2 tile's reading thread waited ~0.3 s)."""

    def __init__(self) -> None:
        self.queue: Queue[Message] = Queue()
        self.room = threading.Semaphore(CHUNKS_IN_FLIGHT)
        self.waited = True  # the merging thread found nothing to take (since `_inflated`)

    def put(self, message: Message) -> None:
        if isinstance(message, dict):
            self.room.acquire()
        self.queue.put(message)

    def get(self) -> Message:
        try:
            return self.queue.get_nowait()
        except Empty:
            self.waited = True
            return self.queue.get()

    def merged(self) -> None:
        """A chunk taken with `get` is merged (or dropped): its room is free."""
        self.room.release()


class _Pipeline:
    """The runs through the reading thread, read one after another while this thread
    merges the chunks of the run before and inflates the run after: at most two runs
    handed to the reading thread (one read while the other delivers), one inflated
    ahead, and `CHUNKS_IN_FLIGHT` cut and not yet merged."""

    def __init__(self, load: _Load, runs: Iterator[memoryview], pool: ThreadPoolExecutor) -> None:
        self.load, self.runs, self.pool = load, runs, pool
        self.prepare, self.check = load.module.prepare_packets, load.module.check_packets
        self.seed = int.from_bytes(os.urandom(8), "little")
        self.cut = _Cut()
        self.handed: deque[tuple[Future[Any], memoryview]] = deque()
        self.error: BaseException | None = None  # met inflating: raised after the runs before

    def run(self) -> None:
        ahead = self._inflated()
        if ahead is not None:
            self._hand(ahead)
            ahead = self._inflated()
        while self.handed:
            message = self.cut.get()
            if message is None:  # the head run's end
                future, run = self.handed.popleft()
                status, pos, data = future.result()
                if status == _COMPRESSED:
                    self.load.finish_compressed(run, pos, data)
                    if ahead is not None:
                        self._hand(ahead)
                        ahead = self._inflated()
            elif isinstance(message, int):  # a run's packets read: the next may start
                if message == _DONE and ahead is not None:
                    self._hand(ahead)
                    ahead = self._inflated()
            else:
                try:
                    self.load.merge_raws([message])
                finally:
                    self.cut.merged()
        if self.error is not None:
            raise self.error

    def _hand(self, ahead: tuple[memoryview, bytes, bytes]) -> None:
        run, checks, prepared = ahead
        self.handed.append(
            (self.pool.submit(self.load.read_top, run, checks, prepared, self.cut), run)
        )

    def _inflated(self) -> tuple[memoryview, bytes, bytes] | None:
        """The next run, its packets' checks and their args prepared ahead; None at the end,
        or at an error (kept in `error`, raised once the runs before it are read)."""
        if self.error is not None:
            return None
        try:
            run = next(self.runs, None)
            if run is None:
                return None
            # Args are encoded ahead only if this thread waited for the reading one since the
            # run before; else it is the slower one and only checks (x7 OWLv2: ~60 of 99 runs).
            ahead, self.cut.waited = self.cut.waited, False
            checked = self.prepare(run, self.seed) if ahead else (self.check(run, self.seed), b"")
            return (run, *checked)
        except BaseException as err:  # damage, a limit, a deadline: after the runs before
            self.error = err
            return None

    def abandon(self) -> None:
        """The runs handed over and not started dropped; the one under way let finish (its
        messages taken, so that it never waits for room)."""
        for future, _ in self.handed:
            if not future.cancel():
                while (message := self.cut.get()) is not None:
                    if isinstance(message, dict):
                        self.cut.merged()
        self.handed.clear()
