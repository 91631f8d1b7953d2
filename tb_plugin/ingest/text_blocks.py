"""A trace file's text in blocks: read, gzip inflated (also multi-member), bounded.

The decompressed size is capped (`limits.max_text_bytes`: a gzip bomb inflates without
end), a block of nothing but blanks is read as one space, and damaged gzip data keeps
the text before the damage (`partial`, with a warning).
"""

from __future__ import annotations

import types
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from .limits import max_text_bytes

_zlib_impl: types.ModuleType
try:  # ISA-L inflates gzip 2-3x faster than zlib; fall back when it is missing.
    from isal import isal_zlib as _zlib_impl
except ImportError:  # pragma: no cover - isal is a declared dependency
    _zlib_impl = zlib

READ_BLOCK = 4 << 20
INFLATE_BLOCK = 1 << 20  # text per inflate call: a fraction of decode.CHUNK_TARGET
# Compressed bytes given to one inflate call. Each call's output is bounded (a bomb), so a
# block inflates in many calls, and each call copies what it did not use (its
# `unconsumed_tail`): a 4 MiB block copied ~100 times. Fed 1 MiB at a time, isal inflates
# the 253 MB H100 mix in 0.07 s instead of 0.10 s (measured). Smaller feeds inflate no
# faster and end more output blocks short: 256 KiB added ~20 MB to the V100 mix's peak
# RSS (blocks of odd sizes fragment the heap).
GZIP_FEED = 1 << 20


