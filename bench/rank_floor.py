#!/usr/bin/env python3
"""What a run-level view of N small ranks costs at least while each rank is summarised
alone (as the workers do today), whatever its Python does: the reading of every rank on
the pool's workers, and the calls a rank's summary makes (each numpy call on a small array
costs microseconds, however little work it does). The question behind the 2,048-rank cold
budget (docs/critical_path.md, "Where the 2,048-rank budget stands").

    .venv/bin/python bench/rank_floor.py                  # the 8x1x256 job, 2 workers
    .venv/bin/python bench/rank_floor.py --ranks 64 --rounds 3

It prints, per tier (the Distributed view's summary; a what-if's, the job's GEMM x0.5):
a rank's CPU (the K ranks summarised in one batch, as a worker does; median of the
rounds), its Python-level calls and how many of them enter numpy (`sys.setprofile`'s
counts, one batch); the median time of a small-array numpy call on this machine; the read
floor (every rank of the job read, nothing else, on `--workers` spawned processes: wall
and CPU); and the floor it implies at the job's size: the read floor's wall plus the
numpy calls' time spread over the workers.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _group_runs import make_group_run
from batch_probe import batch_arguments
from kinetoscope.analysis.critical_path.summaries import tier
from kinetoscope.analysis.distributed.rank_summaries import DISTRIBUTED, batch_sizes
from kinetoscope.ingest.build import build_model

_GEMM_HALVED = {"kernel": "sm90_xmma_gemm_bf16bf16_bf16f32", "factor": 0.5}  # the job's GEMM


def tiers() -> dict[str, Callable[[list[Any]], Any]]:
    """Each tier's batch summary, as a worker runs it."""
    whatif = tier(_GEMM_HALVED).make_many
    assert DISTRIBUTED.make_many is not None and whatif is not None
    return {"Distributed view": DISTRIBUTED.make_many, "what-if, GEMM x0.5": whatif}


def batch_cpu(paths: list[Path], make: Callable[[list[Any]], Any]) -> float:
    """CPU seconds of one batch's summaries (its ranks read first, not counted)."""
    models = [build_model(str(p)) for p in paths]
    start = time.process_time()
    make(models)
    return time.process_time() - start


def calls(paths: list[Path], make: Callable[[list[Any]], Any]) -> tuple[int, int]:
    """Python-level calls of one batch's summaries (functions entered or resumed, and
    builtins), and how many of them are calls into numpy from outside it (numpy's own
    calls inside a call are not counted again). Counted with `sys.setprofile` (the
    bench's own `profile.py` shadows the standard library's, which `cProfile` imports)."""
    models = [build_model(str(p)) for p in paths]
    counts = [0, 0]

    def count(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            counts[0] += 1
            caller = frame.f_back
            inside = caller is not None and _in_numpy(caller)
            counts[1] += _in_numpy(frame) and not inside
        elif event == "c_call":
            counts[0] += 1
            counts[1] += _is_numpy(arg) and not _in_numpy(frame)

    sys.setprofile(count)
    try:
        make(models)
    finally:
        sys.setprofile(None)
    return counts[0], counts[1]


def _in_numpy(frame: Any) -> bool:
    return "numpy" in frame.f_code.co_filename


def _is_numpy(builtin: Any) -> bool:
    """A builtin of numpy's: a function of a numpy module, or a method of a numpy type."""
    owner = getattr(builtin, "__self__", None)
    module = getattr(builtin, "__module__", None) or type(owner).__module__
    return isinstance(module, str) and module.startswith("numpy")


def numpy_call_us() -> float:
    """The median time of a few numpy calls a summary makes most, on 200-element arrays."""
    a = np.arange(200, dtype=np.float64)
    b = np.sort(np.random.default_rng(0).random(200))
    idx = np.arange(200)
    cases: list[Callable[[], Any]] = [
        lambda: np.full(200, -1, np.int64),
        lambda: a.searchsorted(b),
        lambda: a.astype(np.int64),
        lambda: np.flatnonzero(a > 50),
        lambda: a[idx],
        lambda: a.sum(),
        lambda: np.argsort(b, kind="stable"),
        lambda: np.concatenate((a, a)),
    ]
    each = [min(timeit.repeat(case, number=5000, repeat=3)) / 5000 for case in cases]
    return statistics.median(each) * 1e6


def _read_batch(paths: list[str]) -> int:
    for path in paths:
        build_model(path)
    return len(paths)


def read_floor(paths: list[Path], workers: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process and its children) of reading every path on
    `workers` spawned processes, in the batches the product's pool makes
    (`rank_summaries.batch_sizes`), nothing made from what is read."""
    names = [str(p) for p in paths]
    ends = list(itertools.accumulate(batch_sizes(len(names), workers), initial=0))
    batches = [names[a:b] for a, b in zip(ends[:-1], ends[1:])]
    before, start = os.times(), time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        read = sum(pool.map(_read_batch, batches, chunksize=1))
    wall, after = time.perf_counter() - start, os.times()
    assert read == len(paths)
    cpu = sum(after[i] - before[i] for i in range(4))  # user, system, children's both
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = batch_arguments(__doc__)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    run = make_group_run(args.layout, args.steps, args.work)
    every = [run.logdir / "job" / f"rank{r}.pt.trace.json" for r in range(run.ranks)]
    sample = every[: args.ranks]
    rows = []
    for name, make in tiers().items():
        batch_cpu(sample[:4], make)  # imports and first-use caches out of the rounds
        cpu = statistics.median(batch_cpu(sample, make) for _ in range(args.rounds))
        total, numpy = calls(sample, make)
        count = len(sample)
        rows.append((name, cpu / count * 1e3, total / count, numpy / count))
    call_us = numpy_call_us()
    wall, cpu = read_floor(every, args.workers)
    _print(len(every), len(sample), args.workers, rows, call_us, (wall, cpu))
    return 0


def _print(
    n: int,
    k: int,
    workers: int,
    rows: list[tuple[str, float, float, float]],
    call_us: float,
    read: tuple[float, float],
) -> None:
    print(f"{n} ranks, {workers} workers; a rank's figures from {k} ranks summarised in one batch")
    print(f"a small-array numpy call: {call_us:.2f} us (median of 8 kinds)")
    print(f"read floor: every rank read, {read[0]:.2f} s wall, {read[1]:.2f} s CPU")
    print("| tier | CPU ms a rank | calls a rank | numpy calls a rank | floor at N ranks, s |")
    print("| --- | --- | --- | --- | --- |")
    for name, cpu_ms, total, numpy in rows:
        floor = read[0] + n * numpy * call_us * 1e-6 / workers
        print(f"| {name} | {cpu_ms:.2f} | {total:.0f} | {numpy:.0f} | {floor:.2f} |")


if __name__ == "__main__":
    raise SystemExit(main())
