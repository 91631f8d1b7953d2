#!/usr/bin/env python3
"""Which per-rank stages give each rank's own answer when K ranks are read as one table:
the map for the batched rank job (docs/critical_path.md, "Runs of many ranks"). The
batch is the product's join (`model.rank_batch.join_ranks`: the ranks read each alone,
then side by side, their process ids, ids and devices moved apart). A stage is separable when, for
every rank, its answer on the batch restricted to that rank's rows (moved back by the
rank's first row; times by the rank's own origin) equals its answer on the rank alone.
Not a benchmark: it prints one line a stage, "yes" or what differs.

    .venv/bin/python bench/batch_separable.py               # 16 ranks of the 8x1x256 job
    .venv/bin/python bench/batch_separable.py --ranks 64
    .venv/bin/python bench/batch_separable.py --files worker0.pt.trace.json.gz worker1...
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from batch_probe import batch_arguments, job_ranks
from kinetoscope.analysis.core import comms
from kinetoscope.analysis.core.devices import trace_vendor
from kinetoscope.analysis.core.host_ranges import host_ranges
from kinetoscope.analysis.core.kernel_classes import kernel_classes
from kinetoscope.analysis.core.launches import gpu_work
from kinetoscope.analysis.core.steps import find_steps
from kinetoscope.analysis.core.trusted_rows import row_flags
from kinetoscope.ingest.build import build_model
from kinetoscope.model.rank_batch import join_ranks, why_not_joined
from kinetoscope.model.trace_model import TraceModel

# A check: (the batch, its rows' first row per rank, the ranks alone) -> "" or what differs.
Check = Callable[[TraceModel, np.ndarray, list[TraceModel]], str]
# Whether a stage's answer on the batch (its rows of rank r marked) is the rank's own.
Same = Callable[[Any, Any, np.ndarray, np.ndarray, int], bool]


def _of_rank(rows: np.ndarray, first: np.ndarray, r: int) -> np.ndarray:
    """Which of the batch's `rows` are rank r's."""
    return (rows >= first[r]) & (rows < first[r + 1])


def _moved_rows(rows: np.ndarray, first: np.ndarray, r: int) -> np.ndarray:
    """Rows of the batch (-1: none) as rank r's own rows."""
    return np.where(rows >= 0, rows - first[r], -1)


def _per_rank(stage: Callable[[TraceModel], Any], same: Same, what: str) -> Check:
    """A check that `stage`'s answer on the batch, restricted to each rank, is the rank's
    own by `same(whole, own, rank's rows of whole's, first, r)`."""

    def check(batch: TraceModel, first: np.ndarray, ranks: list[TraceModel]) -> str:
        whole = stage(batch)
        for r, model in enumerate(ranks):
            if not same(whole, stage(model), _of_rank(whole.rows, first, r), first, r):
                return f"rank {r}'s {what} differ"
        return ""

    return check


def _same_classes(whole: Any, own: Any, mine: np.ndarray, first: np.ndarray, r: int) -> bool:
    return (
        np.array_equal(_moved_rows(whole.rows[mine], first, r), own.rows)
        and np.array_equal(whole.work[mine], own.work)
        and np.array_equal(whole.matrix[mine], own.matrix)
        and [c for c, m in zip(whole.collective, mine) if m] == own.collective
    )


def _same_work(whole: Any, own: Any, mine: np.ndarray, first: np.ndarray, r: int) -> bool:
    shift = round((own.origin_us - whole.origin_us) * 1000)  # ns, both whole µs
    return (
        np.array_equal(_moved_rows(whole.rows[mine], first, r), own.rows)
        and np.array_equal(whole.start[mine] - shift, own.start)
        and np.array_equal(whole.end[mine] - shift, own.end)
        and np.array_equal(_moved_rows(whole.launch[mine], first, r), own.launch)
    )


def _same_ranges(whole: Any, own: Any, mine: np.ndarray, first: np.ndarray, r: int) -> bool:
    position = np.full(whole.rows.size + 1, -1)  # the batch's positions as the rank's
    position[np.flatnonzero(mine)] = np.arange(int(mine.sum()))
    parent = position[whole.parent[mine]]  # -1 (a root) reads the last: -1
    rows = _moved_rows(whole.rows[mine], first, r)
    return np.array_equal(rows, own.rows) and np.array_equal(parent, own.parent)


def _same_collectives(whole: Any, own: Any, mine: np.ndarray, first: np.ndarray, r: int) -> bool:
    same = np.array_equal(_moved_rows(whole.rows[mine], first, r), own.rows)
    same = same and [k for k, m in zip(whole.kind, mine) if m] == own.kind
    same = same and [g for g, m in zip(whole.pg, mine) if m] == own.pg
    for column in ("seq", "nbytes", "group_size", "dst", "src"):
        same = same and np.array_equal(getattr(whole, column)[mine], getattr(own, column))
    return same


def trusted_rows_check(batch: TraceModel, first: np.ndarray, ranks: list[TraceModel]) -> str:
    whole = row_flags(batch).untrusted
    for r, model in enumerate(ranks):
        if not np.array_equal(whole[first[r] : first[r + 1]], row_flags(model).untrusted):
            return f"rank {r}'s untrusted rows differ (duplicates, clock outliers: per trace)"
    return ""


def steps_check(batch: TraceModel, first: np.ndarray, ranks: list[TraceModel]) -> str:
    together = len(find_steps(batch))
    alone = sum(len(find_steps(model)) for model in ranks)
    if together != alone:
        return f"{together} steps together, {alone} alone: ProfilerStep#N is one step by name"
    return ""


def vendor_check(batch: TraceModel, first: np.ndarray, ranks: list[TraceModel]) -> str:
    alone = {trace_vendor(model) for model in ranks}
    return "" if alone == {trace_vendor(batch)} else f"{alone} alone: the header is one rank's"


CHECKS: dict[str, Check] = {
    "trace vendor": vendor_check,
    "untrusted rows": trusted_rows_check,
    "kernel classes": _per_rank(kernel_classes, _same_classes, "kernels' classes"),
    "GPU work and launches": _per_rank(gpu_work, _same_work, "GPU work or launches"),
    "host ranges": _per_rank(host_ranges, _same_ranges, "host ranges"),
    "collectives' args": _per_rank(comms.extract, _same_collectives, "collectives"),
    "steps": steps_check,
}


def main(argv: list[str] | None = None) -> int:
    parser = batch_arguments(__doc__)
    parser.set_defaults(ranks=16)
    parser.add_argument("--files", nargs="+", type=Path, help="rank traces (not the job's)")
    args = parser.parse_args(argv)
    paths = args.files or job_ranks(args)
    ranks = [build_model(str(p)) for p in paths]
    why = why_not_joined(ranks)
    if why is not None:
        print(f"the ranks cannot be joined: {why}")
        return 1
    joined = join_ranks(ranks)
    batch, first = joined.model, joined.first_rows
    what = "given" if args.files else f"of {args.layout}"
    print(f"{len(ranks)} ranks {what} as one table: each stage's answer per rank")
    for name, check in CHECKS.items():
        print(f"| {name} | {check(batch, first, ranks) or 'yes'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
