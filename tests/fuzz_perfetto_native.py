"""Coverage-guided fuzzer of the compiled Perfetto reader against the protobuf runtime's.

Property: for every input both readers make the same model or the same error
(tests/perfetto_compare.py); a crash, a hang, undefined behaviour or (with --asan) a
memory error of the C code is a finding too.

Coverage as for the scanner's fuzzer (tests/fuzz_edges.py): the fuzzer builds its own copy
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


@dataclass
class Findings:
    folder: Path | None
    found: dict[str, bytes] = field(default_factory=dict)  # reason's first line -> input

    def add(self, kind: str, name: str, body: bytes, reason: str) -> None:
        first = reason.strip().splitlines()[-1][:200] if reason.strip() else kind
        if first in self.found:
            return
        self.found[first] = body
        if self.folder is not None:
            save(self.folder, kind, name, body, reason)


def save(folder: Path, kind: str, name: str, body: bytes, reason: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{kind}-{hashlib.sha1(body).hexdigest()[:12]}"
    suffix = ".pftrace.gz" if name.endswith(".gz") else ".pftrace"
    (folder / f"{stem}{suffix}").write_bytes(body)
    (folder / f"{stem}.txt").write_text(reason)
    return folder / f"{stem}{suffix}"


@dataclass
class Stats:
    executions: int = 0
    kept: int = 0
    edges: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        rate = self.executions / self.seconds if self.seconds else 0.0
        return (
            f"{self.executions} executions in {self.seconds:.0f} s ({rate:.1f}/s), "
            f"{self.edges} edges, {self.kept} inputs kept"
        )


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
                findings.add("disagreement", name, body, reason)
            elif time.process_time() - began > SLOW_SECONDS:
                findings.add("slow", name, body, f"took {time.process_time() - began:.1f} s")
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


def run_worker(args: argparse.Namespace) -> None:
    out = Path(args.out)
    current = out / f".current-{args.worker}"
    stats, findings = fuzz(
        args.minutes * 60, args.seed + args.worker, Findings(out), current, args.report, args.asan
    )
    current.unlink(missing_ok=True)
    print(f"[{args.seed + args.worker}] done: {stats.line()}, {len(findings.found)} findings")
    (out / f".stats-{args.worker}").write_text(f"{stats.executions} {stats.edges}")


def worker_env(asan: bool) -> dict[str, str]:
    """The environment of a worker: libasan loaded first when asked (Python is not built
    with it), leaks not reported (the interpreter's own are not ours)."""
    env = dict(os.environ)
    if asan:
        lib = subprocess.run(
            ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
        ).stdout.strip()
        env["LD_PRELOAD"] = lib
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
    return env


def run_jobs(args: argparse.Namespace) -> int:
    """`--jobs` worker processes at the lowest priority, their progress lines as they
    come; saves the input a crashed worker was running."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workers = []
    for worker in range(args.jobs):
        command = [sys.executable, __file__, "--worker", str(worker), "--out", str(out)]
        command += ["--minutes", str(args.minutes), "--seed", str(args.seed)]
        command += ["--report", str(args.report)] + (["--asan"] if args.asan else [])
        workers.append(subprocess.Popen(command, env=worker_env(args.asan)))
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
            name = "crash.pftrace.gz" if body[:2] == b"\x1f\x8b" else "crash.pftrace"
            saved = save(out, "crash", name, body, f"worker exited with {process.returncode}")
            print(f"worker {worker} died ({process.returncode}); its input: {saved}")
    files = sorted(p.name for p in out.glob("*.pftrace*"))
    rate = executions / (args.minutes * 60) if args.minutes else 0
    print(
        f"total: {executions} executions ({rate:.1f}/s over {args.jobs} jobs), at most "
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
    parser.add_argument("--asan", action="store_true", help="workers under AddressSanitizer")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        os.nice(19)
        run_worker(args)
        return 0
    return run_jobs(args)


if __name__ == "__main__":
    sys.exit(main())
