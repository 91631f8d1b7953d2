"""Fuzzer of the compile-log reader and the compile view's facts (`ingest.compile_log`,
`analysis.compile`): real TORCH_TRACE logs (the repository's, recorded by torch, and
tlparse's test inputs when the corpus is beside it) cut to a window of records and mutated
line by line and inside the records' JSON: records dropped, repeated, swapped and cut;
prefixes damaged; metadata values of the wrong type or at the edges of numbers; compile
ids that are not ids; payloads whose JSON is cut or whose phases never end; bytes that are
not UTF-8; gzip, whole or cut.

Property, for every input: the log's facts or a clear error of a kind a person can act on
(never `internal`: an exception the reader did not expect), the view joined from them
without an exception, within SLOW_SECONDS, its numbers finite and its JSON in proportion
to the input.

By hand, the long budget (findings land in --out as <kind>-<sha1>.log with a .txt):

    python tests/fuzz_compile_log.py --minutes 30 [--out fuzz-findings] [--seed N]

The test command runs a few seconds of it in a child process (tests/test_property_fuzz.py).
"""

from __future__ import annotations

import gzip
import json
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import msgspec
from fuzz_property import Finding, run_property_fuzzer
from fuzz_serving import _not_finite
from kinetoscope.analysis.compile.view import _joined, _read
from kinetoscope.ingest.compile_log_files import CompileLogFile

TESTS = Path(__file__).resolve().parent
CORPUS_LOGS = TESTS.parents[1] / "shared" / "corpus" / "tlparse" / "tests" / "inputs"
SLOW_SECONDS = 3.0
ANSWER_FLOOR, ANSWER_PER_BYTE = 100_000, 8
WINDOW_MAX = 400  # lines of a seed in one input
NAME = "dedicated_log_torch_trace_rank_0_fuzz.log"

# fmt: off
VALUES: list[Any] = [
    0, -1, 2**63, -(2**63), 2**64, 1.5, 1e308, "0/0", "", "x", "!1/2/3", "0/0_1", None, True,
    [], {}, [0, 1], {"a": 1}, "\u0000", "\ud7ff" * 3,
]
KEYS = [
    "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank", "has_payload",
    "compile_id", "name", "ts", "ph", "fail_type", "fail_reason", "reason", "guard",
    "user_stack", "restart_reasons", "cache_state", "dynamo_time_before_restart_s",
]
RECORDS = [
    b'{"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}',
    b'{"compilation_metrics": {"compile_id": "0/1", "fail_type": "x"}, "frame_id": 0, '
    b'"frame_compile_id": 1}',
    b'{"chromium_event": {}, "frame_id": 0, "frame_compile_id": 0, "has_payload": "0"}',
    b'{"artifact": {"name": "recompile_reasons", "encoding": "json"}, "has_payload": "0"}',
    b'{"dynamo_guards": {}, "frame_id": 1, "frame_compile_id": 0}', b'{}', b'[]', b'{"str": 1}',
]
PAYLOADS = [
    b'\t{"name": "dynamo", "ts": 1e300, "ph": "B", "args": {"compile_id": "0/0"}}',
    b'\t{"name": "dynamo", "ts": -1, "ph": "E"}', b'\t{"name": 1, "ph": "X", "dur": "NaN"}',
    b'\t["x"]', b"\t{", b"\t\xff\xfe", b'\t{"ph": "B", "ts": 5, "name": "inductor_compile"}',
]
PREFIXES = [b"V1123 18:53:21.040000 24212 a.py:1] ", b"V1123 18:53:21.040000 x a.py:1] ",
            b"V ", b"I1123 00:00:00.000000 1 :0] ", b"V1123 18:53:21.040000 24212 a.py:1]"]
# fmt: on


def seeds() -> list[list[bytes]]:
    paths = sorted((TESTS / "data" / "compile_logs").rglob("*.log.gz"))
    out = [gzip.decompress(p.read_bytes()).splitlines() for p in paths]
    if CORPUS_LOGS.is_dir():
        out += [p.read_bytes().splitlines() for p in sorted(CORPUS_LOGS.glob("*.log"))]
    return out


