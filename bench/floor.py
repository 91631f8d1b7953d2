#!/usr/bin/env python3
"""The fixed cost of a cold report: what every `kinetoscope report` pays before and
besides its trace's own work, in CPU time of fresh processes (steadier than wall time on
a shared machine), the least of `--runs` each.

    .venv/bin/python bench/floor.py [TRACE] [--runs 9]

Rows, each a fresh process of the product's interpreter: the interpreter alone; it
importing numpy, then msgspec (neither is ours); the CLI's imports (`kinetoscope.cli.main`,
numpy and msgspec with them); a whole cold report of TRACE (default: the corpus's smallest
trace with kernels). Then, in one process, the report of TRACE twice after the CLI's
imports: the first pays the views' module imports, regex compiling and the like once per
process (`one-time`), the second only the trace's own work (`per trace`). The second
also finds what is kept by name (kernel classes, name predicates) from the first: a
trace of many distinct names moves some of its own work into `one-time`.
A part is the difference of two rows' least CPU: with few `--runs` a small one (msgspec's
import, a few ms) can come out a little below zero.
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

# Each child ends as the entry does (kinetoscope/__main__.py: exit_now), past the
# interpreter's teardown, and imports the CLI as it does (no cyclic GC, then frozen).
EXIT = "\nimport os; os._exit(0)"
CLI_IMPORT = "import gc; gc.disable(); import kinetoscope.cli.main as cli; gc.freeze(); gc.enable()"

# Prints the CPU ms of the first and second report in this process (after the imports).
TWICE = f"""
import io, sys, time
{CLI_IMPORT}
times = []
for _ in range(2):
    sys.stdout = io.TextIOWrapper(io.BytesIO())
    start = time.process_time()
    cli.main(["report", sys.argv[1], "--format", "json", "--no-cache"])
    times.append(time.process_time() - start)
print(*(f"{{t * 1000:.2f}}" for t in times), file=sys.stderr, flush=True)
{EXIT}
"""


def child_cpu_ms(cmd: list[str]) -> float:
    """User + system CPU ms of a child process run to its end (its output dropped)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"[floor] failed: {' '.join(cmd)}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def twice_ms(python: str, trace: str) -> tuple[float, float]:
    """CPU ms of the first and the second report of `trace` in one process."""
    out = subprocess.run(
        [python, "-c", TWICE, trace], capture_output=True, text=True, env=ENV, check=True
    )
    first, second = out.stderr.split()[-2:]
    return float(first), float(second)


def measure(python: str, trace: str, runs: int) -> dict[str, float]:
    """The least CPU ms of each row over `runs` rounds (rows interleaved in a round)."""
    rows = {
        "interpreter": [python, "-c", "pass" + EXIT],
        "+ numpy": [python, "-c", "import numpy" + EXIT],
        "+ msgspec": [python, "-c", "import numpy, msgspec" + EXIT],
        "CLI imports": [python, "-c", CLI_IMPORT + EXIT],
        "cold report": [python, "-m", "kinetoscope", "report", trace, "--format", "json"]
        + ["--no-cache"],
    }
    best: dict[str, float] = {}
    for _ in range(max(1, runs)):
        for name, cmd in rows.items():
            best[name] = min(best.get(name, float("inf")), child_cpu_ms(cmd))
        first, second = twice_ms(python, trace)
        best["first report"] = min(best.get("first report", float("inf")), first)
        best["per trace"] = min(best.get("per trace", float("inf")), second)
    return best


def print_table(best: dict[str, float]) -> None:
    cli, report = best["CLI imports"], best["cold report"]
    rows = [
        ("interpreter start", best["interpreter"]),
        ("numpy's import", best["+ numpy"] - best["interpreter"]),
        ("msgspec's import", best["+ msgspec"] - best["+ numpy"]),
        ("the CLI's other imports (ours, and stdlib)", cli - best["+ msgspec"]),
        (
            "one-time in the first report (views' imports, regexes)",
            best["first report"] - best["per trace"],
        ),
        ("the trace's own work: load and views (a second report)", best["per trace"]),
    ]
    print(f"| {'part of a cold report':<56} | CPU ms |")
    print(f"| {'-' * 56} | ------ |")
    for name, ms in rows:
        print(f"| {name:<56} | {ms:6.1f} |")
    print(f"| {'sum of the parts':<56} | {sum(ms for _, ms in rows):6.1f} |")
    print(f"| {'a whole cold report, measured (its process)':<56} | {report:6.1f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    p.add_argument("--runs", type=int, default=9, help="rounds; the least of each row")
    p.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"))
    args = p.parse_args(argv)
    if not Path(args.trace).exists():
        print(f"[floor] no such trace: {args.trace}", file=sys.stderr)
        return 2
    print(f"trace: {Path(args.trace).name}, least CPU of {args.runs} fresh processes\n")
    print_table(measure(args.python, args.trace, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
