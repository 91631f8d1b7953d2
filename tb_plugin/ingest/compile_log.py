"""Reading a TORCH_TRACE structured compile log, bounded, damage said and never fatal.

The format (torch's `torch/_logging/_internal.py`, `trace_structured`; tlparse reads the
same): every record is one line, a glog prefix then a JSON object,

    V1123 18:53:21.040000 24212 torch/_dynamo/utils.py:2350] {"chromium_event": {}, ...}

(level, month and day, the writer's local wall time, the process id, the source line),
where the object's first key is the record's type and its value the record's metadata;
the envelope beside it carries `frame_id`, `frame_compile_id`, `attempt`,
`compiled_autograd_id` (each only when known) and `rank` (with an initialised process
group). When it has `has_payload` (the md5 of the payload's UTF-8), the payload follows on
lines that each start with a tab, joined by newlines. Blank lines are noise (some log
collectors add them) and skipped.

Bounds: at most KINETOSCOPE_MAX_COMPILE_LOG_MB (default 512) of text is read, counted on
every line (the log of a big model is mostly generated code, which is skipped line by
line, never held), a line longer than MAX_LINE is skipped, a payload is kept only for the
records the caller asks for and only up to MAX_PAYLOAD, and the read stops at
KINETOSCOPE_COMPILE_LOG_TIMEOUT_S (default 30 s; or the load timeout, when less). Damage
is skipped and said: a line that is not a record, metadata that is not JSON, a payload
whose md5 differs from its record's (a lost or changed line), a gzip stream that is cut.
Records are only read here; what they mean is `analysis/compile`'s business.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import msgspec

from . import storage
from .limits import env_number, load_timeout_s

MAX_LINE = 16 << 20  # a metadata line (compilation metrics are some 30 KB)
MAX_PAYLOAD = 4 << 20  # a kept payload (chromium events, reasons, artifacts)
MAX_WARNINGS = 20  # warnings kept word for word; the rest are counted
_CHECK_EVERY = 4096  # lines between two looks at the clock
# `[rank0]:` (console logs only), level, MMDD, time, pid, path:line, an optional
# ` [0/0]` trace id (console logs), then the metadata's first key.
_RECORD = re.compile(
    rb"^(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +(\d+) [^\]]*?:\d+\]"
    rb'(?: \[[^\]]*\])? (\{)"([A-Za-z0-9_.]+)"'
)
_MD5 = re.compile(r"^[0-9a-f]{32}$")
_DECODER = msgspec.json.Decoder()


class CompileLogError(Exception):
    """A log that cannot be read at all; `kind` says which way (`empty_file`,
    `not_a_log`), as a trace's error kinds do."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class LogRecord:
    """One record: `kind` its type, `meta` the whole JSON object (the envelope's keys and
    the metadata under `meta[kind]`), its payload when asked for, the line it starts on
    and the writing process's id (from the line's prefix)."""

    kind: str
    meta: dict[str, Any]
    payload: str | None
    line: int
    pid: int


@dataclass
class LogReading:
    """What a read of a log saw: how many records it handed over (of the kinds asked), how
    many lines the log has, how many records or lines were skipped as damaged and why (the
    first MAX_WARNINGS), and whether the read stopped before the end (`partial`)."""

    records: int = 0
    lines: int = 0
    skipped: int = 0
    warnings: list[str] = field(default_factory=list)
    partial: bool = False
    text_bytes: int = 0
    records_seen: int = 0  # record lines of any kind, kept or not
    md5_mismatches: int = 0  # kept payloads whose md5 is not their record's

    def warn(self, text: str) -> None:
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)


def max_compile_log_bytes() -> int:
    """Text read per log (KINETOSCOPE_MAX_COMPILE_LOG_MB, default 512: a big model's log,
    mostly generated code, is a few hundred MB; far below a trace's cap)."""
    return int(env_number("KINETOSCOPE_MAX_COMPILE_LOG_MB", 512) * (1 << 20))


def compile_log_timeout_s() -> float:
    """Time a log's read may take (KINETOSCOPE_COMPILE_LOG_TIMEOUT_S, default 30 s)."""
    return env_number("KINETOSCOPE_COMPILE_LOG_TIMEOUT_S", 30)


Wanted = Callable[[str, dict[str, Any]], bool]
Consume = Callable[[LogRecord], None]


def read_compile_log(
    path: str, kinds: frozenset[str], payload_of: Wanted, consume: Consume
) -> LogReading:
    """Hands each record of `kinds` in the log at `path` (plain or gzipped) to `consume`,
    in file order, with its payload when `payload_of(kind, meta)` accepts it; nothing is
    kept here, so the caller holds only what it takes of each. OSError when the log cannot
    be opened (as a trace's open), CompileLogError when it holds no record at all."""
    with storage.open_binary(path) as raw:
        stream: IO[bytes] | gzip.GzipFile = raw
        if _peek(raw) == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=raw, mode="rb")
        reading = _Reader(kinds, payload_of, consume).read(stream)
    if reading.records_seen == 0 and not reading.partial:
        if reading.lines == 0:
            raise CompileLogError("the log is empty", "empty_file")
        raise CompileLogError("no TORCH_TRACE record in it (not a compile log)", "not_a_log")
    return reading


