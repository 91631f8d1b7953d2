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
# Text a load may decode in vain (tries and salvage of damaged text) before it stops.
SALVAGE_BUDGET = 256 << 20

# msgspec raises RecursionError for values nested too deep (one hostile arg).
UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
ANY_DECODER = msgspec.json.Decoder()
_events_decoder = msgspec.json.Decoder(list[Event])
_SEPARATOR_RUN = re.compile(rb"[ \t\r\n,]*")
_BOM = b"\xef\xbb\xbf"
_BETWEEN_EVENTS = re.compile(rb"\}\s*,\s*\{")
_EVENTS_KEY = b'"traceEvents"'
_OPENS_ARRAY = re.compile(rb"\s*:\s*\[")
_CLOSES_EMPTY = re.compile(rb"\s*\]")

EMPTY_MESSAGE = (
    "the file is empty (0 bytes); the profiler was probably interrupted before it wrote the trace"
)
BLANK_MESSAGE = (
    "the file holds only blank text (spaces, newlines); the profiler was probably "
    "interrupted before it wrote the trace"
)


# Bytes no JSON text holds (controls other than tab, CR, LF, which JSON escapes in
# strings): a few come from odd writers; a dense run is binary data, e.g. what an
# inflater makes of gzip data after a flipped bit.
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROLS = bytes(range(0x20)).translate(None, b"\t\n\r") + b"\x7f"
_BINARY_WINDOW = 4096
_AT_BYTE = re.compile(r"\(byte (\d+)\)")
_REPAIRABLE = re.compile(rb"N/A|NaN|Infinity|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\xff]|\d[eE]\+?\d{3}")
_BINARY_SHARE = 64  # more than 1 byte in 64 of a window: binary, not text


def binary_start(buf: bytes, lo: int = 0, hi: int | None = None) -> int | None:
    """Where buf[lo:hi] turns into binary data (not JSON text), or None. Only text that
    failed to decode is looked at, so a whole trace never pays for it."""
    hi = len(buf) if hi is None else hi
    pos = lo
    while (m := _BINARY.search(buf, pos, hi)) is not None:
        window = buf[m.start() : m.start() + _BINARY_WINDOW]
        if (len(window) - len(window.translate(None, _CONTROLS))) * _BINARY_SHARE > len(window):
            return m.start()
        pos = m.start() + _BINARY_WINDOW  # a stray control byte: look further on
    return None


def opens_object(buf: bytes) -> bool:
    """Whether the text starts with `{` (the events array inside a top-level object)."""
    return buf.lstrip(_BOM + b" \t\r\n")[:1] == b"{"


def _repair(chunk: bytes, report: DecodeReport) -> bytes:
    return repair_text(chunk, report.warnings)


def decode_events(body: bytes, report: DecodeReport) -> list[Event] | None:
    """Decode `body` (whole events joined by commas); None if it is not that. Binary data
    (damage) is not repaired: repairs cost seconds on megabytes of it and fix nothing."""
    errors: list[BaseException] = []
    events = _decode_typed(_as_array(body), report, errors)
    if events is not None:
        return events
    report.failed_at = _failed_at(errors)
    if not _repair_may_help(body, errors):
        _failed(body, report)
        return None
    repaired = _repair(body, report)
    events = None if repaired is body else _decode_typed(_as_array(repaired), report)
    if events is None:
        _failed(body, report)
    return events


def _failed(body: bytes, report: DecodeReport) -> None:
    """Count text decoded in vain; past SALVAGE_BUDGET the load stops (a bounded cost
    for damaged text of any kind)."""
    report.failed_bytes += len(body)
    if report.failed_bytes > SALVAGE_BUDGET and not report.stopped:
        report.partial = report.stopped = True
        report.warnings.append(
            f"more than {SALVAGE_BUDGET >> 20} MiB of text failed to decode (the file is "
            "damaged): stopped reading, kept the events read so far"
        )


def _repair_may_help(body: bytes, errors: list[BaseException]) -> bool:
    """Whether what msgspec stopped at is what `repair_text` fixes (bytes that are not
    UTF-8, N/A, NaN, Infinity, a huge exponent, a raw control byte): repairs cost about a
    second per 10 MB, and damaged text (a flipped bit in gzip data) fails elsewhere."""
    if not errors or _not_utf8(errors[0]):
        return True
    found = _AT_BYTE.search(str(errors[0]))
    if found is None:  # truncated, nested too deep: no repair changes that
        return False
    at = int(found.group(1)) - 1  # in `[body]`
    return _REPAIRABLE.search(body, max(0, at - 16), at + 32) is not None


