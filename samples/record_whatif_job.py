"""Record the what-if experiment's real traces: a 2-rank gloo job on the CPU whose steps are
made of two custom ops with a knob each, recorded once as a baseline and once per change.

    python samples/record_whatif_job.py --out tests/data/whatif_gloo

Each step, on each rank: `whatif::compute` (sleeps `compute_ms[rank]`: rank 0 longer, so
the all_reduce waits for it), an all_reduce of 1,024 floats, then `whatif::update` (sleeps
`update_ms[rank]`). A variant changes one knob; `kinetoscope whatif` predicts its step time
from the baseline's traces, and its own recording measures it.

Writes one run folder per variant (`<variant>/rank{0,1}.<ts>.pt.trace.json.gz`, workers
"rank0" and "rank1", one span of ACTIVE steps) and `measured.json`: per variant its knobs,
the change that names it for `kinetoscope whatif`, and each rank's wall-clock time of
every profiled step but the first and the last (from before one step to before the
next), with their medians, and the machine's load average when it was recorded.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
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


def worker(rank: int, rendezvous: str, run_dir: str, knobs: dict[str, list[float]]) -> None:
    torch.set_num_threads(1)
    _before_others()
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=2)
    try:
        x = torch.ones(1024)
        for _ in range(WARMUP_STEPS):
            _step(x, rank, knobs)
        total = sum(SCHEDULE[k] for k in ("wait", "warmup", "active"))
        marks: list[float] = []
        with profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(**SCHEDULE),
            on_trace_ready=tensorboard_trace_handler(run_dir, worker_name=f"rank{rank}"),
        ) as prof:
            for _ in range(total):
                marks.append(time.perf_counter())
                _step(x, rank, knobs)
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


def _step(x: torch.Tensor, rank: int, knobs: dict[str, list[float]]) -> None:
    y = compute(x, knobs["compute_ms"][rank])
    dist.all_reduce(y)
    update(y, knobs["update_ms"][rank])


def record(out: Path, name: str) -> dict[str, object]:
    knobs, change = VARIANTS[name]
    run_dir = out / name
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kinetoscope-whatif-") as rendezvous:
        mp.spawn(worker, args=(f"{rendezvous}/store", str(run_dir), knobs), nprocs=2, join=True)
    ranks = []
    for rank in range(2):
        marks = run_dir / f".times{rank}.json"
        times = json.loads(marks.read_text())
        marks.unlink()
        ranks.append({"rank": rank, "step_us": times, "median_us": statistics.median(times)})
    load = os.getloadavg()[0]
    return {"knobs": knobs, "change": change, "ranks": ranks, "load_average_1min": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()
    out: Path = args.out.resolve()
    measured_file = out / "measured.json"
    measured = json.loads(measured_file.read_text()) if measured_file.exists() else {}
    for name in args.variants:
        for old in (out / name).glob("*.pt.trace.json*"):
            old.unlink()
        measured[name] = record(out, name)
        medians = [r["median_us"] for r in measured[name]["ranks"]]  # type: ignore[index]
        print(f"{name}: median step {medians[0] / 1e3:.2f} / {medians[1] / 1e3:.2f} ms")
    measured_file.write_text(json.dumps(measured, indent=1) + "\n")


if __name__ == "__main__":
    main()
