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

import io
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, BinaryIO, Union

import msgspec

from .limits import max_event_bytes
from .repair import repair_text, warn_once
from .schema import Event
from .text_blocks import (
    DecodeReport,
    ProgressFn,
    TraceDecodeError,
    decompressed_blocks,
)

__all__ = [
    "DecodeReport",
    "Piece",
    "ProgressFn",
    "Tail",
    "TraceDecodeError",
    "decode_tail",
    "decode_whole_events",
    "iter_event_batches",
    "iter_event_pieces",
]

# Text decoded per call. A chunk's decoded events, core args and joined args hold about
# five times its text until its columns are built, so a small chunk keeps the peak memory
# of a load low; below ~1 MiB the per-call costs start to show (measured: 2-4 MiB cost no
# more CPU than 24 MiB, and save ~60 MB of peak RSS on a 259 MB trace).
CHUNK_TARGET = 4 << 20
SNIFF_LIMIT = 64 << 20

# msgspec raises RecursionError for values nested too deep (one hostile arg).
_UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
_events_decoder = msgspec.json.Decoder(list[Event])
_any_decoder = msgspec.json.Decoder()
_SEPARATOR_RUN = re.compile(rb"[ \t\r\n,]*")
_ARRAY_END = re.compile(rb"\}\s*\]")
_BOM = b"\xef\xbb\xbf"
_BETWEEN_EVENTS = re.compile(rb"\}\s*,\s*\{")


_EMPTY_MESSAGE = (
    "the file is empty (0 bytes); the profiler was probably interrupted before it wrote the trace"
)


def _repair(chunk: bytes, report: DecodeReport) -> bytes:
    return repair_text(chunk, report.warnings)


def _decode_events(body: bytes, report: DecodeReport) -> list[Event] | None:
    """Decode `body` (whole events joined by commas); None if it is not that."""
    events = _decode_typed(_as_array(body), report)
    if events is not None:
        return events
    repaired = _repair(body, report)
    if repaired is body:
        return None
    return _decode_typed(_as_array(repaired), report)


def _as_array(body: bytes) -> bytes:
    """`[body]`, copying the text once (`b"[" + body + b"]"` copies it twice)."""
    return b"".join((b"[", body, b"]"))


def _decode_typed(text: bytes, report: DecodeReport) -> list[Event] | None:
    try:
        return _events_decoder.decode(text)
    except msgspec.ValidationError:
        return _decode_lenient(text, report)
    except _UNDECODABLE:
        return None


def _decode_lenient(text: bytes, report: DecodeReport) -> list[Event] | None:
    """Events whose fields have unexpected types: convert one by one, drop what won't fit."""
    try:
        items = _any_decoder.decode(text)
    except _UNDECODABLE:
        return None
    events: list[Event] = []
    dropped = 0
    for item in items:
        if not isinstance(item, dict):
            dropped += 1
            continue
        args = item.pop("args", None)
        try:
            ev = msgspec.convert(item, Event, strict=False)
        except msgspec.ValidationError:
            clean = {k: v for k, v in item.items() if isinstance(v, (str, int, float))}
            try:
                ev = msgspec.convert(clean, Event, strict=False)
            except msgspec.ValidationError:
                dropped += 1
                continue
        if isinstance(args, dict):
            ev.args = msgspec.Raw(msgspec.json.encode(args))
        events.append(ev)
    if dropped:
        report.warnings.append(f"{dropped} events that are not trace events were skipped")
    return events


def _split_points(buf: bytes, start: int) -> Iterator[int]:
    """Candidate cut points (just after an event's closing brace), last first."""
    window = 1 << 20
    hi = len(buf)
    while hi > start:
        lo = max(start, hi - window)
        matches = [m.start() + 1 for m in _BETWEEN_EVENTS.finditer(buf, lo, hi)]
        yield from reversed(matches)
        if lo == start:
            return
        hi = lo + 64  # overlap so a separator across the window edge is still seen