class Mutator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seeds = seeds()

    def input(self) -> bytes:
        rng = self.rng
        lines = rng.choice(self.seeds)
        start = rng.randrange(max(1, len(lines) - WINDOW_MAX))
        window = list(lines[start : start + rng.randint(1, WINDOW_MAX)])
        for _ in range(rng.randint(1, 6)):
            self._mutate(window)
        data = b"\n".join(window) + (b"\n" if rng.random() < 0.9 else b"")
        if rng.random() < 0.3:
            data = gzip.compress(data)
            if rng.random() < 0.3:
                data = data[: rng.randrange(len(data))]
        return data

    def _mutate(self, lines: list[bytes]) -> None:
        rng = self.rng
        at = rng.randrange(len(lines)) if lines else 0
        choice = rng.randrange(9)
        if choice == 0 and lines:
            del lines[at : at + rng.randint(1, 20)]
        elif choice == 1 and lines:
            lines[at:at] = lines[at : at + rng.randint(1, 20)] * rng.randint(1, 50)
        elif choice == 2 and lines:
            lines[at] = lines[at][: rng.randrange(len(lines[at]) + 1)]
        elif choice == 3 and lines:
            j = rng.randrange(len(lines))
            lines[at], lines[j] = lines[j], lines[at]
        elif choice == 4:
            lines.insert(at, rng.choice(PREFIXES) + rng.choice(RECORDS))
        elif choice == 5:
            lines.insert(at, rng.choice(PAYLOADS))
        elif choice == 6 and lines:
            lines[at] = self._edited_record(lines[at])
        elif choice == 7 and lines:
            line = bytearray(lines[at])
            for _ in range(rng.randint(1, 4)):
                if line:
                    line[rng.randrange(len(line))] = rng.randrange(256)
            lines[at] = bytes(line)
        elif lines:  # a record's prefix kept, its JSON replaced by another's
            head = lines[at].split(b"] ", 1)[0]
            lines[at] = head + b"] " + rng.choice(RECORDS)

    def _edited_record(self, line: bytes) -> bytes:
        """A value of the record's JSON (or of its payload line) replaced."""
        head, sep, body = (
            line.partition(b"] ") if not line.startswith(b"\t") else (b"", b"\t", line[1:])
        )
        try:
            value = json.loads(body)
        except ValueError:
            return line
        if isinstance(value, dict):
            target = value
            inner = [v for v in value.values() if isinstance(v, dict)]
            if inner and self.rng.random() < 0.5:
                target = self.rng.choice(inner)
            target[self.rng.choice(KEYS)] = self.rng.choice(VALUES)
        return head + sep + json.dumps(value).encode()


def check(data: bytes, folder: Path) -> tuple[str, Finding | None]:
    """What the input gave ("log" or an error kind), and (finding kind, detail) or None."""
    path = folder / (NAME + (".gz" if data[:2] == b"\x1f\x8b" else ""))
    path.write_bytes(data)
    log = CompileLogFile(str(path), path.name, 0, len(data), 0)
    started = time.monotonic()
    try:
        facts, info = _read(log)
        view = _joined("fuzz", [info], [facts] if facts is not None else [], [])
    except Exception:  # noqa: BLE001 - what the property rules out
        return "raised", ("raised", traceback.format_exc())
    finally:
        path.unlink()
    elapsed = time.monotonic() - started
    result = info["error_kind"] or "log"
    if result == "internal":
        return result, ("internal", str(info["error"]))
    if elapsed > SLOW_SECONDS:
        return result, ("slow", f"{elapsed:.2f} s")
    answer = msgspec.json.encode(view)
    if len(answer) > ANSWER_FLOOR + ANSWER_PER_BYTE * len(data):
        return result, ("big-answer", f"{len(answer)} bytes of answer from {len(data)}")
    if _not_finite(view, "view"):
        return result, ("not-finite", ", ".join(_not_finite(view, "view")[:5]))
    return result, None


def main(argv: list[str] | None = None) -> int:
    return run_property_fuzzer(__doc__ or "", lambda rng: Mutator(rng).input, check, ".log", argv)


if __name__ == "__main__":
    sys.exit(main())
