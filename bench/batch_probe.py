#!/usr/bin/env python3
"""What a rank costs when many small ranks are read and analysed as one table: the design
question behind the run-level views at 2,048 ranks (docs/critical_path.md, "Runs of many
ranks"). Not a benchmark of the product's answers: the batched table is the product's
join of the K ranks, each read alone (`model.rank_batch.join_ranks`: process ids, ids and
devices moved apart so that no two ranks share one), whose steps the product reads as one
job's, so only the cost is meaningful.

    .venv/bin/python bench/batch_probe.py                 # 64 ranks of the 8x1x256 job, 5 rounds
    .venv/bin/python bench/batch_probe.py --ranks 16 --rounds 3

Each round times every stage on the K ranks one by one (as the workers do now) and on the
one batched table, in alternating order (A B, B A, ...); it prints each stage's median CPU
time a rank (``time.process_time``, one process) and the median of the rounds' ratios.
The batch's "read" is each file read alone and the join.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _group_runs import make_group_run
from _results import HERE
from kinetoscope.analysis.core import comms
from kinetoscope.analysis.core.host_ranges import host_ranges
from kinetoscope.analysis.core.kernel_classes import kernel_classes
from kinetoscope.analysis.core.launches import gpu_work
from kinetoscope.analysis.core.steps import find_steps
from kinetoscope.analysis.critical_path.changes import change_of
from kinetoscope.analysis.critical_path.parts import Part, part_of
from kinetoscope.analysis.critical_path.reduce import reduce_part
from kinetoscope.analysis.distributed.rank_summaries import DISTRIBUTED
from kinetoscope.ingest.build import build_model
from kinetoscope.model.rank_batch import join_ranks
from kinetoscope.model.trace_model import TraceModel

_GEMM_HALVED = {"kernel": "sm90_xmma_gemm_bf16bf16_bf16f32", "factor": 0.5}  # the job's GEMM


def _part(model: TraceModel) -> Part:
    """The model's part (its rank graph and anchors), made once and kept with the model,
    so the what-if's stage reduces the one the graph's stage made."""
    return model.derived("_batch_probe_part", lambda m: part_of(m, "", "pinned"))


def _whatif_summary(model: TraceModel) -> None:
    reduce_part(_part(model), change_of(_GEMM_HALVED), False)


STAGES: dict[str, Callable[[Any], Any]] = {
    "kernel classes": kernel_classes,
    "GPU work and launches": gpu_work,
    "host ranges": host_ranges,
    "steps": find_steps,
    "collectives' args": comms.extract,
    "rank graph and anchors (critical path)": _part,
    "Distributed summary": DISTRIBUTED.make,
    # The batch's steps are read as one job's (its ranks' ProfilerStep#N merged), so its
    # summary has fewer nodes than the ranks' together: indicative only.
    "what-if summary, GEMM x0.5 (steps merged)": _whatif_summary,
}


def trace_bytes(path: Path) -> bytes:
    """A trace file's JSON text (gzip inflated)."""
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def timed(paths: list[Path], batched: bool) -> dict[str, float]:
    """CPU seconds of reading `paths` (and joining them, `batched`), then of each stage
    over their models (their batch)."""
    start = time.process_time()
    models = [build_model(str(p)) for p in paths]
    if batched:
        models = [join_ranks(models).model]
    out = {"read": time.process_time() - start}
    for name, stage in STAGES.items():
        start = time.process_time()
        for model in models:
            stage(model)
        out[name] = time.process_time() - start
    return out


def batch_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The batch probes' arguments: which job, how many of its ranks, how many rounds."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--layout", default="8x1x256")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--ranks", type=int, default=64, help="ranks in the batch (K)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--work", type=Path, default=HERE / "work")
    return p


def job_ranks(args: argparse.Namespace) -> list[Path]:
    """The trace files of the first `args.ranks` ranks of the job (made if need be)."""
    run = make_group_run(args.layout, args.steps, args.work)
    return [run.logdir / "job" / f"rank{r}.pt.trace.json" for r in range(args.ranks)]


def main(argv: list[str] | None = None) -> int:
    args = batch_arguments(__doc__).parse_args(argv)
    paths = job_ranks(args)
    timed(paths[:4], False)  # imports and first-use caches out of the rounds
    timed(paths[:4], True)
    rounds: dict[str, list[dict[str, float]]] = {"one by one": [], "together": []}
    for r in range(args.rounds):
        for way in list(rounds) if r % 2 == 0 else reversed(list(rounds)):
            rounds[way].append(timed(paths, way == "together"))
    _print(args.ranks, rounds["one by one"], rounds["together"])
    return 0


def _print(k: int, one_by_one: list[dict[str, float]], together: list[dict[str, float]]) -> None:
    print(f"{k} ranks, {len(one_by_one)} rounds; CPU ms a rank, medians")
    print(f"| stage | one by one | {k} as one table | ratio |")
    print("| --- | --- | --- | --- |")
    for stage in one_by_one[0]:
        a = statistics.median(t[stage] for t in one_by_one) / k * 1e3
        b = statistics.median(t[stage] for t in together) / k * 1e3
        ratio = statistics.median(x[stage] / y[stage] for x, y in zip(one_by_one, together))
        print(f"| {stage} | {a:.3f} | {b:.3f} | {ratio:.1f}x |")


if __name__ == "__main__":
    raise SystemExit(main())
