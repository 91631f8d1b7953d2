"""The loop the property fuzzers of Python code share (tests/fuzz_serving.py,
tests/fuzz_compile_log.py): inputs from a mutator, a property check of each, a count of
what each gave, findings saved once per kind and detail, a memory bound on the process
(RLIMIT_AS), a JSON report on stdout. No coverage: the code under test is Python, and its
inputs are shaped (the mutators') rather than evolved."""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_harness import save

Finding = tuple[str, str]  # (kind, detail)
Check = Callable[[bytes, Path], tuple[str, Finding | None]]
MEMORY_LIMIT_MB = 3072  # address space over what the process holds when it starts


@dataclass
class Stats:
    executions: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    slowest: float = 0.0

    def count(self, result: str, seconds: float) -> None:
        self.executions += 1
        self.kinds[result] = self.kinds.get(result, 0) + 1
        self.slowest = max(self.slowest, seconds)

    def line(self) -> str:
        return f"{self.executions} inputs, results {self.kinds}, slowest {self.slowest:.2f} s"


def fuzz(
    seconds: float,
    seed: int,
    inputs_of: Callable[[random.Random], Callable[[], bytes]],
    check: Check,
    folder: Path,
    out: tuple[Path, str] | None,
) -> tuple[Stats, dict[str, str]]:
    """Inputs checked for `seconds`; the findings, the first detail of each kind."""
    make_input = inputs_of(random.Random(seed))
    findings: dict[str, str] = {}
    stats = Stats()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        data = make_input()
        started = time.monotonic()
        result, found = check(data, folder)
        stats.count(result, time.monotonic() - started)
        if found is None:
            continue
        kind, detail = found
        findings.setdefault(kind, detail)
        if out is not None:
            save(out[0], kind, data, detail, out[1])
    return stats, findings


def limit_memory(mb: int) -> None:
    """RLIMIT_AS at what the process holds now plus `mb`."""
    with open("/proc/self/statm") as f:
        held = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (held + (mb << 20), resource.RLIM_INFINITY))


def run_arguments(
    doc: str, memory_mb: int, argv: list[str] | None
) -> tuple[argparse.Namespace, float, int]:
    """The command line of a fuzzer of Python code (this loop's and the snapshot
    fuzzer's): its arguments, the seconds to run and the seed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--memory-mb", type=int, default=memory_mb)
    args = parser.parse_args(argv)
    seconds = args.minutes * 60 if args.minutes is not None else args.seconds
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    return args, seconds, seed


def run_property_fuzzer(
    doc: str,
    inputs_of: Callable[[random.Random], Callable[[], bytes]],
    check: Check,
    suffix: str,
    argv: list[str] | None,
) -> int:
    """The command line of a property fuzzer; exit 1 when it found anything. `inputs_of`
    makes, from the run's random source, the maker of its inputs."""
    args, seconds, seed = run_arguments(doc, MEMORY_LIMIT_MB, argv)
    limit_memory(args.memory_mb)
    out = (args.out, suffix) if args.out is not None else None
    with tempfile.TemporaryDirectory() as folder:  # where `check` writes each input
        stats, findings = fuzz(seconds, seed, inputs_of, check, Path(folder), out)
    print(json.dumps({"seed": seed, "stats": stats.line(), "findings": findings}))
    return 1 if findings else 0
