"""Coverage-guided fuzzer of the compiled Perfetto reader against the protobuf runtime's.

Property: for every input both readers make the same model or the same error
(tests/perfetto_compare.py); a crash, a hang, undefined behaviour or (with --asan) a
memory error of the C code is a finding too.

Coverage as for the scanner's fuzzer (tests/fuzz_harness.py): the fuzzer builds its own copy
of ingest/perfetto/_native.c with gcc's edge coverage and UBSan and swaps it in for the
installed reader; an input that reaches a new edge or count bucket joins the pool. Inputs are real
traces in their protobuf form, mutated where the format can be wrong
(tests/perfetto_mutations.py). With --asan the workers also run under AddressSanitizer
(libasan preloaded into a fresh interpreter).

By hand (findings land in --out as <kind>-<sha1>.pftrace[.gz] with a .txt; each one becomes
a case of tests/data/perfetto_fuzz/, read both ways by test_perfetto_native):

    python tests/fuzz_perfetto_native.py --minutes 30 --jobs 2 --asan [--out fuzz-findings]
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from functools import partial
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
from kinetoscope.ingest.perfetto import events, native, read, rules, stream
from perfetto_compare import disagreement
from perfetto_mutations import mutated, seed_packets, written

TESTS = Path(__file__).resolve().parent
READER = TESTS.parent / "tb_plugin" / "ingest" / "perfetto" / "_native.c"
SLOW_SECONDS = 20.0  # both readers, the protobuf runtime's ~20k events/s
MAX_POOL = 5_000
# The readers' bounds, drawn per input (the same for both readers): small ones reach
# chunks cut mid-delivery, events let past open slices, and files of many runs.
BOUNDS = {
    "batch": (native.BATCH, 64, 7),
    "hold": (native.HOLD_MAX, 40),
    "run_bytes": (stream.RUN_BYTES, 4096, 300),
    "threads": ("1", "2"),  # runs read in a thread of their own while the next inflates
}
DEFAULTS = {key: values[0] for key, values in BOUNDS.items()}


def set_bounds(batch: int, hold: int, run_bytes: int, threads: str) -> None:
    native.BATCH = read.BATCH = batch
    native.HOLD_MAX = events.HOLD_MAX = hold
    stream.RUN_BYTES = run_bytes
    os.environ["KINETOSCOPE_SCAN_THREADS"] = threads


def instrumented_coverage(asan: bool = False) -> Coverage | None:
    """Swaps the instrumented reader in for this process; None without gcc or a reader."""
    if rules.native_module() is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="kfuzz-pf-"))
    try:
        path = build_instrumented(READER, "_native", folder, asan)
    except (OSError, subprocess.CalledProcessError):
        return None
    coverage = load_instrumented(path, "kinetoscope.ingest.perfetto._native")
    rules._native = coverage.module
    return coverage


def fuzz(
    seconds: float,
    seed: int = 0,
    findings: Findings | None = None,
    current: Path | None = None,
    report_every: float = 0.0,
    asan: bool = False,
) -> tuple[Stats, Findings]:
    """Runs for `seconds`; `current`: each input is written there before it runs, so the
    parent can save the one a crash took down."""
    rng = random.Random(seed)
    findings = findings or Findings(None)
    coverage = instrumented_coverage(asan)
    pool = seed_packets()
    stats, start = Stats(), time.monotonic()
    next_report = start + report_every
    with tempfile.TemporaryDirectory(prefix="kfuzz-pf-in-") as folder:
        while (now := time.monotonic()) - start < seconds:
            packets = mutated(rng, rng.choice(pool))
            body, name = written(rng, packets)
            path = Path(folder) / name
            path.write_bytes(body)
            if current is not None:
                current.write_bytes(body)
            drawn = {key: rng.choice(values) for key, values in BOUNDS.items()}
            set_bounds(**drawn)
            began = time.process_time()
            reason = disagreement(str(path))
            set_bounds(**DEFAULTS)
            if reason is not None and drawn != DEFAULTS:
                reason = f"with {drawn}: {reason}"
            if reason is not None:
                findings.add("disagreement", body, reason, suffix(body))
            elif time.process_time() - began > SLOW_SECONDS:
                took = f"took {time.process_time() - began:.1f} s"
                findings.add("slow", body, took, suffix(body))
            stats.executions += 1
            if coverage is not None and coverage.new_features() and len(pool) < MAX_POOL:
                pool.append(packets)
                stats.kept += 1
            if report_every and now > next_report:
                stats.seconds, stats.edges = now - start, coverage.edges_seen() if coverage else 0
                print(f"[{seed}] {stats.line()}", flush=True)
                next_report = now + report_every
    os.environ.pop("KINETOSCOPE_SCAN_THREADS", None)
    stats.seconds = time.monotonic() - start
    stats.edges = coverage.edges_seen() if coverage else 0
    return stats, findings


def suffix(body: bytes) -> str:
    """The name's end of a saved input: gzip or not."""
    return ".pftrace.gz" if body[:2] == b"\x1f\x8b" else ".pftrace"


def main() -> int:
    args = arguments(__doc__)
    return run(args, __file__, partial(fuzz, asan=args.asan), suffix)


if __name__ == "__main__":
    sys.exit(main())
