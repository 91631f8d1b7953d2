"""The cutter of whole-event text slices for decoding in scanning threads or worker
processes.

`iter_event_pieces` reads a file like `decode.iter_event_batches` but hands the text out
undecoded, cut where it looks like an event boundary; a worker reads a slice (the
compiled scanner, else `decode_whole_events`) and says how much of it was whole events,
and the cutter cuts the rest again. Once the events array is found, a slice is `Seamed`:
left in the block it was inflated into, with the short text that joins it to the
previous block beside it, so no slice is copied to be cut. The last text (the end of the
array and the keys after it) is a `Tail`, decoded here in this process by `decode_tail`.
"""

from __future__ import annotations

import io
from collections.abc import Generator, Iterator
from typing import BinaryIO, Union

import msgspec

from . import decode  # decode.CHUNK_TARGET, read at each call
from . import event_text as scan
from .decode import Batch, TextReader, iter_event_batches
from .inflate_ahead import inflated_ahead
from .limits import max_event_bytes
from .text_blocks import DecodeReport, ProgressFn, TraceDecodeError

__all__ = ["Piece", "Seamed", "Tail", "decode_tail", "iter_event_pieces", "piece_text"]


class Seamed(msgspec.Struct):
    """A text slice left where it was inflated: `prefix` (the end of the previous block's
    text, from an event boundary, and this block's text up to its first boundary) and
    then `block[start:end]` (`start` just after the separator of that boundary, `end`
    this block's last boundary). A scanner reads both in place; `text()` joins them."""

    prefix: bytes
    block: bytes
    start: int
    end: int
    gap: int  # the separator's bytes between the prefix and `start`

    def __len__(self) -> int:
        return len(self.prefix) + self.gap + self.end - self.start

    def text(self) -> bytes:
        view = memoryview(self.block)
        return b"".join((self.prefix, view[self.start - self.gap : self.end]))


class Tail(msgspec.Struct):
    """The last text of a file: from an event boundary inside the array (`in_array`) or,
    for a file too small to cut, the whole text. Decode with `decode_tail`."""

    text: bytes
    in_array: bool
    in_object: bool | None = None  # the array is inside a top-level object (None: unknown)


Piece = Union[bytes, Seamed, Tail]


def piece_text(piece: bytes | Seamed) -> bytes:
    """The text of a slice (a `Seamed` one joined)."""
    return piece.text() if isinstance(piece, Seamed) else piece


def iter_event_pieces(
    f: BinaryIO, total: int, report: DecodeReport, progress: ProgressFn | None = None
) -> Generator[Piece, Union[bytes, None], None]:
    """Like `iter_event_batches`, for decoding in scanning threads or other processes: the
    text comes out undecoded, as exact consecutive slices (bytes, or `Seamed` once the
    array is found) cut at what looks like an event boundary (`}` `,` `{`), then a
    `Tail`. A consumer reads each slice (`native_chunk.scan_slice`); when a slice was not
    cut at a boundary, it sends the unused text (and every later slice it holds) back,
    and that text is cut again."""
    buf = b""
    start = -1
    in_object: bool | None = None
    saw_text = False
    limit = max_event_bytes()
    pending = scan.PendingBlocks()
    # Inflated in a thread of its own: the slices' reader merges chunks meanwhile.
    blocks = inflated_ahead(f, total, progress, report, decode.CHUNK_TARGET)
    for block in blocks:
        saw_text = True
        if pending.add(block) + len(buf) - max(start, 0) < decode.CHUNK_TARGET:
            continue
        taken = _seamed(pending, buf) if start == 0 else None
        if taken is not None:  # the common case, once the array is found
            seamed, buf = taken
            returned = yield seamed
            while returned is not None:  # text the consumer could not use: cut it again
                buf = returned + buf
                returned = yield b""
            continue
        if start == 0 and pending.size + len(buf) <= limit:
            continue  # no boundary in the last block: wait for more (nothing joined)
        buf = pending.append_to(buf)
        if start < 0:
            found = scan.find_events_start(buf, final=False)
            if found is None:
                continue
            start, report.header = found
            in_object = scan.opens_object(buf)
        cut = next(scan.split_points(buf, scan.skip_separator(buf, start)), None)
        if cut is None:
            if len(buf) - start > limit:
                scan.stop_at_oversized_text(report, start, limit)
                yield Tail(b"", in_array=True, in_object=in_object)
                return
            continue
        body, buf, start = buf[start:cut], buf[cut:], 0
        returned = yield body
        while returned is not None:  # text the consumer could not use: cut it again
            buf = returned + buf
            returned = yield b""
    if not saw_text:
        raise TraceDecodeError("empty_file", scan.EMPTY_MESSAGE, 0)
    buf = pending.append_to(buf)
    yield Tail(buf[start:] if start >= 0 else buf, in_array=start >= 0, in_object=in_object)


def _seamed(pending: scan.PendingBlocks, carry: bytes) -> tuple[Seamed, bytes] | None:
    """The pending text (`carry`, then the pending blocks) as a `Seamed` slice cut at the
    last event boundary of the last block, and the text after it. The earlier blocks
    (none, mostly: a gzip stream's text comes in blocks of the slice size) join the
    prefix. None, with nothing taken, when the last block has no boundary: only the last
    block is searched, so text without boundaries costs no more searching or joining
    per block as it grows (a boundary in an earlier block, or across two, is read inside
    the prefix)."""
    last = pending.blocks[-1]
    first = scan.first_split_point(last)
    end = next(scan.split_points(last, 0), None) if first is not None else None
    if first is None or end is None:
        return None
    start = scan.skip_separator(last, first) if end > first else first
    prefix = b"".join([carry, *pending.blocks[:-1], memoryview(last)[:first]])
    pending.blocks.clear()
    pending.size = 0
    return Seamed(prefix, last, start, end, start - first), last[end:]


def decode_tail(
    tail: Tail, report: DecodeReport, read_text: TextReader | None = None
) -> Iterator[Batch]:
    """Decode a `Tail`: the end of the array, the keys after it, or a file cut short."""
    text = b"[" + tail.text if tail.in_array else tail.text
    part = DecodeReport()
    in_object = tail.in_object if tail.in_array else None
    batches = iter_event_batches(
        io.BytesIO(text), len(text), part, read_text=read_text, in_object=in_object
    )
    for batch in batches:
        report.event_count += len(batch)
        yield batch
    if tail.in_array:
        report.header.update({k: v for k, v in part.header.items()})
    else:
        report.header = part.header
    report.partial = report.partial or part.partial
    report.warnings.extend(w for w in part.warnings if w not in report.warnings)
