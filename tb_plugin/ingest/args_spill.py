"""The writer of a load's args spill file (`ModelBuilder`'s): each chunk's raw args in
file order, a large write in a thread of its own so that it overlaps the decoding of the
next chunk (writes let the GIL go), a small one at once."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

# Below this a chunk's args are written in the decoding thread: a thread (made per load)
# cost more than the write itself (a run of 2,048 small ranks makes 2,048 loads).
INLINE_WRITE_BYTES = 1 << 20


class ArgsSpill:
    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink
        self._thread: ThreadPoolExecutor | None = None  # made for the first large write
        self._pending: Future[int] | None = None

    def write(self, args: bytes) -> None:
        """Append `args` after every earlier write."""
        self.wait()
        if len(args) < INLINE_WRITE_BYTES:
            self.sink.write(args)
            return
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="kinetoscope-args")
        self._pending = self._thread.submit(self.sink.write, args)

    def wait(self) -> None:
        """Until the last write is done (raises what it raised)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def close(self) -> None:
        """Every write done, the thread let go."""
        try:
            self.wait()
        finally:
            if self._thread is not None:
                self._thread.shutdown()
                self._thread = None
