"""Coverage-guided fuzzer of the compiled event scanner against the msgspec path.

Property: for every input the scanner and the msgspec path agree (tests/scan_compare.py):
the same columns, or msgspec rejects the text and the scanner declines it, or the scanner
declines (msgspec then reads the text). A crash, a hang or undefined behaviour of the C
code is a finding too.

Coverage: atheris/libFuzzer need clang to instrument C; here the fuzzer builds its own
copy of ingest/_scan.c with gcc's -fsanitize-coverage=trace-pc and
-fsanitize=undefined (tests/fuzz_harness.py; tests/fuzz_coverage.c counts block-to-block
edges) and swaps it in for the installed scanner. An input that reaches a new edge, or an
edge a new number of times (AFL's count buckets), joins the pool that later inputs are
mutated from (tests/fuzz_mutations.py). Without gcc it runs uninstrumented (mutations
only).

By hand, many processes (each its own pool; a crashed input is saved by the parent):

    python tests/fuzz_scanner.py --minutes 60 --jobs 16 [--out fuzz-findings]

Findings land in --out as <kind>-<sha1>.json (the input) with a .txt (what differed);
each one becomes a case of tests/data/scanner_fuzz/ (tests/test_scanner_fuzz.py).
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fuzz_harness import (
    Coverage,
    Findings,
    Stats,
    arguments,
    build_instrumented,
    load_instrumented,
    run,
)
from fuzz_mutations import joined, mutated, seed_events
from kinetoscope.ingest import native_chunk
from scan_compare import disagreement

TESTS = Path(__file__).resolve().parent
SCANNER = TESTS.parent / "tb_plugin" / "ingest" / "_scan.c"
SLOW_SECONDS = 2.0
MAX_POOL = 20_000


def instrumented_coverage() -> Coverage | None:
    """Swaps the instrumented scanner in for this process; None without gcc or a scanner."""
    if native_chunk._scan is None:
        return None
    try:
        path = build_instrumented(SCANNER, "_scan", Path(tempfile.mkdtemp(prefix="kfuzz-")))
    except (OSError, subprocess.CalledProcessError):
        return None
    coverage = load_instrumented(path, "kinetoscope.ingest._scan")
    native_chunk._scan = coverage.module
    return coverage


def fuzz(
    seconds: float,
    seed: int = 0,
    findings: Findings | None = None,
    current: Path | None = None,
    report_every: float = 0.0,
) -> tuple[Stats, Findings]:
    """Runs for `seconds`; `current`: each input is written there before it runs, so the
    parent can save the one a crash took down."""
    rng = random.Random(seed)
    findings = findings or Findings(None)
    coverage = instrumented_coverage()
    pool = seed_events(rng)
    stats, start = Stats(), time.monotonic()
    next_report = start + report_every
    while (now := time.monotonic()) - start < seconds:
        body = mutated(rng, joined(rng, pool), pool)
        if current is not None:
            current.write_bytes(body)
        began = time.monotonic()
        reason = disagreement(body)
        if reason is not None:
            findings.add("disagreement", body, reason, ".json")
        elif time.monotonic() - began > SLOW_SECONDS:
            findings.add("slow", body, f"took {time.monotonic() - began:.1f} s", ".json")
        stats.executions += 1
        if coverage is not None and coverage.new_features() and len(pool) < MAX_POOL:
            pool.append(body)
            stats.kept += 1
        if report_every and now > next_report:
            stats.seconds, stats.edges = now - start, coverage.edges_seen() if coverage else 0
            print(f"[{seed}] {stats.line()}", flush=True)
            next_report = now + report_every
    stats.seconds = time.monotonic() - start
    stats.edges = coverage.edges_seen() if coverage else 0
    return stats, findings


def main() -> int:
    return run(arguments(__doc__), __file__, fuzz, lambda body: ".json")


if __name__ == "__main__":
    sys.exit(main())
