#!/usr/bin/env python3
"""The fixed cost of a cold report: what every `kinetoscope report` pays before and
besides its trace's own work, in CPU time of fresh processes (steadier than wall time on
a shared machine), the least of `--runs` each.

    .venv/bin/python bench/floor.py [TRACE] [--runs 9]

Each round is two fresh processes of the product's interpreter. The first marks its own
CPU time as it goes: its start (the interpreter's), then importing numpy, msgspec and the
CLI (`kinetoscope.cli.main`, with the cyclic GC off as the entry has it), then the report
of TRACE twice. The first report pays the views' module imports, regex compiling and the
like once per process (`one-time`), the second only the trace's own work.
The second also finds what is kept by name (kernel classes, name predicates) from the
first: a trace of many distinct names moves some of its own work into `one-time`. The
second process is a whole cold report of TRACE (default: the corpus's smallest trace with
kernels), to hold the parts' sum against.
An import's part is the difference of two marks in one process, so noise can only add to
it, never take it below zero; each is the least over the rounds. Only `one-time` is a
difference of two least times (the first and the second report's), tens of ms.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_TRACE = REPO.parent / "shared/corpus/hta/tests/data/trace_compare/base/base.json.gz"
# As the entry sets it (kinetoscope/__main__.py) before anything imports numpy.
ENV = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))

# The child marks its CPU ms at each stage and prints them; it ends as the entry does
# (kinetoscope/__main__.py: exit_now), past the interpreter's teardown.
STAGES = """
import time
marks = [time.process_time()]
import gc; gc.disable()
import numpy
marks.append(time.process_time())
import msgspec
marks.append(time.process_time())
import kinetoscope.cli.main as cli
gc.freeze(); gc.enable()
marks.append(time.process_time())
import io, sys
for _ in range(2):
    sys.stdout = io.TextIOWrapper(io.BytesIO())
    cli.main(["report", sys.argv[1], "--format", "json", "--no-cache"])
    marks.append(time.process_time())
print(*(f"{mark * 1000:.3f}" for mark in marks), file=sys.stderr, flush=True)
import os; os._exit(0)
"""
IMPORTS = (
    "interpreter start",
    "numpy's import",
    "msgspec's import",
    "the CLI's other imports (ours, and stdlib)",
)
STAGED = (*IMPORTS, "first report", "second report")


def child_cpu_ms(cmd: list[str]) -> float:
    """User + system CPU ms of a child process run to its end (its output dropped)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"[floor] failed: {' '.join(cmd)}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def staged_ms(python: str, trace: str) -> list[float]:
    """CPU ms of each of STAGED in one fresh process, from the marks it printed."""
    out = subprocess.run(
        [python, "-c", STAGES, trace], capture_output=True, text=True, env=ENV, check=True
    )
    start, numpy, msgspec, cli, first, second = map(float, out.stderr.split()[-6:])
    return [start, numpy - start, msgspec - numpy, cli - msgspec, first - cli, second - first]


def measure(python: str, trace: str, runs: int) -> dict[str, float]:
    """The least CPU ms of each part, and of a whole cold report, over `runs` rounds."""
    report = [python, "-m", "kinetoscope", "report", trace, "--format", "json", "--no-cache"]
    best = dict.fromkeys((*STAGED, "whole"), float("inf"))
    for _ in range(max(1, runs)):
        for name, ms in zip(STAGED, staged_ms(python, trace), strict=True):
            best[name] = min(best[name], ms)
        best["whole"] = min(best["whole"], child_cpu_ms(report))
    return best


def print_table(best: dict[str, float]) -> None:
    first, second = best["first report"], best["second report"]
    rows = [(name, best[name]) for name in IMPORTS] + [
        ("one-time in the first report (views' imports, regexes)", first - second),
        ("the trace's own work: load and views (a second report)", second),
    ]
    print(f"| {'part of a cold report':<56} | CPU ms |")
    print(f"| {'-' * 56} | ------ |")
    for name, ms in rows:
        print(f"| {name:<56} | {ms:6.1f} |")
    print(f"| {'sum of the parts':<56} | {sum(ms for _, ms in rows):6.1f} |")
    print(f"| {'a whole cold report, measured (its process)':<56} | {best['whole']:6.1f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    p.add_argument("--runs", type=int, default=9, help="rounds; the least of each row")
    p.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"))
    args = p.parse_args(argv)
    if not Path(args.trace).exists():
        print(f"[floor] no such trace: {args.trace}", file=sys.stderr)
        return 2
    print(f"trace: {Path(args.trace).name}, least CPU of {args.runs} rounds\n")
    print_table(measure(args.python, args.trace, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
