"""Record the what-if experiment's real traces: 2-rank gloo jobs on the CPU whose steps are
made of custom ops with a knob each, recorded once as a baseline and once per change.

    python samples/record_whatif_job.py --out tests/data/whatif_gloo
    python samples/record_whatif_job.py --job cross_twice --out tests/data/whatif_shapes/cross_twice

The default job (`slow_rank`), each step, on each rank: `whatif::compute` (sleeps
`compute_ms[rank]`: rank 0 longer, so the all_reduce waits for it), an all_reduce of 1,024
floats, then `whatif::update` (sleeps `update_ms[rank]`). The other jobs (`JOBS`) are
other shapes of step: host-bound (many short ops with Python between them), collective-
heavy (four large all_reduces a step), and a path that crosses the ranks twice a step. A
variant changes one knob; `kinetoscope whatif` predicts its step time from the baseline's
traces, and its own recording measures it.

Writes one run folder per variant (`<variant>/rank{0,1}.<ts>.pt.trace.json.gz`, workers
"rank0" and "rank1", one span of ACTIVE steps) and `measured.json`: per variant its knobs,
the change that names it for `kinetoscope whatif`, and each rank's wall-clock time of
every profiled step but the first and the last (from before one step to before the
next), with their medians, and the machine's load average when it was recorded.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from kinetoscope.handlers import tensorboard_trace_handler
from torch.profiler import ProfilerActivity, profile, schedule

WARMUP_STEPS = 3  # unprofiled, before the profiler starts: gloo's first calls are slow
SCHEDULE = {"wait": 1, "warmup": 1, "active": 25, "repeat": 1}
BASE = {"compute_ms": [30.0, 10.0], "update_ms": [12.0, 12.0]}

# variant -> (its knobs, the change as `kinetoscope whatif` takes it; None: the baseline)
VARIANTS: dict[str, tuple[dict[str, list[float]], dict[str, object] | None]] = {
    "baseline": (BASE, None),
    # on the path: the last rank to arrive computes half as long
    "compute_rank0_half": (
        {**BASE, "compute_ms": [15.0, 10.0]},
        {"op": "whatif::compute", "factor": 0.5, "rank": 0},
    ),
    # on the path on every rank: the update after the all_reduce twice as long
    "update_double": (
        {**BASE, "update_ms": [24.0, 24.0]},
        {"op": "whatif::update", "factor": 2.0},
    ),
    # off the path: the rank that waits anyway computes twice as long (still first)
    "compute_rank1_double": (
        {**BASE, "compute_ms": [30.0, 20.0]},
        {"op": "whatif::compute", "factor": 2.0, "rank": 1},
    ),
    # the path moves to the other rank: rank 0 computes 5x faster, rank 1 is now last
    "compute_rank0_fifth": (
        {**BASE, "compute_ms": [6.0, 10.0]},
        {"op": "whatif::compute", "factor": 0.2, "rank": 0},
    ),
}


@torch.library.custom_op("whatif::compute", mutates_args=())
def compute(x: torch.Tensor, ms: float) -> torch.Tensor:
    time.sleep(ms / 1000.0)
    return x + 1


@torch.library.custom_op("whatif::update", mutates_args=())
def update(x: torch.Tensor, ms: float) -> torch.Tensor:
    time.sleep(ms / 1000.0)
    return x * 0.5


@torch.library.custom_op("whatif::small", mutates_args=())
def small(x: torch.Tensor, ms: float) -> torch.Tensor:
    _spin(ms)  # a sleep this short overshoots by a fixed ~0.15 ms: twice the knob, not the op
    return x + 1


def _spin(ms: float) -> None:
    """Python work between ops (no op: the trace shows a gap), as a data pipeline's."""
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


def _slow_rank_step(x: torch.Tensor, rank: int, knobs: dict[str, list[float]]) -> None:
    y = compute(x, knobs["compute_ms"][rank])
    dist.all_reduce(y)
    update(y, knobs["update_ms"][rank])


def _host_bound_step(x: torch.Tensor, rank: int, knobs: dict[str, list[float]]) -> None:
    """40 short ops, each after ~0.3 ms of Python: the host's gaps are most of the step."""
    y = x
    for _ in range(40):
        _spin(knobs["python_ms"][rank])
        y = small(y, knobs["small_ms"][rank])
    dist.all_reduce(y)


def _collective_heavy_step(x: torch.Tensor, rank: int, knobs: dict[str, list[float]]) -> None:
    """Four rounds of compute then an all_reduce of 4 M floats (16 MB): most of the step
    is in the collectives."""
    for _ in range(4):
        big = compute(x, knobs["compute_ms"][rank]).repeat(4096)
        dist.all_reduce(big)


def _cross_twice_step(x: torch.Tensor, rank: int, knobs: dict[str, list[float]]) -> None:
    """Rank 0 is slow before the first all_reduce, rank 1 before the second: the step's
    path crosses from one rank to the other and back."""
    y = compute(x, knobs["compute_ms"][rank])
    dist.all_reduce(y)
    y = update(y, knobs["update_ms"][rank])
    dist.all_reduce(y)


