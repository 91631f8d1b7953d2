"""Fuzzer of the memory snapshot reader and summary (`ingest.snapshot`,
`analysis.memory.snapshot_view.summarise`), with inputs from tests/fuzz_snapshot_mutations.py.

Property, for every input: a snapshot summary or a `SnapshotError` whose `kind` is one of
`ERROR_KINDS`, within a time bound (SLOW_SECONDS) and a memory bound (the process runs
under RLIMIT_AS: a MemoryError, or the reader's own "too_large", from an input of a few
hundred KB is a finding), with an answer whose JSON stays in proportion to the input, a
pickle Python's own pickler wrote never called damaged, and nothing ever run: an audit
hook records the events that running code raises (os.system, subprocess, compiling text
to run, pickle.find_class reaching the default resolver...), and the hostile inputs'
payload would create a canary file.

By hand, the long budget (findings land in --out as <kind>-<sha1>.pickle with a .txt):

    python tests/fuzz_snapshot.py --minutes 30 [--out fuzz-findings] [--seed N]

The test command runs a few seconds of it in a child process (tests/test_snapshot_fuzz.py).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

import msgspec
from fuzz_property import Stats, limit_memory, run_arguments
from fuzz_snapshot_mutations import Mutator
from kinetoscope.analysis.memory.snapshot_view import ANSWER_FLOOR, ANSWER_PER_BYTE, summarise
from kinetoscope.ingest.snapshot import SnapshotError, decode_snapshot
from kinetoscope.ingest.snapshot_guard import ERROR_KINDS

SLOW_SECONDS = 3.0
MEMORY_LIMIT_MB = 2048  # address space over what the process holds when it starts
_CODE_EVENTS = (
    "os.system",
    "subprocess.Popen",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "compile",  # exec or eval of text (a lazy import runs cached code: "exec" without it)
    "pickle.find_class",
    "ctypes.dlopen",
    "socket.connect",
    "os.remove",
)
ran_code: list[str] = []


def _audit(event: str, args: object) -> None:
    if event.startswith(_CODE_EVENTS):
        ran_code.append(event)


def check(data: bytes, canary: Path) -> tuple[str, tuple[str, str] | None]:
    """What the input gave ("snapshot" or an error kind), and (finding kind, detail) or
    None when it met the property."""
    ran_code.clear()
    started = time.monotonic()
    deadline = started + 2 * SLOW_SECONDS
    try:
        value = decode_snapshot(data, deadline)
        devices, total, _, _ = summarise(value, len(data), deadline)
        answer = len(msgspec.json.encode(devices))  # as the product measures it
        result: str = "snapshot"
    except SnapshotError as exc:
        result, answer = exc.kind, 0
        if exc.kind not in ERROR_KINDS:
            return result, ("kind", f"{exc.kind}: {exc}")
        if exc.kind == "too_large":
            return result, ("memory", str(exc))
    except MemoryError:
        return "MemoryError", ("memory", traceback.format_exc())
    except Exception as exc:  # noqa: BLE001 - what the property rules out
        return type(exc).__name__, ("raised", traceback.format_exc())
    elapsed = time.monotonic() - started
    if ran_code or canary.exists():
        return result, ("ran-code", f"{ran_code} canary={canary.exists()}")
    if elapsed > SLOW_SECONDS or result == "timeout":
        return result, ("slow", f"{elapsed:.2f} s ({result})")
    if answer > ANSWER_FLOOR + ANSWER_PER_BYTE * len(data):
        return result, ("big-answer", f"{answer} bytes of answer from {len(data)}")
    return result, None


def fuzz(seconds: float, seed: int, out: Path | None) -> tuple[Stats, dict[str, str]]:
    rng = random.Random(seed)
    findings: dict[str, str] = {}
    stats = Stats()
    with tempfile.TemporaryDirectory() as folder:
        canary = Path(folder) / "canary"
        mutator = Mutator(rng, str(canary))
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            data, honest = mutator.input()
            started = time.monotonic()
            result, found = check(data, canary)
            if found is None and honest and result in ("damaged", "not_pickle"):
                found = ("honest-refused", f"{result}: a pickle Python's pickler wrote")
            stats.count(result, time.monotonic() - started)
            if found is None:
                continue
            kind, detail = found
            if kind not in findings:
                findings[kind] = detail
            if out is not None:
                _save(out, kind, data, detail)
    return stats, findings


def warm_up() -> None:
    """What the summary imports lazily (numpy.ma compiles signatures as it loads) is
    imported before the audit hook watches: only the inputs' own events are seen."""
    import numpy.ma  # noqa: F401

    with tempfile.TemporaryDirectory() as folder:
        for data in Mutator(random.Random(0), folder).seeds:
            check(data, Path(folder) / "canary")


def _save(out: Path, kind: str, data: bytes, detail: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    name = f"{kind}-{hashlib.sha1(data).hexdigest()[:16]}"
    (out / f"{name}.pickle").write_bytes(data)
    (out / f"{name}.txt").write_text(detail)


def main(argv: list[str] | None = None) -> int:
    args, seconds, seed = run_arguments(__doc__ or "", MEMORY_LIMIT_MB, argv)
    limit_memory(args.memory_mb)
    warm_up()
    sys.addaudithook(_audit)
    stats, findings = fuzz(seconds, seed, args.out)
    print(json.dumps({"seed": seed, "stats": stats.line(), "findings": findings}))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
