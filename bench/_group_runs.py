"""Many-rank runs with process groups for ``bench/ranks.py --layout TPxPPxDP``: the test
suite's synthetic job (``tests/synthetic_job.py``) written as Kineto trace files, with one
slow rank and one slow TP group whose answers are known, so the benchmark also checks that
the view finds them (and nothing else) at the measured size.

Layout under the work dir: ``groups/<TPxPPxDP>/logdir/job/rank<r>.pt.trace.json`` and
``meta.json`` (reused while it matches).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _results import REPO

sys.path.insert(0, str(REPO / "tests"))
from synthetic_job import Layout, write_traces  # noqa: E402


@dataclass
class GroupRun:
    ranks: int
    logdir: Path
    layout: Layout
    rank_json_bytes: int


def parse_layout(text: str, steps: int) -> Layout:
    """ "8x1x256": TP 8, PP 1, DP 256; the slow rank is the middle one, the slow group the
    last TP group (or the last DP group without TP)."""
    tp, pp, dp = (int(x) for x in text.lower().split("x"))
    layout = Layout(tp, pp, dp, steps=steps)
    world = layout.world
    layout.slow_ranks = {world // 2 + 1}
    role = "tp" if tp > 1 else "dp"
    candidates = [n for n, (r, ranks) in layout.groups().items() if r == role]
    # a slow group that does not hold the slow rank, so both are seen at once
    layout.slow_groups = {
        next(n for n in reversed(candidates) if world // 2 + 1 not in layout.groups()[n][1])
    }
    return layout


def make_group_run(text: str, steps: int, work: Path) -> GroupRun:
    layout = parse_layout(text, steps)
    folder = work / "groups" / f"{text}-s{steps}"
    made = {
        "layout": text,
        "steps": steps,
        "slow_ranks": sorted(layout.slow_ranks),
        "slow_groups": sorted(layout.slow_groups),
    }
    meta_path = folder / "meta.json"
    try:
        meta: Any = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = None
    job = folder / "logdir" / "job"
    if not (isinstance(meta, dict) and all(meta.get(k) == v for k, v in made.items())):
        shutil.rmtree(folder, ignore_errors=True)
        write_traces(layout, job)
        meta_path.write_text(json.dumps(made), encoding="utf-8")
    size = (job / "rank0.pt.trace.json").stat().st_size
    return GroupRun(layout.world, folder / "logdir", layout, size)


def check_view(view: dict[str, Any], run: GroupRun) -> str | None:
    """None when the view found exactly the slow rank and the slow group, else what."""
    want = (sorted(run.layout.slow_ranks), sorted(run.layout.slow_groups))
    got = (view.get("slow_ranks"), view.get("slow_groups"))
    return None if got == want else f"slow ranks/groups {got}, expected {want}"