def _find_events_start(buf: bytes, final: bool) -> tuple[int, dict[str, Any]] | None:
    """Offset just after the `[` that opens the events, and the header read before it."""
    stripped = buf.lstrip()
    if stripped.startswith(_BOM):  # some editors and Windows tools write one
        stripped = stripped[len(_BOM) :].lstrip()
    lead = len(buf) - len(stripped)
    if not stripped:
        return None
    if stripped[:1] == b"[":
        return lead + 1, {}
    if stripped[:1] != b"{":
        # Never echo the content: a symlink may point at any file of the machine.
        raise TraceDecodeError(
            "not_json", "the file is not JSON: it does not start with { or [", lead
        )
    pos = 0
    while True:
        key = buf.find(b'"traceEvents"', pos)
        if key < 0:
            if final or len(buf) > SNIFF_LIMIT:
                raise TraceDecodeError(
                    "not_kineto",
                    'the file is JSON but not a Kineto trace: it has no "traceEvents" array',
                    0,
                )
            return None
        m = re.compile(rb"\s*:\s*\[").match(buf, key + len(b'"traceEvents"'))
        if m is None:
            pos = key + 1
            continue
        head = buf[lead:key].rstrip()
        if head.endswith(b","):
            head = head[:-1]
        try:
            header = _any_decoder.decode(head + b"}") if head.strip() != b"{" else {}
        except _UNDECODABLE:
            try:
                header = _any_decoder.decode(_repair(head, DecodeReport()) + b"}")
            except _UNDECODABLE:
                pos = key + 1
                continue
        return m.end(), header if isinstance(header, dict) else {}


def _read_trailer(rest: bytes, report: DecodeReport) -> dict[str, Any]:
    """Keys after the events array (`traceName`, `baseTimeNanoseconds`, ...)."""
    body = rest.strip()
    if body.startswith(b","):
        body = body[1:]
    body = body.strip()
    if not body or body == b"}":
        return {}
    try:
        value = _any_decoder.decode(b"{" + body)
    except _UNDECODABLE:
        try:
            value = _any_decoder.decode(b"{" + _repair(body, report))
        except _UNDECODABLE:
            report.warnings.append("the keys after the events array could not be read")
            return {}
    return value if isinstance(value, dict) else {}


def iter_event_batches(
    f: BinaryIO, total: int, report: DecodeReport, progress: ProgressFn | None = None
) -> Iterator[list[Event]]:
    """Yield lists of events, in file order; fills `report` (header, partial, warnings)."""
    buf = b""
    start = -1  # offset in buf where the next event begins; -1 until the array is found
    consumed = 0  # bytes of text dropped from the front of buf, for error offsets
    saw_text = False
    ended = False
    limit = max_event_bytes()
    blocks = decompressed_blocks(f, total, progress, report)
    pending = _Pending()
    exhausted = False
    while not exhausted:
        block = next(blocks, None)
        if block is None:
            exhausted = True
        else:
            saw_text = True
            if pending.add(block) + len(buf) - max(start, 0) < CHUNK_TARGET:
                continue
        buf = pending.append_to(buf)
        if ended:
            buf = _trailer_window(buf)
            continue
        if start < 0:
            found = _find_events_start(buf, final=exhausted)
            if found is None:
                if exhausted:
                    break
                blank = len(buf) - len(buf.lstrip())  # a blank run is dropped as it comes
                buf, consumed = buf[blank:], consumed + blank
                continue
            start, report.header = found
        batch, next_start, end_pos = _take_events(buf, start, exhausted, report, consumed)
        if batch:
            report.event_count += len(batch)
            yield batch
        if end_pos is not None:
            ended = True  # the keys after the array are read once, after the loop
            buf = buf[end_pos:]
            consumed += end_pos
            start = 0
            continue
        consumed += next_start
        buf = buf[next_start:]
        start = 0
        if len(buf) > limit:
            _stop_at_oversized_text(report, consumed, limit)
            return
    if ended and exhausted and buf:
        report.header.update(_read_trailer(buf, report))
    _check_end(report, saw_text, found_array=start >= 0, closed=ended)


def _check_end(report: DecodeReport, saw_text: bool, found_array: bool, closed: bool) -> None:
    """After the last block: an error for a file with no events, `partial` for a cut one."""
    if not saw_text:
        raise TraceDecodeError("empty_file", _EMPTY_MESSAGE, 0)
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


