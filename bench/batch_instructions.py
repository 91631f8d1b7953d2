#!/usr/bin/env python3
"""Instructions a rank costs in a rank process's batch, counted, not timed: a 2-core
machine's seconds drift by up to 2x within an hour (docs/critical_path.md), which hides
the few-percent changes a rank's fixed cost is made of. Valgrind's callgrind counts the
instructions the process executes, the same on a busy machine as on a quiet one.

    .venv/bin/python bench/batch_instructions.py                       # this tree
    .venv/bin/python bench/batch_instructions.py --tree OLD/tb_plugin --tree tb_plugin

Each tree (a `kinetoscope` package folder: another commit's checkout, its compiled
modules built) runs `rank_summaries.summarize_batch` (what a rank process runs: each file
read, the batch's tables shared, each rank's summary) on the first `--ranks` ranks of
the 2,048-rank job (`_group_runs.py`, 8x1x256), under callgrind, once with one round and
once with `--rounds` rounds; the difference over the extra rounds is a round's count
without the imports and the first round's warm-up. It prints instructions a rank per tier
(the Distributed view's, a critical path's, a what-if of `aten::mm` x0.5) and each
tree's ratio to the first. Needs `valgrind`; a run of the defaults takes ~3 minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _group_runs import make_group_run
from _results import HERE, REPO

TIERS = ("distributed", "path", "whatif")

# Run in the child under valgrind: `summarize_batch` of the tier, `rounds` times.
CHILD = """
import sys
from kinetoscope.analysis.critical_path.summaries import tier
from kinetoscope.analysis.distributed.rank_summaries import DISTRIBUTED, summarize_batch
files, name, rounds = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
tiers = {"distributed": DISTRIBUTED, "path": tier({}),
         "whatif": tier({"op": "aten::mm", "factor": 0.5})}
for _ in range(rounds):
    summarize_batch([(f, "bench") for f in files], None, tiers[name])
"""


def instructions(package: Path, files: list[str], tier: str, rounds: int) -> int:
    """Instructions callgrind counts in a child running `rounds` rounds of the tier."""
    with tempfile.TemporaryDirectory() as scratch:
        link = Path(scratch) / "kinetoscope"
        link.symlink_to(package.resolve(), target_is_directory=True)
        out = Path(scratch) / "callgrind.out"
        env = dict(os.environ, PYTHONPATH=scratch, PYTHONHASHSEED="0")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            + [sys.executable, "-c", CHILD, ",".join(files), tier, str(rounds)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count: {done.stderr[-500:]}")
    return int(found.group(1))


def per_rank(package: Path, files: list[str], tier: str, rounds: int) -> float:
    """A round's instructions a rank: (count of `rounds` rounds - count of one) / extra."""
    one = instructions(package, files, tier, 1)
    many = instructions(package, files, tier, rounds)
    return (many - one) / (rounds - 1) / len(files)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tree", action="append", type=Path, help="a kinetoscope package folder")
    p.add_argument("--ranks", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tiers", default=",".join(TIERS))
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    trees = args.tree or [REPO / "tb_plugin"]
    job = make_group_run("8x1x256", 20, HERE / "scratch")
    files = sorted(str(f) for f in job.logdir.rglob("*.json"))[: args.ranks]
    print(f"{len(files)} ranks of the 8x1x256 job; instructions a rank, a round of {args.rounds}")
    for name in args.tiers.split(","):
        counts = [per_rank(tree, files, name, args.rounds) for tree in trees]
        cells = [f"{c / 1e6:8.2f} M ({c / counts[0]:.3f}x)" for c in counts]
        print(f"{name:12s} " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
