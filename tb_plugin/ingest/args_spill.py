"""The writer of a load's args spill file (`ModelBuilder`'s): each chunk's raw args in
file order. While a load's args are small they are written at once, in the decoding
thread (a thread made per load costs more than the writes of a small one); past that, in
a thread of its own, queued up to `QUEUED_WRITE_BYTES`, so the writes overlap the
decoding (they let the GIL go) and a write the disk is slow to take does not hold it up
at once (the page cache throttles writers when much is dirty). A big load's spill
file (`direct`) is written in aligned blocks without the page cache (`spill_blocks`)."""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO

from .spill_blocks import BlockWriter

# A load's first args bytes written in the decoding thread: a run of 2,048 small ranks
# makes 2,048 loads, and a thread for each cost more than its writes.
INLINE_WRITE_BYTES = 1 << 20
# Args bytes queued for the writer thread at most (a write waits for room past it).
QUEUED_WRITE_BYTES = 16 << 20


class ArgsSpill:
    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink
        self.written = 0  # bytes handed over so far
        self._thread: ThreadPoolExecutor | None = None  # made once the args grow large
        self._pending: deque[tuple[Future[object], int]] = deque()  # with their sizes
        self._queued = 0
        self._blocks: BlockWriter | None = None  # the thread's writer of a direct spill
        self.direct = False  # set before the first write: written by `BlockWriter`

    def write(self, args: Any) -> None:
        """Append `args` (a bytes-like object) after every earlier write."""
        size = len(args)
        self.written += size
        if self._thread is None and self.written < INLINE_WRITE_BYTES:
            self.sink.write(args)
            return
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="kinetoscope-args")
            self._blocks = _block_writer(self.sink) if self.direct else None
        while self._pending and self._queued + size > QUEUED_WRITE_BYTES:
            self._take_one()
        write = self._blocks.write if self._blocks is not None else self.sink.write
        self._pending.append((self._thread.submit(write, args), size))
        self._queued += size

    def _take_one(self) -> None:
        done, size = self._pending.popleft()
        self._queued -= size
        done.result()

    def wait(self) -> None:
        """Until every write is done; raises what the first failed one raised (once)."""
        failed: BaseException | None = None
        while self._pending:
            try:
                self._take_one()
            except BaseException as exc:  # noqa: BLE001 - raised below, after the rest
                failed = failed or exc
        if failed is not None:
            raise failed

    def close(self) -> None:
        """Every write done, the thread let go."""
        try:
            self.wait()
            if self._blocks is not None:
                self._blocks.close()
        finally:
            self._blocks = None
            if self._thread is not None:
                self._thread.shutdown()
                self._thread = None


def _block_writer(sink: BinaryIO) -> BlockWriter | None:
    """A block writer at the end of `sink`'s file (its buffered writes flushed), or None
    for a sink without one (memory) or where there is no `os.pwrite` (Windows)."""
    if not hasattr(os, "pwrite"):
        return None
    try:
        fd = sink.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    sink.flush()
    return BlockWriter(fd, sink.tell())
