"""A file's text blocks read and inflated in a thread of their own, a few blocks ahead.

The slices of a big file are scanned in threads while the loading thread cuts the text
and merges the chunks in file order; inflating there too made it the one thread all the
others waited for (a 253 MB trace: 0.09 s of its 0.23 s of CPU). File reads and isal's
inflate let the GIL go, so a thread of their own inflates beside the merging.

As the reader sees it nothing else changes: what the inflating adds to the load's
report (warnings, `partial`, `compressed`, `text_bytes`) and its progress calls come with
the block they came before, in the reader's thread (a progress callback may stop the load,
and the store's is per thread), and an error is raised where inflating inline raised it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import BinaryIO

import msgspec

from .text_blocks import DecodeReport, ProgressFn, decompressed_blocks

# Blocks inflated and waiting for the reader at most (besides the one being inflated):
# the slices in flight keep the scanners busy already, so one block ahead is enough to
# keep the inflating off the reader's path; each more held 1 MiB more at the peak
# (measured: 253 MB trace, load peak 136-137 MB with one, 136-140 with four).
AHEAD = 1


class _Step(msgspec.Struct):
    """A block (None: the end, or `error`) and the inflating's state when it was made."""

    block: bytes | None
    told: tuple[int, int] | None  # the last progress call before it
    warnings: int  # of the inflating report
    partial: bool
    compressed: bool
    text_bytes: int
    error: BaseException | None = None


class _Inflating:
    """The thread's side: `decompressed_blocks` into a bounded queue, with its own report."""

    def __init__(self, f: BinaryIO, total: int, block_size: int) -> None:
        self.report = DecodeReport()
        self.steps: queue.Queue[_Step] = queue.Queue(AHEAD)
        self.stop = threading.Event()
        self._told: tuple[int, int] | None = None
        self._args = (f, total, block_size)
        self.thread = threading.Thread(target=self._run, name="kinetoscope-inflate", daemon=True)

    def _tell(self, done: int, total: int) -> None:
        self._told = (done, total)

    def _step(self, block: bytes | None, error: BaseException | None = None) -> _Step:
        r = self.report
        return _Step(
            block, self._told, len(r.warnings), r.partial, r.compressed, r.text_bytes, error
        )

    def _put(self, step: _Step) -> bool:
        while not self.stop.is_set():  # the reader stopped: nothing more is wanted
            try:
                self.steps.put(step, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        f, total, block_size = self._args
        try:
            blocks = decompressed_blocks(f, total, self._tell, self.report, block_size=block_size)
            for block in blocks:
                if not self._put(self._step(block)):
                    return
            self._put(self._step(None))
        except BaseException as exc:  # noqa: BLE001 - raised again in the reader's thread
            self._put(self._step(None, exc))


def inflated_ahead(
    f: BinaryIO,
    total: int,
    progress: ProgressFn | None,
    report: DecodeReport,
    block_size: int,
) -> Iterator[bytes]:
    """`decompressed_blocks(f, total, progress, report, block_size=block_size)`, inflated
    in a thread of its own up to `AHEAD` blocks ahead of the reader."""
    inflating = _Inflating(f, total, block_size)
    inflating.thread.start()
    seen = text = 0  # the inflating report's warnings and text bytes passed on so far
    try:
        while True:
            step = inflating.steps.get()
            report.warnings.extend(inflating.report.warnings[seen : step.warnings])
            seen = step.warnings
            report.partial = report.partial or step.partial
            report.compressed = report.compressed or step.compressed
            report.text_bytes += step.text_bytes - text
            text = step.text_bytes
            if progress is not None and step.told is not None:
                progress(*step.told)
            if step.error is not None:
                raise step.error
            if step.block is None:
                return
            yield step.block
    finally:
        # Whether read to the end or stopped: the thread is done with `f` before the
        # caller closes it.
        inflating.stop.set()
        inflating.thread.join()
