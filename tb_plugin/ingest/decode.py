"""Streaming decoder: a trace file becomes a header dict plus batches of typed events.

The file is decompressed block by block and the `traceEvents` array is cut into chunks of
whole events, each decoded by msgspec in one call. Peak memory is a chunk, never the whole
JSON text. A cut is verified by the decode itself: a split inside a string or inside a
nested value cannot decode, so a chunk that decodes is a run of whole events.

Bad input is handled here, once: what `repair.py` fixes is repaired chunk by chunk (with
a warning), a file that ends early or whose gzip data is damaged keeps the events read so
far (`partial`), and an event that still does not decode is skipped (with a warning).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any, BinaryIO, Union

from .event_text import (
    ANY_DECODER,
    BLANK_MESSAGE,
    EMPTY_MESSAGE,
    UNDECODABLE,
    PendingBlocks,
    decode_events,
    decode_run,
    find_events_start,
    opens_object,
    skip_separator,
    split_points,
    stop_at_oversized_text,
)
from .limits import max_event_bytes
from .repair import repair_text, warn_once
from .schema import Event
from .text_blocks import (
    DecodeReport,
    ProgressFn,
    TraceDecodeError,
    decompressed_blocks,
)

if TYPE_CHECKING:
    from .columns import Chunk

__all__ = ["DecodeReport", "ProgressFn", "TraceDecodeError", "iter_event_batches"]

# A run of whole events: decoded events, or the columns a `TextReader` made of its text.
Batch = Union[list[Event], "Chunk"]
# Tried first on each run of whole events (the compiled scanner), given a view of its text
# (read in place, not copied): its columns, or None when the text is to be decoded by
# msgspec.
TextReader = Callable[[memoryview], Union["Chunk", None]]

# Text decoded per call, and the text of each slice the scanning threads read. A chunk's
# decoded events, core args and joined args hold about five times its text until its
# columns are built, and each slice in flight holds its text, the scanner's columns and
# its args, so a small chunk keeps the peak memory of a load low. Measured (253-259 MB
# traces, 2 cores): 1 MiB costs no more CPU than 4 MiB, in the scanner and the msgspec
# path alike, and a load holds 35 MB beside its columns instead of 75-80 MB (0.5 MiB:
# 25 MB, for 0.1 s more of CPU). Read at each call (here and by `pieces`), so a test can
# make it small.
CHUNK_TARGET = 1 << 20
_ARRAY_END = re.compile(rb"\}\s*\]")


def _read_trailer(rest: bytes, report: DecodeReport) -> dict[str, Any]:
    """Keys after the events array (`traceName`, `baseTimeNanoseconds`, ...)."""
    body = rest.strip()
    if body.startswith(b","):
        body = body[1:]
    body = body.strip()
    if not body or body == b"}":
        return {}
    try:
        value = ANY_DECODER.decode(b"{" + body)
    except UNDECODABLE:
        try:
            value = ANY_DECODER.decode(b"{" + repair_text(body, report.warnings))
        except UNDECODABLE:
            report.warnings.append("the keys after the events array could not be read")
            return {}
    return value if isinstance(value, dict) else {}


def iter_event_batches(
    f: BinaryIO,
    total: int,
    report: DecodeReport,
    progress: ProgressFn | None = None,
    read_text: TextReader | None = None,
    in_object: bool | None = None,
) -> Iterator[Batch]:
    """Yield runs of events, in file order; fills `report` (header, partial, warnings).
    A run is a list of events, or a Chunk where `read_text` read its text. `in_object`:
    whether the events array is inside a top-level object (None: seen from the text)."""
    buf = b""
    start = -1  # offset in buf where the next event begins; -1 until the array is found
    consumed = 0  # bytes of text dropped from the front of buf, for error offsets
    saw_text = False
    ended = False
    limit = max_event_bytes()
    blocks = decompressed_blocks(f, total, progress, report)
    pending = PendingBlocks()
    exhausted = False
    wait = 0  # new text to wait for after a look that decoded nothing
    while not exhausted:
        block = next(blocks, None)
        if block is None:
            exhausted = True
        else:
            saw_text = True
            if _read_more(pending.add(block), len(buf) - max(start, 0), wait, limit):
                continue
        buf = pending.append_to(buf)
        if ended:
            buf = _trailer_window(buf)
            continue
        if start < 0:
            found = find_events_start(buf, final=exhausted, report=report)
            if found is None:  # a blank run is dropped as it comes
                blank = len(buf) - len(buf.lstrip())
                report.blank_only = report.blank_only and blank == len(buf)
                buf, consumed = buf[blank:], consumed + blank
                continue
            start, report.header = found
            in_object = opens_object(buf) if in_object is None else in_object
        batch, next_start, end_pos = _take_events(
            buf, start, exhausted, report, consumed, read_text
        )
        if batch:
            report.event_count += len(batch)
            yield batch
        if report.stopped:  # the rest is not JSON (damaged data): not read further
            return
        ended = end_pos is not None  # the keys after the array are read after the loop
        cut = end_pos if end_pos is not None else next_start
        buf, consumed, start = buf[cut:], consumed + cut, 0
        wait = len(buf) if not batch and not ended else 0
        if not ended and len(buf) > limit:
            stop_at_oversized_text(report, consumed, limit)
            return
    if ended and exhausted:
        _read_end(buf, report, bool(in_object))
    _check_end(report, saw_text, found_array=start >= 0, closed=ended)


def _read_more(new: int, held: int, wait: int, limit: int) -> bool:
    """Whether to read another block before looking at the text (`held` bytes not yet
    decoded, `new` bytes read since): less than a chunk in all, or less new text than
    `wait`. After a look that decoded nothing (one event longer than a chunk) the next
    waits for as much new text again, so a value of n bytes is looked at (and joined)
    log(n) times, not n / CHUNK_TARGET times (quadratic in n); never past `limit`."""
    if new < wait and new + held <= limit:
        return True
    return new + held < CHUNK_TARGET


def _read_end(rest: bytes, report: DecodeReport, in_object: bool) -> None:
    """The text after the events array: its keys, and whether the object is closed."""
    if rest:
        report.header.update(_read_trailer(rest, report))
    if in_object and not rest.rstrip().endswith(b"}"):
        report.partial = True
        report.warnings.append(
            "the file ends before its top-level object is closed (it was cut after "
            "the events array): keys written after the events may be missing"
        )


def _check_end(report: DecodeReport, saw_text: bool, found_array: bool, closed: bool) -> None:
    """After the last block: an error for a file with no events, `partial` for a cut one."""
    if not saw_text:
        raise TraceDecodeError("empty_file", EMPTY_MESSAGE, 0)
    if not found_array and report.blank_only:
        raise TraceDecodeError("empty_file", BLANK_MESSAGE, 0)
    if not found_array:
        raise TraceDecodeError(
            "not_kineto",
            'the file has no events array ("traceEvents" or a top-level '
            "JSON array) that could be read",
            0,
        )
    if not closed:
        report.partial = True
        warn_once(
            report.warnings,
            "the events array is not closed (the file ends early); "
            "kept the events that could be read",
        )


def _trailer_window(buf: bytes) -> bytes:
    # The keys after the events array are small; blank runs there are dropped.
    stripped = buf.strip()
    return stripped[-(1 << 20) :] if stripped else b" "


def _take_events(
    buf: bytes,
    start: int,
    final: bool,
    report: DecodeReport,
    consumed: int,
    read_text: TextReader | None,
) -> tuple[Batch, int, int | None]:
    """Decode the whole events in buf[start:]. Returns (events, next start, array end)."""
    body_start = skip_separator(buf, start)

    def decode_body(lo: int, hi: int) -> Batch | None:
        # The reader reads the run where it lies in `buf` (a copy of each run's text was
        # ~5 % of a one-thread load's CPU); msgspec gets a copy only where it declines.
        chunk = read_text(memoryview(buf)[lo:hi]) if read_text is not None else None
        return chunk if chunk is not None else decode_events(buf[lo:hi], report)

    if final:
        first: tuple[int, int] | None = None
        for last, close in _array_ends(buf, body_start):
            first = first or (last, close)
            events = decode_body(body_start, last) if last > body_start else []
            if events is not None:
                return events, close, close
        if first and _ends_the_file(buf[first[1] :]):
            # The array is closed but some events in it do not decode: keep the others.
            last, close = first
            return decode_run(buf, body_start, last, report, consumed), close, close
        # No closing bracket: the file was cut. Keep every whole event before the cut.
        events = decode_events(buf[body_start:], report)
        if events is not None:
            return events, len(buf), None
    cuts = list(islice(split_points(buf, body_start), 3))
    for cut in cuts:
        if final:
            events = decode_events(buf[body_start:cut], report)
            if events is not None:
                events += decode_run(buf, skip_separator(buf, cut), len(buf), report, consumed)
                return events, len(buf), None
        else:
            batch = decode_body(body_start, cut)
            if batch is not None:
                return batch, cut, None
    if final:
        return decode_run(buf, body_start, len(buf), report, consumed), len(buf), None
    waited = len(buf) - body_start > 4 * CHUNK_TARGET
    if cuts and (waited or _damaged_before(report, cuts[-1] - body_start)):
        # Nothing decodes even with more text: the text is broken here. Salvage event by
        # event, then go on. (A cut can also fail because it fell inside a string that
        # looks like a separator; more text then brings a good cut, so wait first.)
        return decode_run(buf, body_start, cuts[0], report, consumed), cuts[0], None
    return [], body_start, None  # blank text before the next event is dropped now


def _damaged_before(report: DecodeReport, body_length: int) -> bool:
    """Whether the last failed decode (of the text up to the last cut, tried last) stopped
    far before that cut: damaged text, not a cut inside a string, so more text will not
    help; it is salvaged now instead of after four chunks more (each tried again)."""
    at = report.failed_at
    return at is not None and body_length - at > (1 << 16)


def _ends_the_file(rest: bytes) -> bool:
    """Whether `rest` (after a candidate `]`) is what follows the events array: nothing,
    the object's `}`, or keys after the array (`, "traceName": ...}`), so that `]` is the
    array's end and not one inside a damaged event."""
    body = rest.strip()
    if body in (b"", b"}"):
        return True
    if not body.startswith(b",") or not body.endswith(b"}"):
        return False
    try:
        return isinstance(ANY_DECODER.decode(b"{" + body[1:]), dict)
    except UNDECODABLE:
        return False