def _not_utf8(error: BaseException) -> bool:
    """Whether msgspec stopped at text that is not UTF-8: before 0.23 it raises Python's
    UnicodeDecodeError, from 0.23 a DecodeError ("Invalid UTF-8 encoded string") that
    says no position."""
    return isinstance(error, UnicodeDecodeError) or "UTF-8" in str(error)


def _failed_at(errors: list[BaseException]) -> int | None:
    """Where in the body msgspec stopped (None: at its end, or not said)."""
    found = _AT_BYTE.search(str(errors[0])) if errors else None
    return int(found.group(1)) - 1 if found else None


def _as_array(body: bytes) -> bytes:
    """`[body]`, copying the text once (`b"[" + body + b"]"` copies it twice)."""
    return b"".join((b"[", body, b"]"))


def _decode_typed(
    text: bytes, report: DecodeReport, errors: list[BaseException] | None = None
) -> list[Event] | None:
    try:
        return _events_decoder.decode(text)
    except msgspec.ValidationError:
        return _decode_lenient(text, report)
    except UNDECODABLE as exc:
        if errors is not None:
            errors.append(exc)
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


def first_split_point(buf: bytes) -> int | None:
    """The first candidate cut point of `buf` (just after an event's closing brace)."""
    found = _BETWEEN_EVENTS.search(buf)
    return found.start() + 1 if found else None


def skip_separator(buf: bytes, pos: int) -> int:
    match = _SEPARATOR_RUN.match(buf, pos)
    return match.end() if match else pos


def decode_run(buf: bytes, lo: int, hi: int, report: DecodeReport, consumed: int) -> list[Event]:
    """Decode buf[lo:hi]; where it does not decode, keep every event that does. Where
    the text turns into binary data (damage), keep the events before it and stop the
    load there (`report.stopped`): what follows damage of that kind is not salvaged."""
    if hi <= lo:
        return []
    events = decode_events(buf[lo:hi], report)
    if events is not None:
        return events
    binary = binary_start(buf, lo, hi)
    if binary is not None:
        hi = binary
        stop_at_damage(report, consumed + binary, "turns into binary data")
    cuts = [lo] + [m.start() + 1 for m in _BETWEEN_EVENTS.finditer(buf, lo, hi)] + [hi]
    kept: list[Event] = []
    bad_at: int | None = None
    skipped = 0
    for a, b in zip(cuts, cuts[1:]):
        piece_start = skip_separator(buf, a)
        piece = decode_events(buf[piece_start:b], report)
        if piece is None and report.compressed and b < hi:  # the last one: a cut file
            # Inflated after damage, gzip text repeats earlier text at wrong places:
            # events that decode there would be wrong numbers, so none is kept.
            stop_at_damage(report, consumed + piece_start, "stops being JSON (gzip data damaged)")
            break
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


def find_events_start(
    buf: bytes, final: bool, report: DecodeReport | None = None
) -> tuple[int, dict[str, Any]] | None:
    """Offset just after the `[` that opens the events, and the header read before it.
    A header that cannot be read (nested too deep, damaged) before the only
    `"traceEvents": [` of the file: the events are read, the header is not (`report`
    says so, partial)."""
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
    unread: int | None = None  # the first array whose header does not decode
    while True:
        key = buf.find(_EVENTS_KEY, pos)
        if key < 0:
            if unread is not None and report is not None and (final or len(buf) > SNIFF_LIMIT):
                report.partial = True
                report.warnings.append(
                    "the keys before the events array could not be read (nested too deep "
                    "or damaged): the events are read, the trace's header is not"
                )
                return unread, {}
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
        if m is None or _empty_array_before_another(buf, m.end()):
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
                unread = m.end() if unread is None else unread
                pos = key + 1
                continue
        return m.end(), header if isinstance(header, dict) else {}


def _empty_array_before_another(buf: bytes, after_open: int) -> bool:
    """An empty `"traceEvents": []` with a second events array after it (a header
    re-serialized with the key, then the events): JSON's last key wins, as in Python's
    json and Perfetto, so the events are the later array's."""
    if _CLOSES_EMPTY.match(buf, after_open) is None:
        return False
    key = buf.find(_EVENTS_KEY, after_open)
    while key >= 0:  # a later array, not the key's text in a string value
        if _OPENS_ARRAY.match(buf, key + len(_EVENTS_KEY)):
            return True
        key = buf.find(_EVENTS_KEY, key + 1)
    return False


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


def stop_at_damage(report: DecodeReport, offset: int, what: str) -> None:
    """The text is damaged from `offset` on: the load keeps what came before, and stops."""
    report.partial = report.stopped = True
    report.warnings.append(
        f"the text {what} at byte {offset} of the decompressed text: the file is damaged "
        "there; stopped reading, kept the events before it"
    )


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