class TraceDecodeError(Exception):
    """The file cannot be read as a Kineto trace. `kind` is a stable machine-readable tag."""

    def __init__(self, kind: str, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.offset = offset


@dataclass
class DecodeReport:
    header: dict[str, Any] = field(default_factory=dict)
    partial: bool = False
    warnings: list[str] = field(default_factory=list)
    event_count: int = 0
    blank_only: bool = True  # every byte read so far was blank (an empty_file)
    stopped: bool = False  # the text turned into binary data (damage): reading stopped
    failed_bytes: int = 0  # text decoded in vain, repairs tried (the salvage budget)
    failed_at: int | None = None  # where in its text the last failed decode stopped
    compressed: bool = False  # gzip: after damage its text is not to be trusted
    text_bytes: int = 0  # decompressed bytes read (compressed protobuf packets included)
    held_bytes: int = 0  # memory the model builder holds, as the load memory cap counts it


ProgressFn = Callable[[int, int], None]


def too_large(cap: int, events: int) -> TraceDecodeError:
    """The refusal of a load that would hold more than `cap` bytes (`limits.load_memory_bytes`)."""
    return TraceDecodeError(
        "too_large",
        f"loading it needs more than {cap >> 20} MB of memory (KINETOSCOPE_LOAD_MEMORY_MB; "
        f"{events} events read so far), so it was stopped",
        0,
    )


def decompressed_blocks(
    f: BinaryIO,
    total: int,
    progress: ProgressFn | None,
    report: DecodeReport,
    binary: bool = False,
) -> Iterator[bytes]:
    """The file's text in blocks, gzip (also multi-member) inflated on the way, cut off
    at `limits.max_text_bytes()` (a gzip bomb inflates without end). `binary`: the
    content is not text (a protobuf trace), so blank blocks are data, kept as they are."""
    budget = max_text_bytes()
    for block in _raw_text_blocks(f, total, progress, report):
        report.text_bytes += len(block)
        if report.text_bytes > budget:
            report.partial = True
            report.warnings.append(
                f"the decompressed text is larger than {budget >> 20} MiB "
                "(KINETOSCOPE_MAX_TEXT_GB): kept the events before that point"
            )
            return
        if not binary and len(block) > 1 and block.isspace():
            # A whole block of blanks is padding (or an attack), never data worth its
            # cost: kept, it would grow the pending text without bound.
            message = "blank runs longer than a read block were read as one space"
            if message not in report.warnings:
                report.warnings.append(message)
            block = b" "
        yield block


def _raw_text_blocks(
    f: BinaryIO, total: int, progress: ProgressFn | None, report: DecodeReport
) -> Iterator[bytes]:
    first = f.read(READ_BLOCK)
    done = len(first)
    if progress:
        progress(done, total)
    if not first.startswith(b"\x1f\x8b"):
        block = first
        while block:
            yield block
            block = f.read(READ_BLOCK)
            done += len(block)
            if progress:
                progress(done, total)
        return
    report.compressed = True
    inflater = _zlib_impl.decompressobj(31)
    feed = _feed(first)
    data = next(feed, b"")
    produced = 0  # text bytes yielded
    while True:
        while data:
            # Bounded output per call: a 4 MiB block of a trace inflates to 100+ MiB.
            try:
                out = inflater.decompress(data, INFLATE_BLOCK)
            except Exception as exc:  # noqa: BLE001 - zlib.error and isal's own error
                salvaged = yield from _salvage_gzip(f, produced)
                _damaged_gzip(report, done, total, exc, produced + salvaged)
                return
            if out:
                produced += len(out)
                yield out
                if progress:  # also per inflated block: lets a deadline stop a bomb
                    progress(done, total)
            data = inflater.unconsumed_tail
            if inflater.eof and inflater.unused_data:  # next gzip member
                data = inflater.unused_data
                inflater = _zlib_impl.decompressobj(31)
        data = next(feed, b"")
        if not data:
            data = f.read(READ_BLOCK)
            done += len(data)
            if progress:
                progress(done, total)
            if not data:
                break
            feed = _feed(data)
            data = next(feed)
    yield from _end_of_gzip(inflater, report, f"after {done} of {total} bytes were read")


def _end_of_gzip(inflater: Any, report: DecodeReport, where: str) -> Iterator[bytes]:
    """The text the inflater still holds once the file is read; a stream that has not
    ended is a cut file (`partial`)."""
    try:
        tail = inflater.flush()
    except Exception:  # noqa: BLE001 - any inflate error here means a cut stream
        tail = b""
    if tail:
        yield tail
    if not inflater.eof:
        report.partial = True
        report.warnings.append(
            f"the gzip stream ends early ({where}): kept the events that could be read"
        )


def _feed(block: bytes) -> Iterator[memoryview]:
    """A read block in pieces of `GZIP_FEED` bytes (views, not copies)."""
    view = memoryview(block)
    return (view[i : i + GZIP_FEED] for i in range(0, len(block), GZIP_FEED))


def _salvage_gzip(f: BinaryIO, skip: int) -> Generator[bytes, None, int]:
    """Inflate the file again, with zlib, up to the damage, yielding the text after its
    first `skip` bytes; returns how much it yielded.

    A failing inflate call loses all its output (a checksum error takes the whole last
    block with it). So this pass keeps a copy of the inflater before each call (isal's
    cannot be copied) and, on the error, goes over that call again in tiny steps.
    """
    f.seek(0)
    inflater = zlib.decompressobj(31)
    seen = yielded = 0
    step = 64 << 10
    while block := f.read(READ_BLOCK):
        data = block
        while data:
            saved = inflater.copy()
            try:
                out = inflater.decompress(data, step)
            except zlib.error:
                if step == 256:
                    return yielded
                inflater, step = saved, 256
                continue
            data = inflater.unconsumed_tail
            if inflater.eof and inflater.unused_data:
                data, inflater = inflater.unused_data, zlib.decompressobj(31)
            fresh = out[max(0, skip - seen) :]
            seen += len(out)
            if fresh:
                yielded += len(fresh)
                yield fresh
    return yielded


def _damaged_gzip(
    report: DecodeReport, offset: int, total: int, exc: Exception, produced: int
) -> None:
    where = f"in the first {offset} of {total} bytes ({exc})"
    if not produced:
        raise TraceDecodeError("bad_gzip", f"the gzip data is damaged {where}", 0)
    report.partial = True
    report.warnings.append(f"the gzip data is damaged {where}: kept the events before it")
