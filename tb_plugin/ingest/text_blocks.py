"""A trace file's text in blocks: read, gzip inflated (also multi-member), bounded.

The decompressed size is capped (`limits.max_text_bytes`: a gzip bomb inflates without
end), a block of nothing but blanks is read as one space, and damaged gzip data keeps
the text before the damage (`partial`, with a warning).
"""

from __future__ import annotations

import types
import zlib
from collections.abc import Callable, Generator, Iterator
from typing import Any, BinaryIO

import msgspec

from .limits import max_text_bytes

_igzip: types.ModuleType | None
try:  # ISA-L inflates gzip 2-3x faster than zlib; fall back when it is missing.
    from isal import igzip_lib as _igzip
except ImportError:  # pragma: no cover - isal is a declared dependency
    _igzip = None

READ_BLOCK = 1 << 20  # file bytes per read (compressed or not)
INFLATE_BLOCK = 1 << 20  # text per inflate call, unless the reader asks for other blocks


class TraceDecodeError(Exception):
    """The file cannot be read as a Kineto trace. `kind` is a stable machine-readable tag."""

    def __init__(self, kind: str, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.offset = offset


class DecodeReport(msgspec.Struct):
    header: dict[str, Any] = msgspec.field(default_factory=dict)
    partial: bool = False
    warnings: list[str] = msgspec.field(default_factory=list)
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


def too_many_open(cap: int, events: int) -> TraceDecodeError:
    """The refusal of a Perfetto trace holding more than `cap` slices open at once
    (`limits.max_open_slices`)."""
    return TraceDecodeError(
        "too_large",
        f"it holds more than {cap} slices begun and not ended at once "
        f"(KINETOSCOPE_MAX_OPEN_SLICES; {events} events read so far): a trace's call stacks "
        "hold a few hundred per thread, so it was stopped",
        0,
    )


def decompressed_blocks(
    f: BinaryIO,
    total: int,
    progress: ProgressFn | None,
    report: DecodeReport,
    binary: bool = False,
    block_size: int | None = None,
) -> Iterator[bytes]:
    """The file's text in blocks, gzip (also multi-member) inflated on the way, cut off
    at `limits.max_text_bytes()` (a gzip bomb inflates without end). `binary`: the
    content is not text (a protobuf trace), so blank blocks are data, kept as they are.
    `block_size`: the text of each inflated block (default `INFLATE_BLOCK`); a gzip
    stream comes in blocks of exactly that size but at the ends of its members."""
    budget = max_text_bytes()
    blocks = _raw_text_blocks(f, total, progress, report, block_size or INFLATE_BLOCK)
    for block in blocks:
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
    f: BinaryIO, total: int, progress: ProgressFn | None, report: DecodeReport, block_size: int
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
    inflater = _inflater()
    data = first
    produced = 0  # text bytes yielded
    while True:
        if inflater.eof:  # the next gzip member, if any
            data = inflater.unused_data
            inflater = _inflater()
        if not data and inflater.needs_input:
            data = f.read(READ_BLOCK)
            done += len(data)
            if progress:
                progress(done, total)
            if not data:
                break
        # Bounded output per call: a 4 MiB block of a trace inflates to 100+ MiB.
        try:
            out = inflater.decompress(data, block_size)
        except Exception as exc:  # noqa: BLE001 - zlib.error and isal's own error
            salvaged = yield from _salvage_gzip(f, produced)
            _damaged_gzip(report, done, total, exc, produced + salvaged)
            return
        data = b""
        if out:
            produced += len(out)
            yield out
            if progress:  # also per inflated block: lets a deadline stop a bomb
                progress(done, total)
    if not inflater.eof and not inflater.fresh:
        report.partial = True
        report.warnings.append(
            f"the gzip stream ends early (after {done} of {total} bytes were read): "
            "kept the events that could be read"
        )


class _ZlibInflater:
    """zlib's inflater as isal's `IgzipDecompressor` is used: the input a call leaves
    unused is kept for the next (`needs_input` once it is all used)."""

    def __init__(self) -> None:
        self._inflater = zlib.decompressobj(31)
        self._tail = b""
        self.fresh = True  # given no input yet

    @property
    def eof(self) -> bool:
        return self._inflater.eof

    @property
    def unused_data(self) -> bytes:
        return self._inflater.unused_data

    @property
    def needs_input(self) -> bool:
        return not self._tail

    def decompress(self, data: bytes, max_length: int) -> bytes:
        self.fresh = self.fresh and not data
        text = self._tail + data if self._tail else data
        out = self._inflater.decompress(text, max_length)
        self._tail = self._inflater.unconsumed_tail
        return out


class _IsalInflater:
    """isal's inflater of one gzip member. It keeps the input a call leaves unused and
    makes each output block of the size asked in one allocation (through zlib's
    interface the output grows from 16 KiB, copied, and the unused input is copied at
    each call)."""

    def __init__(self) -> None:
        assert _igzip is not None
        self._inflater = _igzip.IgzipDecompressor(_igzip.DECOMP_GZIP)
        self.fresh = True  # given no input yet

    @property
    def eof(self) -> bool:
        return bool(self._inflater.eof)

    @property
    def unused_data(self) -> bytes:
        return bytes(self._inflater.unused_data)

    @property
    def needs_input(self) -> bool:
        return bool(self._inflater.needs_input)

    def decompress(self, data: bytes, max_length: int) -> bytes:
        self.fresh = self.fresh and not data
        return self._inflater.decompress(data, max_length)  # type: ignore[no-any-return]


def _inflater() -> _ZlibInflater | _IsalInflater:
    return _IsalInflater() if _igzip is not None else _ZlibInflater()


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