def _peek(raw: Any) -> bytes:
    peek = getattr(raw, "peek", None)
    return bytes(peek(2)[:2]) if peek is not None else b""


class _Reader:
    """One read: the pending record waits for its payload lines."""

    def __init__(self, kinds: frozenset[str], payload_of: Wanted, consume: Consume) -> None:
        self.kinds = kinds
        self.payload_of = payload_of
        self.consume = consume
        self.out = LogReading()
        self.pending: LogRecord | None = None
        self.expect: str | None = None  # the pending record's payload md5
        self.parts: list[bytes] | None = None  # its payload lines, when kept
        self.size = 0

    def read(self, stream: IO[bytes] | gzip.GzipFile) -> LogReading:
        out = self.out
        limit = max_compile_log_bytes()
        deadline = time.monotonic() + min(load_timeout_s(), compile_log_timeout_s())
        for number, line, whole in _lines(stream, out):
            # Every line counts (a log of payload lines alone, too): the bounds first.
            if out.text_bytes > limit:
                out.partial = True
                out.warn(
                    f"stopped after {limit >> 20} MiB of text (KINETOSCOPE_MAX_COMPILE_LOG_MB)"
                )
                break
            if number % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                out.partial = True
                out.warn("stopped: reading took longer than KINETOSCOPE_COMPILE_LOG_TIMEOUT_S")
                break
            if line[:1] == b"\t":
                self._payload_line(line)
                continue
            if not line.strip():
                continue  # blank noise, also inside a payload (its own blank lines keep a tab)
            self._finish()
            if not whole:
                out.skipped += 1
                out.warn(f"line {number}: longer than {MAX_LINE >> 20} MiB, skipped")
                continue
            self._record(number, line)
        self._finish()
        if out.md5_mismatches:
            out.warn(
                f"{out.md5_mismatches} of the payloads read differ from the md5 their record "
                "states (changed after torch wrote them); read as they are (payloads skipped "
                "unread, generated code and graphs, are not checked)"
            )
        return out

    def _payload_line(self, line: bytes) -> None:
        if self.parts is None:
            return
        self.size += len(line)
        if self.size > MAX_PAYLOAD:
            assert self.pending is not None
            self.out.skipped += 1
            self.out.warn(
                f"line {self.pending.line}: payload over {MAX_PAYLOAD >> 20} MiB, skipped"
            )
            self.pending = self.parts = None
            return
        self.parts.append(line[1:])

    def _record(self, number: int, line: bytes) -> None:
        out = self.out
        m = _RECORD.match(line)
        if m is None:
            out.skipped += 1
            out.warn(f"line {number}: not a TORCH_TRACE record, skipped")
            return
        out.records_seen += 1
        kind = m.group(3).decode("ascii")
        if kind not in self.kinds:
            return
        try:
            meta = _DECODER.decode(line[m.start(2) :])
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            # a byte that is not UTF-8 in a string: UnicodeDecodeError before msgspec 0.23,
            # a DecodeError from 0.23
            out.skipped += 1
            out.warn(f"line {number}: its {kind} record is not JSON (or not UTF-8), skipped")
            return
        if not isinstance(meta, dict):
            return
        record = LogRecord(kind, meta, None, number, int(m.group(1)))
        expect = meta.get("has_payload")
        if isinstance(expect, str) and self.payload_of(kind, meta):
            self.pending, self.expect, self.parts, self.size = record, expect, [], 0
        else:
            self._hand_over(record)

    def _finish(self) -> None:
        """The pending record, its payload checked against its md5."""
        record, parts = self.pending, self.parts
        self.pending = self.parts = None
        if record is None or parts is None:
            return
        payload = b"\n".join(parts)
        # As tlparse does: a payload that differs from its md5 is counted, and still read
        # (paths rewritten in a log change it); what no longer parses is skipped by its reader.
        if not _MD5.match(self.expect or "") or hashlib.md5(payload).hexdigest() != self.expect:
            self.out.md5_mismatches += 1
        record.payload = payload.decode("utf-8", "replace")
        self._hand_over(record)

    def _hand_over(self, record: LogRecord) -> None:
        self.out.records += 1
        self.consume(record)


def _lines(stream: IO[bytes] | gzip.GzipFile, out: LogReading) -> Iterator[tuple[int, bytes, bool]]:
    """(number, line without its end, whether it was read whole); a line over MAX_LINE is
    read on to its end and given cut. A damaged or cut gzip stream ends the lines."""
    number = 0
    while True:
        try:
            line = stream.readline(MAX_LINE)
            whole = len(line) < MAX_LINE or line.endswith(b"\n")
            while not whole:
                rest = stream.readline(MAX_LINE)
                out.text_bytes += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        except (EOFError, OSError, zlib.error) as exc:
            out.partial = True
            out.warn(f"the compressed stream ends early or is damaged after line {number} ({exc})")
            return
        if not line:
            return
        number += 1
        out.lines = number
        out.text_bytes += len(line)
        yield number, line.rstrip(b"\r\n") if whole else line, whole
