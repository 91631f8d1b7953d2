"""Inputs for the scanner fuzzer: real events as seeds, and structure-aware mutations.

Seeds are single events of real traces (the corpus when present, else tests/data), kept
as their original text (msgspec.Raw), a few of each kind of event of each file. A fuzz
input is one to four of them joined as the decoder hands them to the scanner, then
mutated where the scanner is most likely wrong: cut points, string escapes, numbers at
the edges of int64 / float64, deep nesting, duplicate keys, bytes that are not UTF-8,
control characters, values of the wrong type, and plain byte edits.
"""

from __future__ import annotations

import gzip
import random
import re
from collections.abc import Callable
from pathlib import Path

import msgspec

TESTS = Path(__file__).resolve().parent
CORPUS = TESTS.parents[1] / "shared" / "corpus"
SEED_FILE_LIMIT = 1_300_000  # bytes on disk: bigger traces add little and take seconds to read
PER_KIND = 6

_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_PAIR = re.compile(rb'"[^"\\]*"\s*:\s*(?:-?[\d.eE+-]+|"(?:[^"\\]|\\.)*"|null|true|false)')
_VALUE_START = re.compile(rb":\s*")

# fmt: off
EDGE_NUMBERS = [
    b"0", b"-0", b"-0.0", b"1", b"-1", b"01", b"1.", b".5", b"1e", b"1e+", b"- 1",
    b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
    b"-9223372036854775809", b"18446744073709551615", b"18446744073709551616",
    b"9007199254740993", b"9007199254740993.0", b"1e308", b"1.7976931348623157e308", b"1e309",
    b"-1e309", b"5e-324", b"2.4703282292062327e-324", b"1e-400", b"1E+2", b"0.1",
    b"1623143089861.123456789", b"123456789012345678901234567890",
    b"0.000000000000000000000000000001", b"1" * 400, b"1." + b"0" * 400 + b"1",
    b"1e99999999999999999999", b"NaN", b"Infinity", b"-Infinity", b"1.5e-7", b"100.5000",
]
ESCAPES = [
    b"\\n", b"\\t", b"\\\\", b'\\"', b"\\/", b"\\b", b"\\f", b"\\r", b"\\u0000", b"\\u001f",
    b"\\u00e9", b"\\u20ac", b"\\uffff", b"\\ud83d\\ude00", b"\\ud800", b"\\udc00",
    b"\\ud800\\u0041", b"\\u0062", b"\\x41", b"\\u12", b"\\U0041", b"\\", b"\\a",
]
BAD_BYTES = [
    b"\xff", b"\xfe", b"\x80", b"\xc0\xaf", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
]
VALUES = [
    b"null", b"true", b"false", b'""', b'"x"', b"{}", b"[]", b"[1]", b'{"a": 1}', b"1.5", b"-1",
    b'"12"', b'"1.5"', b"nul", b"tru", b"[", b"{", b"}", b"]", b",", b":",
]
KEYS = [
    b'"ph"', b'"cat"', b'"name"', b'"pid"', b'"tid"', b'"ts"', b'"dur"', b'"id"', b'"bp"',
    b'"s"', b'"args"', b'"External id"', b'"external id"', b'"correlation"', b'"device"',
    b'"stream"', b'"blocks per SM"', b'"est. achieved occupancy %"', b'"Bytes"', b'"Addr"',
    b'"Device Type"', b'"Device Id"', b'"Total Allocated"', b'"Total Reserved"',
    b'"Call stack"', b'"sort_index"', b'"labels"', b'"n\\u0061me"', b'"ph "', b'""',
]
PHASES = [b'"X"', b'"M"', b'"i"', b'"s"', b'"f"', b'"C"', b'"B"', b'"E"', b'"x"', b'""']
# fmt: on


class _Trace(msgspec.Struct):
    traceEvents: list[msgspec.Raw] = []


def _events_of(path: Path) -> list[bytes]:
    try:  # a damaged file of the corpus gives no seeds (whole events only)
        text = path.read_bytes()
        if path.name.endswith(".gz"):
            text = gzip.decompress(text)
        text = text.lstrip()
        if text.startswith(b"["):
            raws = msgspec.json.decode(text, type=list[msgspec.Raw])
        else:
            raws = msgspec.json.decode(text, type=_Trace).traceEvents
    except (msgspec.DecodeError, UnicodeDecodeError, EOFError, OSError):
        return []
    return [bytes(r) for r in raws]


def _kind(event: bytes) -> tuple[str, ...]:
    try:
        value = msgspec.json.decode(event)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return ("bad",)
    if not isinstance(value, dict):
        return ("not an object",)
    args = value.get("args")
    keys = tuple(sorted(args)) if isinstance(args, dict) else ()
    return (str(value.get("ph")), str(value.get("cat")), *keys[:6])