Step = Callable[[torch.Tensor, int, dict[str, list[float]]], None]
HOST = {"python_ms": [0.3, 0.3], "small_ms": [0.5, 0.5]}
HEAVY = {"compute_ms": [4.0, 4.0]}
CROSS = {"compute_ms": [20.0, 5.0], "update_ms": [5.0, 20.0]}
# job -> (its step, its variants): the other shapes of step, each with one change
JOBS: dict[str, tuple[Step, dict[str, tuple[dict[str, list[float]], dict[str, object] | None]]]]
JOBS = {
    "slow_rank": (_slow_rank_step, VARIANTS),
    "host_bound": (
        _host_bound_step,
        {
            "baseline": (HOST, None),
            "small_double": (
                {**HOST, "small_ms": [1.0, 1.0]},
                {"op": "whatif::small", "factor": 2.0},
            ),
        },
    ),
    "collective_heavy": (
        _collective_heavy_step,
        {
            "baseline": (HEAVY, None),
            "compute_rank0_double": (
                {"compute_ms": [8.0, 4.0]},
                {"op": "whatif::compute", "factor": 2.0, "rank": 0},
            ),
        },
    ),
    "cross_twice": (
        _cross_twice_step,
        {
            "baseline": (CROSS, None),
            "update_rank1_half": (
                {**CROSS, "update_ms": [5.0, 10.0]},
                {"op": "whatif::update", "factor": 0.5, "rank": 1},
            ),
        },
    ),
}


def worker(
    rank: int, rendezvous: str, run_dir: str, knobs: dict[str, list[float]], job: str
) -> None:
    torch.set_num_threads(1)
    _before_others()
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=2)
    try:
        x = torch.ones(1024)
        step = JOBS[job][0]
        for _ in range(WARMUP_STEPS):
            step(x, rank, knobs)
        total = sum(SCHEDULE[k] for k in ("wait", "warmup", "active"))
        marks: list[float] = []
        with profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(**SCHEDULE),
            on_trace_ready=tensorboard_trace_handler(run_dir, worker_name=f"rank{rank}"),
        ) as prof:
            for _ in range(total):
                marks.append(time.perf_counter())
                step(x, rank, knobs)
                prof.step()
        # Step k's time: from before step k to before step k+1 (so prof.step() of step k
        # counts, as in the trace's ProfilerStep ranges); the last active step is left out
        # (it ends in the prof.step() that writes the trace), and so is the first (its
        # prof.step() starts the recording).
        active = marks[-SCHEDULE["active"] :]
        times = [(b - a) * 1e6 for a, b in zip(active, active[1:])][1:]
        Path(run_dir, f".times{rank}.json").write_text(json.dumps(times))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _before_others() -> None:
    """On a shared machine other work delays a sleeping rank's wake-ups by milliseconds;
    a higher priority (where allowed) keeps the steps to what the knobs say. The ranks
    sleep most of the time: they take little from the others."""
    with contextlib.suppress(OSError):
        os.nice(-10)


def record(out: Path, name: str, job: str = "slow_rank") -> dict[str, object]:
    knobs, change = JOBS[job][1][name]
    run_dir = out / name
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kinetoscope-whatif-") as rendezvous:
        mp.spawn(
            worker, args=(f"{rendezvous}/store", str(run_dir), knobs, job), nprocs=2, join=True
        )
    for trace in run_dir.glob("*.pt.trace.json.gz"):
        _without_machine_paths(trace)
    ranks = []
    for rank in range(2):
        marks = run_dir / f".times{rank}.json"
        times = json.loads(marks.read_text())
        marks.unlink()
        ranks.append({"rank": rank, "step_us": times, "median_us": statistics.median(times)})
    load = os.getloadavg()[0]
    return {"knobs": knobs, "change": change, "ranks": ranks, "load_average_1min": load}


def _without_machine_paths(trace: Path) -> None:
    """The recording machine's folders out of the trace, kept as test data: its name is its
    file's, and the interpreter's folders (for source links) are dropped."""
    doc = json.loads(gzip.decompress(trace.read_bytes()))
    doc["traceName"] = trace.name
    doc.pop("python_path_prefixes", None)
    trace.write_bytes(gzip.compress(json.dumps(doc).encode(), mtime=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--job", choices=sorted(JOBS), default="slow_rank")
    parser.add_argument("--variants", nargs="+", help="default: every variant of the job")
    args = parser.parse_args()
    variants = JOBS[args.job][1]
    unknown = set(args.variants or []) - set(variants)
    if unknown:
        parser.error(f"{args.job} has no variant {', '.join(sorted(unknown))}")
    out: Path = args.out.resolve()
    measured_file = out / "measured.json"
    measured = json.loads(measured_file.read_text()) if measured_file.exists() else {}
    for name in args.variants or list(variants):
        for old in (out / name).glob("*.pt.trace.json*"):
            old.unlink()
        measured[name] = record(out, name, args.job)
        medians = [r["median_us"] for r in measured[name]["ranks"]]  # type: ignore[index]
        print(f"{name}: median step {medians[0] / 1e3:.2f} / {medians[1] / 1e3:.2f} ms")
    measured_file.write_text(json.dumps(measured, indent=1) + "\n")


if __name__ == "__main__":
    main()