class _Pending:
    """Blocks waiting to be appended to the text buffer: joined once per chunk rather
    than appended one by one (each append copies the whole buffer)."""

    def __init__(self) -> None:
        self.blocks: list[bytes] = []
        self.size = 0

    def add(self, block: bytes) -> int:
        """Keep `block`; returns the bytes now pending."""
        self.blocks.append(block)
        self.size += len(block)
        return self.size

    def append_to(self, buf: bytes) -> bytes:
        if not self.blocks:
            return buf
        joined = b"".join([buf, *self.blocks]) if buf else b"".join(self.blocks)
        self.blocks.clear()
        self.size = 0
        return joined


def _trailer_window(buf: bytes) -> bytes:
    # The keys after the events array are small; blank runs there are dropped.
    stripped = buf.strip()
    return stripped[-(1 << 20) :] if stripped else b" "


def _stop_at_oversized_text(report: DecodeReport, offset: int, limit: int) -> None:
    report.partial = True
    report.warnings.append(
        f"more than {limit >> 20} MiB of text without an event boundary at byte {offset} "
        "(KINETOSCOPE_MAX_EVENT_MB): stopped reading there, kept the events before it"
    )


@dataclass
class Tail:
    """The last text of a file: from an event boundary inside the array (`in_array`) or,
    for a file too small to cut, the whole text. Decode with `decode_tail`."""

    text: bytes
    in_array: bool


Piece = Union[bytes, Tail]


def iter_event_pieces(
    f: BinaryIO, total: int, report: DecodeReport, progress: ProgressFn | None = None
) -> Generator[Piece, Union[bytes, None], None]:
    """Like `iter_event_batches`, for decoding in other processes: the text comes out
    undecoded, as exact consecutive slices cut at what looks like an event boundary
    (`}` `,` `{`), then a `Tail`. A consumer decodes each slice with `decode_whole_events`;
    when a slice was not cut at a boundary, it sends the unused text (and every later
    slice it holds) back, and that text is cut again."""
    buf = b""
    start = -1
    saw_text = False
    limit = max_event_bytes()
    pending = _Pending()
    for block in decompressed_blocks(f, total, progress, report):
        saw_text = True
        if pending.add(block) + len(buf) - max(start, 0) < CHUNK_TARGET:
            continue
        buf = pending.append_to(buf)
        if start < 0:
            found = _find_events_start(buf, final=False)
            if found is None:
                continue
            start, report.header = found
        cut = next(_split_points(buf, _skip_separator(buf, start)), None)
        if cut is None:
            if len(buf) - start > limit:
                _stop_at_oversized_text(report, start, limit)
                yield Tail(b"", in_array=True)
                return
            continue
        body, buf, start = buf[start:cut], buf[cut:], 0
        returned = yield body
        while returned is not None:  # text the consumer could not use: cut it again
            buf = returned + buf
            returned = yield b""
    if not saw_text:
        raise TraceDecodeError("empty_file", _EMPTY_MESSAGE, 0)
    buf = pending.append_to(buf)
    yield Tail(buf[start:] if start >= 0 else buf, in_array=start >= 0)


def decode_tail(tail: Tail, report: DecodeReport) -> Iterator[list[Event]]:
    """Decode a `Tail`: the end of the array, the keys after it, or a file cut short."""
    text = b"[" + tail.text if tail.in_array else tail.text
    part = DecodeReport()
    for batch in iter_event_batches(io.BytesIO(text), len(text), part):
        report.event_count += len(batch)
        yield batch
    if tail.in_array:
        report.header.update({k: v for k, v in part.header.items()})
    else:
        report.header = part.header
    report.partial = report.partial or part.partial
    report.warnings.extend(w for w in part.warnings if w not in report.warnings)