def _array_ends(buf: bytes, body_start: int) -> Iterator[tuple[int, int]]:
    """Candidate (end of the last event, offset after the closing `]`), last first, at
    most ARRAY_END_CANDIDATES, found as they are asked: the last few KB of the text first
    (a whole file's first candidate closes its events: the rest is not searched), then
    the last MB. The same candidates as one search of the last MB gives: a `}...]` cut
    by the window's edge holds nothing but blanks after its `}`, so every candidate the
    window finds is later than it."""
    if buf[body_start : body_start + 1] == b"]":  # an empty events array
        yield body_start, body_start + 1
        return
    # Blank text after the array (also before the object's closing brace) can be long.
    tail = buf.rstrip()
    end = len(tail[:-1].rstrip()) if tail.endswith(b"}") else len(tail)
    given = 0
    for window in (ARRAY_END_WINDOW, 1 << 20):
        base = max(body_start, end - window)
        found = [(m.start() + 1, m.end()) for m in _ARRAY_END.finditer(buf, base, end)]
        found.reverse()
        yield from found[given:ARRAY_END_CANDIDATES]
        given = min(len(found), ARRAY_END_CANDIDATES)  # the wider window finds all the narrower did
        if given >= ARRAY_END_CANDIDATES or base == body_start:
            return


ARRAY_END_CANDIDATES = 4
ARRAY_END_WINDOW = 1 << 12  # bytes: the text after the last event is short
