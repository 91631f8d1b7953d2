"""Coverage-guided fuzzer of the compiled event scanner against the msgspec path.

Property: for every input the scanner and the msgspec path agree (tests/scan_compare.py):
the same columns, or msgspec rejects the text and the scanner declines it, or the scanner
declines (msgspec then reads the text). A crash, a hang or undefined behaviour of the C
code is a finding too.

Coverage: atheris/libFuzzer need clang to instrument C; here the fuzzer builds its own
copy of ingest/_scan.c with gcc's -fsanitize-coverage=trace-pc and
-fsanitize=undefined (tests/fuzz_edges.py; tests/fuzz_coverage.c counts block-to-block
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

import argparse
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_edges import Coverage, build_instrumented, load_instrumented
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


@dataclass
class Findings:
    folder: Path | None
    found: dict[str, bytes] = field(default_factory=dict)  # reason's first line -> input

    def add(self, kind: str, body: bytes, reason: str) -> None:
        first = reason.strip().splitlines()[-1][:200] if reason.strip() else kind
        if first in self.found:
            return
        self.found[first] = body
        if self.folder is not None:
            save(self.folder, kind, body, reason)


def save(folder: Path, kind: str, body: bytes, reason: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{kind}-{hashlib.sha1(body).hexdigest()[:12]}"
    (folder / f"{name}.json").write_bytes(body)
    (folder / f"{name}.txt").write_text(reason)
    return folder / f"{name}.json"


@dataclass
class Stats:
    executions: int = 0
    kept: int = 0
    edges: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        rate = self.executions / self.seconds if self.seconds else 0.0
        return (
            f"{self.executions} executions in {self.seconds:.0f} s ({rate:.0f}/s), "
            f"{self.edges} edges, {self.kept} inputs kept"
        )


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
            findings.add("disagreement", body, reason)
        elif time.monotonic() - began > SLOW_SECONDS:
            findings.add("slow", body, f"took {time.monotonic() - began:.1f} s")
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


def run_worker(args: argparse.Namespace) -> None:
    out = Path(args.out)
    current = out / f".current-{args.worker}"
    stats, findings = fuzz(
        args.minutes * 60, args.seed + args.worker, Findings(out), current, args.report
    )
    current.unlink(missing_ok=True)
    print(f"[{args.seed + args.worker}] done: {stats.line()}, {len(findings.found)} findings")
    (out / f".stats-{args.worker}").write_text(f"{stats.executions} {stats.edges}")


def run_jobs(args: argparse.Namespace) -> int:
    """`--jobs` worker processes at the lowest priority, their progress lines as they
    come; saves the input a crashed worker was running."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workers = []
    for worker in range(args.jobs):
        command = [sys.executable, __file__, "--worker", str(worker), "--out", str(out)]
        command += ["--minutes", str(args.minutes), "--seed", str(args.seed)]
        command += ["--report", str(args.report)]
        workers.append(subprocess.Popen(command))
    executions, edges, crashes = 0, 0, 0
    for worker, process in enumerate(workers):
        process.wait()
        stats = out / f".stats-{worker}"
        if stats.exists():
            done, reached = stats.read_text().split()
            executions, edges = executions + int(done), max(edges, int(reached))
            stats.unlink()
        if process.returncode != 0:
            crashes += 1
            current = out / f".current-{worker}"
            body = current.read_bytes() if current.exists() else b""
            saved = save(out, "crash", body, f"worker exited with {process.returncode}")
            print(f"worker {worker} died ({process.returncode}); its input: {saved}")
    files = sorted(p.name for p in out.glob("*.json"))
    rate = executions / (args.minutes * 60) if args.minutes else 0
    print(
        f"total: {executions} executions ({rate:.0f}/s over {args.jobs} jobs), at most "
        f"{edges} edges in one job, {crashes} crashes, {len(files)} saved inputs in {out}"
    )
    return 1 if files else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default="fuzz-findings")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--report", type=float, default=60.0, help="seconds between lines")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        os.nice(19)
        run_worker(args)
        return 0
    return run_jobs(args)


if __name__ == "__main__":
    sys.exit(main())