def seed_files() -> list[Path]:
    """Small real traces: the corpus's (when here) and tests/data's."""
    found = [TESTS / "data" / "tiny.pt.trace.json"]
    found += sorted((TESTS / "data" / "h100").rglob("*.json*"))
    if CORPUS.is_dir():
        found += sorted(
            p
            for p in CORPUS.rglob("*.json*")
            if "goldens" not in p.parts and 0 < p.stat().st_size < SEED_FILE_LIMIT
        )
    return [p for p in found if p.is_file() and p.name.endswith((".json", ".json.gz"))]


def seed_events(rng: random.Random, files: list[Path] | None = None) -> list[bytes]:
    """A few events of each kind (phase, category, args keys) of every seed file."""
    seeds: list[bytes] = []
    for path in files if files is not None else seed_files():
        events = _events_of(path)
        sample = rng.sample(events, min(len(events), 3000))
        by_kind: dict[tuple[str, ...], list[bytes]] = {}
        for event in sample:
            group = by_kind.setdefault(_kind(event), [])
            if len(group) < PER_KIND:
                group.append(event)
        seeds += [e for group in by_kind.values() for e in group]
    return seeds


def joined(rng: random.Random, pool: list[bytes]) -> bytes:
    """One to four events joined by the separators real text has."""
    parts = [rng.choice(pool) for _ in range(rng.choice((1, 1, 2, 3, 4)))]
    return rng.choice((b",", b",\n", b", ", b",\r\n  ")).join(parts)


def _spot(rng: random.Random, body: bytes, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
    found = list(pattern.finditer(body))
    return rng.choice(found) if found else None


def _replace(body: bytes, match: re.Match[bytes] | None, new: bytes) -> bytes:
    return body if match is None else body[: match.start()] + new + body[match.end() :]


def cut(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    i, j = sorted(rng.randrange(len(body) + 1) for _ in range(2))
    return rng.choice((body[:i], body[i:], body[:i] + body[j:], body[i:j]))


def splice(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    other = rng.choice(pool)
    return body[: rng.randrange(len(body) + 1)] + other[rng.randrange(len(other) + 1) :]


def edge_number(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    return _replace(body, _spot(rng, body, _NUMBER), rng.choice(EDGE_NUMBERS))


def escape(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    match = _spot(rng, body, _STRING)
    if match is None:
        return body
    at = rng.randrange(match.start() + 1, match.end())
    return body[:at] + rng.choice(ESCAPES) + body[at:]


def deep(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    depth = rng.choice((1, 2, 30, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000))
    nest = rng.choice(
        (b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth, b"[" * depth)
    )
    return _replace(body, _spot(rng, body, rng.choice((_NUMBER, _STRING))), nest)


def duplicate_key(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    match = _spot(rng, body, _PAIR)
    if match is None:
        return body
    return body[: match.end()] + rng.choice((b",", b", ")) + match.group() + body[match.end() :]


def not_utf8(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    match = _spot(rng, body, _STRING)
    at = rng.randrange(match.start() + 1, match.end()) if match else rng.randrange(len(body) + 1)
    return body[:at] + rng.choice(BAD_BYTES) + body[at:]


def control(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    match = _spot(rng, body, _STRING)
    at = rng.randrange(match.start() + 1, match.end()) if match else rng.randrange(len(body) + 1)
    return body[:at] + bytes([rng.choice((0, 1, 9, 10, 13, 27, 31, 127))]) + body[at:]


def other_value(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    match = _spot(rng, body, _VALUE_START)
    if match is None:
        return body
    rest = body[match.end() :]
    token = _NUMBER.match(rest) or _STRING.match(rest) or re.match(rb"null|true|false", rest)
    end = match.end() + (token.end() if token else 0)
    new = rng.choice(VALUES + PHASES + EDGE_NUMBERS[:12])
    return body[: match.end()] + new + body[end:]


def other_key(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    return _replace(body, _spot(rng, body, _STRING), rng.choice(KEYS + PHASES))


def byte_edit(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    at = rng.randrange(len(body) + 1)
    edit = rng.randrange(4)
    if edit == 0 or at == len(body):
        return body[:at] + bytes([rng.randrange(256)]) + body[at:]
    if edit == 1:
        return body[:at] + body[at + 1 :]
    if edit == 2:
        return body[:at] + bytes([body[at] ^ (1 << rng.randrange(8))]) + body[at + 1 :]
    return body[:at] + rng.choice((b" ", b"\t", b"\n", b"\r", b"\x0b", b"\xa0")) + body[at:]


Mutator = Callable[[random.Random, bytes, list[bytes]], bytes]
MUTATORS: list[Mutator] = [  # the edits most likely to find a difference, twice
    cut,
    splice,
    edge_number,
    edge_number,
    escape,
    escape,
    deep,
    duplicate_key,
    not_utf8,
    control,
    other_value,
    other_value,
    other_key,
    byte_edit,
    byte_edit,
]


def mutated(rng: random.Random, body: bytes, pool: list[bytes]) -> bytes:
    """`body` after one to four mutations (none, one time in eight: the seed as it is)."""
    if rng.randrange(8) == 0:
        return body
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        body = rng.choice(MUTATORS)(rng, body, pool)
    return body[:200_000]
