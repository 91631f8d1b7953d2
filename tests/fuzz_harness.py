"""What the fuzzers of compiled code share (tests/fuzz_scanner.py,
tests/fuzz_perfetto_native.py): edge coverage without clang, their findings and stats, and
worker processes at the lowest priority.

Coverage: gcc builds a copy of an extension's C source with -fsanitize-coverage=trace-pc
(tests/fuzz_coverage.c counts block-to-block edges, as AFL does) and UBSan (aborts on
undefined behaviour), and ASan when asked (the process must then have libasan loaded
first: `worker_env`). An input that reaches a new edge, or an edge a new number of times
(AFL's count buckets), is worth keeping."""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

TESTS = Path(__file__).resolve().parent


def build_instrumented(source: Path, stem: str, folder: Path, asan: bool = False) -> Path:
    """The extension of `source` (module `stem`) built with edge coverage and UBSan."""
    out = folder / f"{stem}{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    common = ["gcc", "-O1", "-g", "-fPIC", "-fno-omit-frame-pointer", f"-I{include}"]
    checks = ["-fsanitize=undefined", "-fno-sanitize-recover=undefined"]
    if asan:
        checks = ["-fsanitize=address", *checks]
    hook = folder / "fuzz_coverage.o"
    subprocess.run([*common, "-c", str(TESTS / "fuzz_coverage.c"), "-o", str(hook)], check=True)
    obj = folder / f"{stem}.o"
    instrument = ["-fsanitize-coverage=trace-pc", *checks]
    subprocess.run([*common, *instrument, "-c", str(source), "-o", str(obj)], check=True)
    subprocess.run([*common, *checks, "-shared", str(obj), str(hook), "-o", str(out)], check=True)
    return out


@dataclass
class Coverage:
    """An instrumented extension's edge map, and the (edge, count bucket) pairs seen."""

    module: ModuleType
    edges: np.ndarray  # the live map (a view of the C array)
    reset: ctypes._CFuncPtr
    seen: np.ndarray = field(default_factory=lambda: np.zeros(1 << 16, dtype=np.uint8))

    def new_features(self) -> int:
        """How many (edge, bucket) pairs the last input reached first; clears the map."""
        hit = np.flatnonzero(self.edges)
        counts = self.edges[hit]
        buckets = (1 << np.minimum(np.log2(counts).astype(np.uint8), 7)).astype(np.uint8)
        fresh = buckets & ~self.seen[hit]
        self.seen[hit] |= buckets
        self.reset()
        return int(np.count_nonzero(fresh))

    def edges_seen(self) -> int:
        return int(np.count_nonzero(self.seen))


def load_instrumented(path: Path, name: str) -> Coverage:
    """The instrumented extension at `path`, imported as module `name` (not installed in
    sys.modules: the caller swaps it in), with its edge map."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lib = ctypes.CDLL(str(path))
    edges = np.ctypeslib.as_array((ctypes.c_ubyte * (1 << 16)).in_dll(lib, "kfuzz_map"))
    coverage = Coverage(module, edges, lib.kfuzz_reset)
    coverage.reset()
    return coverage


@dataclass
class Findings:
    """Inputs that went wrong, one per first line of what went wrong; saved in `folder`
    as <kind>-<sha1><suffix> with a .txt saying what happened."""

    folder: Path | None
    found: dict[str, bytes] = field(default_factory=dict)  # reason's last line -> input

    def add(self, kind: str, body: bytes, reason: str, suffix: str) -> None:
        first = reason.strip().splitlines()[-1][:200] if reason.strip() else kind
        if first in self.found:
            return
        self.found[first] = body
        if self.folder is not None:
            save(self.folder, kind, body, reason, suffix)


def save(folder: Path, kind: str, body: bytes, reason: str, suffix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{kind}-{hashlib.sha1(body).hexdigest()[:12]}"
    (folder / f"{name}{suffix}").write_bytes(body)
    (folder / f"{name}.txt").write_text(reason)
    return folder / f"{name}{suffix}"


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


# fuzz(seconds, seed, findings, current, report_every) -> (stats, findings)
Fuzz = Callable[[float, int, Findings, Path, float], tuple[Stats, Findings]]


def arguments(doc: str) -> argparse.Namespace:
    """The command line of a fuzzer run by hand."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default="fuzz-findings")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--report", type=float, default=60.0, help="seconds between lines")
    parser.add_argument("--asan", action="store_true", help="workers under AddressSanitizer")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    return parser.parse_args()


def run(args: argparse.Namespace, script: str, fuzz: Fuzz, suffix: Callable[[bytes], str]) -> int:
    """A worker (`--worker`), or the parent of `--jobs` of them; `suffix` names a saved input."""
    if args.worker is None:
        return run_jobs(args, script, suffix)
    os.nice(19)
    out = Path(args.out)
    current = out / f".current-{args.worker}"
    seed = args.seed + args.worker
    stats, findings = fuzz(args.minutes * 60, seed, Findings(out), current, args.report)
    current.unlink(missing_ok=True)
    print(f"[{seed}] done: {stats.line()}, {len(findings.found)} findings")
    (out / f".stats-{args.worker}").write_text(f"{stats.executions} {stats.edges}")
    return 0


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


def run_jobs(args: argparse.Namespace, script: str, suffix: Callable[[bytes], str]) -> int:
    """`--jobs` worker processes at the lowest priority, their progress lines as they
    come; saves the input a crashed worker was running."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workers = []
    for worker in range(args.jobs):
        command = [sys.executable, script, "--worker", str(worker), "--out", str(out)]
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
            reason = f"worker exited with {process.returncode}"
            saved = save(out, "crash", body, reason, suffix(body))
            print(f"worker {worker} died ({process.returncode}); its input: {saved}")
    files = [p for p in out.iterdir() if not p.name.startswith(".") and p.suffix != ".txt"]
    rate = executions / (args.minutes * 60) if args.minutes else 0
    print(
        f"total: {executions} executions ({rate:.1f}/s over {args.jobs} jobs), at most "
        f"{edges} edges in one job, {crashes} crashes, {len(files)} saved inputs in {out}"
    )
    return 1 if files else 0
