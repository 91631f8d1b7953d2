"""The text of a trace's events array: where the array starts, where it can be cut between
two events, and the decode of a run of whole events (kept event by event where the run is
broken). Shared by the streaming decoder (`decode`) and the cutter of text slices for
worker processes (`pieces`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

import msgspec

from .repair import repair_text
from .schema import Event
from .text_blocks import DecodeReport, TraceDecodeError

# Text naming rocprof: rocprofv3's JSON output (`<prefix>_results.json`) is one object under
# "rocprofiler-sdk-tool"; older rocprof JSON names the tool in its metadata.
ROCPROF_MARKERS = (b'"rocprofiler-sdk-tool"', b"rocprof")

# Text read while looking for the events array before a file is called not a trace.
SNIFF_LIMIT = 64 << 20

# msgspec raises RecursionError for values nested too deep (one hostile arg).
UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
ANY_DECODER = msgspec.json.Decoder()
_events_decoder = msgspec.json.Decoder(list[Event])
_SEPARATOR_RUN = re.compile(rb"[ \t\r\n,]*")
_BOM = b"\xef\xbb\xbf"
_BETWEEN_EVENTS = re.compile(rb"\}\s*,\s*\{")
_EVENTS_KEY = b'"traceEvents"'
_OPENS_ARRAY = re.compile(rb"\s*:\s*\[")

EMPTY_MESSAGE = (
    "the file is empty (0 bytes); the profiler was probably interrupted before it wrote the trace"
)


def _repair(chunk: bytes, report: DecodeReport) -> bytes:
    return repair_text(chunk, report.warnings)


def decode_events(body: bytes, report: DecodeReport) -> list[Event] | None:
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
    except UNDECODABLE:
        return None


def _decode_lenient(text: bytes, report: DecodeReport) -> list[Event] | None:
    """Events whose fields have unexpected types: convert one by one, drop what won't fit."""
    try:
        items = ANY_DECODER.decode(text)
    except UNDECODABLE:
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


def split_points(buf: bytes, start: int) -> Iterator[int]:
    """Candidate cut points (just after an event's closing brace), last first."""
    hi = len(buf)
    while True:
        # From the last `}` backwards: a cut is near the end, so this looks at a few
        # braces rather than running the pattern over the whole buffer.
        brace = buf.rfind(b"}", start, hi)
        if brace < 0:
            return
        if _BETWEEN_EVENTS.match(buf, brace):
            yield brace + 1
        hi = brace


def skip_separator(buf: bytes, pos: int) -> int:
    match = _SEPARATOR_RUN.match(buf, pos)
    return match.end() if match else pos


def decode_run(buf: bytes, lo: int, hi: int, report: DecodeReport, consumed: int) -> list[Event]:
    """Decode buf[lo:hi]; where it does not decode, keep every event that does."""
    if hi <= lo:
        return []
    events = decode_events(buf[lo:hi], report)
    if events is not None:
        return events
    cuts = [lo] + [m.start() + 1 for m in _BETWEEN_EVENTS.finditer(buf, lo, hi)] + [hi]
    kept: list[Event] = []
    bad_at: int | None = None
    skipped = 0
    for a, b in zip(cuts, cuts[1:]):
        piece_start = skip_separator(buf, a)
        piece = decode_events(buf[piece_start:b], report)
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


def find_events_start(buf: bytes, final: bool) -> tuple[int, dict[str, Any]] | None:
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
        key = buf.find(_EVENTS_KEY, pos)
        if key < 0:
            if final or len(buf) > SNIFF_LIMIT:
                rocprof = any(marker in buf for marker in ROCPROF_MARKERS)
                raise TraceDecodeError(
                    "not_kineto",
                    "the file is JSON but not a Kineto trace"
                    + (" (rocprof output?)" if rocprof else "")
                    + ': it has no "traceEvents" array',
                    0,
                )
            return None
        m = _OPENS_ARRAY.match(buf, key + len(_EVENTS_KEY))
        if m is None:
            pos = key + 1
            continue
        head = buf[lead:key].rstrip()
        if head.endswith(b","):
            head = head[:-1]
        try:
            header = ANY_DECODER.decode(head + b"}") if head.strip() != b"{" else {}
        except UNDECODABLE:
            try:
                header = ANY_DECODER.decode(_repair(head, DecodeReport()) + b"}")
            except UNDECODABLE:
                pos = key + 1
                continue
        return m.end(), header if isinstance(header, dict) else {}


class PendingBlocks:
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


def stop_at_oversized_text(report: DecodeReport, offset: int, limit: int) -> None:
    report.partial = True
    report.warnings.append(
        f"more than {limit >> 20} MiB of text without an event boundary at byte {offset} "
        "(KINETOSCOPE_MAX_EVENT_MB): stopped reading there, kept the events before it"
    )


def decode_whole_events(body: bytes, report: DecodeReport) -> tuple[list[Event], int]:
    """Decode the whole events at the start of `body` (a slice from
    `pieces.iter_event_pieces`). Returns the events and how many bytes of `body` they used; the
    rest is text the slice cut inside an event, to be decoded with what follows."""
    start = skip_separator(body, 0)
    if start == len(body):
        return [], len(body)
    events = decode_events(body[start:], report)
    if events is not None:
        return events, len(body)
    for cut in islice(split_points(body, start), 3):
        events = decode_events(body[start:cut], report)
        if events is not None:
            return events, cut
    # Broken text rather than a bad cut: keep every event that decodes.
    return decode_run(body, start, len(body), report, 0), len(body)