def decode_whole_events(body: bytes, report: DecodeReport) -> tuple[list[Event], int]:
    """Decode the whole events at the start of `body` (a slice from
    `iter_event_pieces`). Returns the events and how many bytes of `body` they used; the
    rest is text the slice cut inside an event, to be decoded with what follows."""
    start = _skip_separator(body, 0)
    if start == len(body):
        return [], len(body)
    events = _decode_events(body[start:], report)
    if events is not None:
        return events, len(body)
    for cut in islice(_split_points(body, start), 1, 4):
        events = _decode_events(body[start:cut], report)
        if events is not None:
            return events, cut
    # Broken text rather than a bad cut: keep every event that decodes.
    return _decode_run(body, start, len(body), report, 0), len(body)


def _take_events(
    buf: bytes, start: int, final: bool, report: DecodeReport, consumed: int
) -> tuple[list[Event], int, int | None]:
    """Decode the whole events in buf[start:]. Returns (events, next start, array end)."""
    body_start = _skip_separator(buf, start)
    if final:
        ends = _array_ends(buf, body_start)
        for last, close in ends:
            events = _decode_events(buf[body_start:last], report) if last > body_start else []
            if events is not None:
                return events, close, close
        if ends and buf[ends[0][1] :].strip() in (b"", b"}"):
            # The array is closed but some events in it do not decode: keep the others.
            last, close = ends[0]
            return _decode_run(buf, body_start, last, report, consumed), close, close
        # No closing bracket: the file was cut. Keep every whole event before the cut.
        events = _decode_events(buf[body_start:], report)
        if events is not None:
            return events, len(buf), None
    cuts = list(islice(_split_points(buf, body_start), 3))
    for cut in cuts:
        events = _decode_events(buf[body_start:cut], report)
        if events is not None:
            if final:
                events += _decode_run(buf, _skip_separator(buf, cut), len(buf), report, consumed)
                return events, len(buf), None
            return events, cut, None
    if final:
        return _decode_run(buf, body_start, len(buf), report, consumed), len(buf), None
    if cuts and len(buf) - body_start > 4 * CHUNK_TARGET:
        # Nothing decodes even with more text: the text is broken here. Salvage event by
        # event, then go on. (A cut can also fail because it fell inside a string that
        # looks like a separator; more text then brings a good cut, so wait first.)
        return _decode_run(buf, body_start, cuts[0], report, consumed), cuts[0], None
    return [], body_start, None  # blank text before the next event is dropped now


def _array_ends(buf: bytes, body_start: int) -> list[tuple[int, int]]:
    """Candidate (end of the last event, offset after the closing `]`), last first."""
    if buf[body_start : body_start + 1] == b"]":  # an empty events array
        return [(body_start, body_start + 1)]
    # Blank text after the array (also before the object's closing brace) can be long.
    tail = buf.rstrip()
    end = len(tail[:-1].rstrip()) if tail.endswith(b"}") else len(tail)
    base = max(body_start, end - (1 << 20))
    found = [(m.start() + 1, m.end()) for m in _ARRAY_END.finditer(buf, base, end)]
    return found[::-1][:4]


def _skip_separator(buf: bytes, pos: int) -> int:
    match = _SEPARATOR_RUN.match(buf, pos)
    return match.end() if match else pos


def _decode_run(buf: bytes, lo: int, hi: int, report: DecodeReport, consumed: int) -> list[Event]:
    """Decode buf[lo:hi]; where it does not decode, keep every event that does."""
    if hi <= lo:
        return []
    events = _decode_events(buf[lo:hi], report)
    if events is not None:
        return events
    cuts = [lo] + [m.start() + 1 for m in _BETWEEN_EVENTS.finditer(buf, lo, hi)] + [hi]
    kept: list[Event] = []
    bad_at: int | None = None
    skipped = 0
    for a, b in zip(cuts, cuts[1:]):
        piece_start = _skip_separator(buf, a)
        piece = _decode_events(buf[piece_start:b], report)
        if piece is None:
            skipped += 1
            if bad_at is None:
                bad_at = consumed + piece_start
            continue
        kept.extend(piece)
    if skipped:
        report.partial = True
        report.warnings.append(
            f"{skipped} unreadable piece(s) of the events array were skipped, "
            f"the first at byte {bad_at} of the decompressed text"
        )
    return kept
