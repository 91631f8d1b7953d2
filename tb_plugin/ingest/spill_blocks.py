"""The args spill's writes to its file in aligned blocks with O_DIRECT: they skip the page
cache. A multi-GB spill written through the page cache cost more system time than any view
(16 GB V100 trace: ~10 GB of args, 35 s of system time in the report): each page is
allocated, copied into, dirtied and written back while the load runs, and pushes the views'
memory into reclaim. The views read a few hundred rows of it (roofline's work args, kernels'
launch settings, memory's call stacks), which a direct write leaves to be read from the
disk when asked for.

Only for big loads (`DIRECT_MIN_TEXT`): a smaller one's spill is written and read back
through the page cache as before (measured on a 1 GB V100 trace: the same CPU either way, and
the trace view's scans of the whole spill then read it from memory, not the disk). Where
O_DIRECT is refused (tmpfs before Linux 6.6, other systems) the writes stay buffered."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from typing import Any

import numpy as np

# Text (estimated: `scan_threads.text_size`) from which a load's spill is written direct.
DIRECT_MIN_TEXT = 2 << 30
# Bytes per write; the copy through this buffer (aligned, as O_DIRECT asks) is one
# memmove without the GIL.
BLOCK_BYTES = 4 << 20
_O_DIRECT = getattr(os, "O_DIRECT", 0) if sys.platform.startswith("linux") else 0


class BlockWriter:
    """Appends bytes to the file `fd` from its offset `start` on, in `BLOCK_BYTES` writes at
    block-aligned offsets, direct from the first whole block on. Call `close` to write the
    last partial block."""

    def __init__(self, fd: int, start: int) -> None:
        self.fd = fd
        self.offset = start  # the file's bytes written so far
        self.direct = False
        self.direct_bytes = 0  # of them written with O_DIRECT
        self._may_go_direct = _O_DIRECT != 0
        self._block = mmap.mmap(-1, BLOCK_BYTES)
        self._block_array: np.ndarray | None = np.frombuffer(self._block, dtype=np.uint8)
        self._block_address = self._block_array.ctypes.data
        self._fill = 0
        # The first block ends at a block boundary of the file (O_DIRECT's offsets).
        self._limit = BLOCK_BYTES - start % BLOCK_BYTES

    def write(self, data: Any) -> None:
        """Append `data` (a bytes-like object)."""
        source = np.frombuffer(data, dtype=np.uint8)
        address, left = source.ctypes.data, source.size
        while left:
            n = min(left, self._limit - self._fill)
            ctypes.memmove(self._block_address + self._fill, address, n)
            self._fill += n
            address += n
            left -= n
            if self._fill == self._limit:
                self._write_block()

    def close(self) -> None:
        """Write what is left (buffered: a partial block's length is not aligned)."""
        self._set_direct(False)
        self._write_block()
        self._block_array = None  # its export of the map, which `close` refuses
        self._block.close()

    def _write_block(self) -> None:
        if self._may_go_direct and not self.direct:
            self._set_direct(self._fill == BLOCK_BYTES)  # a whole block is aligned
        view = memoryview(self._block)[: self._fill]
        done = 0
        try:
            while done < len(view):
                done += os.pwrite(self.fd, view[done:], self.offset + done)
        except OSError as exc:
            if not self.direct or exc.errno != 22:  # EINVAL: O_DIRECT refused here
                raise
            self._may_go_direct = False
            self._set_direct(False)
            while done < len(view):
                done += os.pwrite(self.fd, view[done:], self.offset + done)
        finally:
            view.release()
        self.offset += done
        self.direct_bytes += done if self.direct else 0
        self._fill = 0
        self._limit = BLOCK_BYTES

    def _set_direct(self, direct: bool) -> None:
        if direct == self.direct:
            return
        import fcntl  # not on Windows, where `_O_DIRECT` is 0 and this is not called

        flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        flags = flags | _O_DIRECT if direct else flags & ~_O_DIRECT
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETFL, flags)
        except OSError:
            self._may_go_direct = False
            return
        self.direct = direct
