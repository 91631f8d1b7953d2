"""A fuzzer of the Perfetto protobuf reader (`ingest/perfetto`), beside the scanner's.

Property: every input, loaded as a file, gives a model (maybe partial, with warnings) or
the loader's own error (`TraceDecodeError`: a kind and a message), within `SLOW_SECONDS` of
CPU (the process's: wall time on a shared machine says more about its neighbours) and
without the process's peak memory rising more than `MEMORY_BOUND_MB` over what it
held before (the load memory cap is set to `LOAD_MEMORY_MB`, the text limit to
`TEXT_LIMIT_GB`). Any other exception, a slow input or one over the memory bound is a
finding. Inputs are real traces in their protobuf form, mutated where the format can be
wrong (tests/perfetto_mutations.py); an input with a new outcome (its error kind, its
warnings' kinds) joins the pool later inputs are mutated from.

By hand, for as long as wanted (findings land in --out as <kind>-<sha1>.pftrace[.gz]
with a .txt saying what happened; each one becomes a case of tests/data/perfetto_fuzz/):

    python tests/fuzz_perfetto.py --minutes 30 [--out fuzz-findings] [--seed N]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.text_blocks import TraceDecodeError
from perfetto_mutations import mutated, seed_packets, written

SLOW_SECONDS = 10.0
MEMORY_BOUND_MB = 600
LOAD_MEMORY_MB = 128
TEXT_LIMIT_GB = 0.25
MAX_POOL = 2_000
_DIGITS = re.compile(r"\d+")


def limits() -> dict[str, str]:
    """The settings a fuzzed load runs under."""
    return {
        "KINETOSCOPE_LOAD_MEMORY_MB": str(LOAD_MEMORY_MB),
        "KINETOSCOPE_MAX_TEXT_GB": str(TEXT_LIMIT_GB),
        "KINETOSCOPE_MAX_ARGS_MB": str(LOAD_MEMORY_MB),
        "KINETOSCOPE_NO_CACHE": "1",
    }


def status_mb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) // 1024
    return 0


def reset_peak() -> bool:
    """Resets VmHWM to the current RSS (Linux 4.0+); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


@dataclass
class Outcome:
    kind: str  # "model", an error kind, or "exception"
    signature: tuple[str, ...]  # the kinds of its warnings (numbers left out)
    problem: str = ""  # why it is a finding ("" when it is none)


def run_one(path: Path) -> Outcome:
    """Loads `path` and judges it."""
    can_reset = reset_peak()
    before = status_mb("VmRSS")
    began = time.process_time()
    try:
        model = build_model(str(path))
    except TraceDecodeError as err:
        outcome = Outcome(err.kind, ())
        if not err.message or not err.kind:
            outcome.problem = f"an error without a kind or message: {err!r}"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        tb = traceback.format_exc(limit=-6)
        return Outcome("exception", (type(exc).__name__,), f"{type(exc).__name__}: {exc}\n{tb}")
    else:
        signature = tuple(sorted({_DIGITS.sub("N", w)[:60] for w in model.warnings}))
        outcome = Outcome("model", signature)
        if not all(isinstance(n, str) for n in model.names):
            outcome.problem = "a name that is not text"
        del model
    seconds = time.process_time() - began
    peak = status_mb("VmHWM") - before if can_reset else 0
    if seconds > SLOW_SECONDS:
        outcome.problem = f"took {seconds:.1f} s of CPU"
    elif peak > MEMORY_BOUND_MB:
        outcome.problem = f"peak memory rose {peak} MB"
    return outcome


@dataclass
class Findings:
    folder: Path | None
    found: dict[str, bytes] = field(default_factory=dict)  # problem's first line → input

    def add(self, name: str, body: bytes, problem: str) -> None:
        first = problem.splitlines()[0][:200]
        if first in self.found:
            return
        self.found[first] = body
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            stem = f"{first.split(':')[0].split()[0]}-{hashlib.sha1(body).hexdigest()[:12]}"
            suffix = ".pftrace.gz" if name.endswith(".gz") else ".pftrace"
            (self.folder / f"{stem}{suffix}").write_bytes(body)
            (self.folder / f"{stem}.txt").write_text(problem)


@dataclass
class Stats:
    executions: int = 0
    kept: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        rate = self.executions / self.seconds if self.seconds else 0.0
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items()))
        return (
            f"{self.executions} inputs in {self.seconds:.0f} s ({rate:.1f}/s), "
            f"{self.kept} kept; outcomes: {kinds}"
        )


def fuzz(
    seconds: float, seed: int = 0, findings: Findings | None = None, report_every: float = 0.0
) -> tuple[Stats, Findings]:
    """Runs for `seconds` under `limits()` (set in this process's environment)."""
    os.environ.update(limits())
    rng = random.Random(seed)
    findings = findings or Findings(None)
    pool = seed_packets()
    seen: set[tuple[str, tuple[str, ...]]] = set()
    stats, start = Stats(), time.monotonic()
    next_report = start + report_every
    with tempfile.TemporaryDirectory(prefix="kfuzz-pf-") as folder:
        while (now := time.monotonic()) - start < seconds:
            packets = mutated(rng, rng.choice(pool))
            body, name = written(rng, packets)
            path = Path(folder) / name
            path.write_bytes(body)
            outcome = run_one(path)
            path.unlink()
            stats.executions += 1
            stats.outcomes[outcome.kind] = stats.outcomes.get(outcome.kind, 0) + 1
            if outcome.problem:
                findings.add(name, body, outcome.problem)
            key = (outcome.kind, outcome.signature)
            if key not in seen and len(pool) < MAX_POOL:
                seen.add(key)
                pool.append(packets)
                stats.kept += 1
            if report_every and now > next_report:
                stats.seconds = now - start
                print(f"[{seed}] {stats.line()}", flush=True)
                next_report = now + report_every
    stats.seconds = time.monotonic() - start
    return stats, findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--out", default="fuzz-findings")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--report", type=float, default=60.0, help="seconds between lines")
    args = parser.parse_args()
    os.nice(19)
    stats, findings = fuzz(args.minutes * 60, args.seed, Findings(Path(args.out)), args.report)
    print(f"[{args.seed}] done: {stats.line()}, {len(findings.found)} findings")
    for problem in findings.found:
        print(f"  {problem}")
    return 1 if findings.found else 0


if __name__ == "__main__":
    sys.exit(main())
