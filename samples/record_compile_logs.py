"""Record real `torch.compile` runs with their TORCH_TRACE logs beside the profiler trace.

    python samples/record_compile_logs.py OUTDIR [--case NAME ...]

Each case runs in a fresh process with ``TORCH_TRACE=OUTDIR/<case>/torch_trace`` and a
cold Inductor cache of its own, so each log holds only that process's compiles. A case
folder holds the profiler trace (``worker<rank>.<ms>.pt.trace.json.gz``, written by
kinetoscope's handler, ``record_shapes`` and ``with_stack`` on, every step profiled, so
the compiles happen inside the profiled window) and ``torch_trace/`` with the log(s):

- ``graph_break``: a forward with ``torch._dynamo.graph_break()`` at a known line;
- ``recompile_shapes``: ``dynamic=False``, the batch size changes at steps 2 and 4;
- ``recompile_value``: a module's Python bool attribute flips at step 3 (this process
  runs with ``TZ=America/Los_Angeles``, so its log's local-time prefix is not UTC);
- ``compile_failure``: a backend that raises, ``suppress_errors`` on (runs eagerly);
- ``cache_hit``: the same model compiled in two processes on one Inductor cache dir;
  the second (warm) process's trace and log are kept, the first's log in ``cold/``;
- ``two_ranks``: a 2-rank gloo DDP job on 127.0.0.1, each rank compiled and traced.

The line numbers the README quotes are those of the marked lines below (``# LINE:``).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

STEPS = 6
# The Python tracer of `with_stack` records every Python call of the compile itself:
# graph_break's trace was 67 MB gzipped with it on, so it is off (see the README).
WITH_STACK = os.environ.get("RECORD_WITH_STACK") == "1"
CASES = (
    "graph_break",
    "recompile_shapes",
    "recompile_value",
    "compile_failure",
    "cache_hit",
    "two_ranks",
)


class BreakNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.up(x))
        torch._dynamo.graph_break()  # LINE: graph_break
        return self.down(h * 0.5)


class MlpNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 4)
        self.residual = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.up(x))
        if self.residual:  # LINE: value_guard
            h = h + 1.0
        return self.down(h)


def _fail_backend(gm: torch.fx.GraphModule, example_inputs: list) -> object:
    raise RuntimeError("record_compile_logs: this backend always fails")  # LINE: fail


def _train(
    model: nn.Module,
    fast: object,
    out: Path,
    worker: str,
    batch_at: dict[int, int] | None = None,
    flip_at: int | None = None,
) -> None:
    """STEPS training steps, all of them profiled (step 0 compiles)."""
    from kinetoscope.handlers import tensorboard_trace_handler

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = batch_at or {}
    batch = 8
    acts = [torch.profiler.ProfilerActivity.CPU]
    sched = torch.profiler.schedule(wait=0, warmup=0, active=STEPS, repeat=1)
    handler = tensorboard_trace_handler(str(out), worker_name=worker)
    with torch.profiler.profile(
        activities=acts,
        schedule=sched,
        on_trace_ready=handler,
        record_shapes=True,
        with_stack=WITH_STACK,
    ) as prof:
        for step in range(STEPS):
            batch = batches.get(step, batch)
            if flip_at is not None and step == flip_at:
                model.residual = True  # type: ignore[assignment]  # LINE: flip
            x = torch.randn(batch, 16)
            loss = fast(x).square().mean()  # type: ignore[operator]
            loss.backward()
            opt.step()
            opt.zero_grad()
            prof.step()


# Cases added after the data above was recorded, kept below its marked lines so they stay
# where the committed logs say they are: `before_window` (the compile before the profiled
# window); `recompile_ints` (`ScaleNet`: an int argument that changes every step, made
# dynamic by torch after one recompile, and a module's int attribute changing every step
# from step 2 with a recompile limit of 3, hit at step 5).
LATE_CASES = ("before_window", "recompile_ints")


def _train_after_compile(model: nn.Module, fast: object, out: Path) -> None:
    """`before_window`: step 0 compiles unprofiled, step 1 warms up, steps 2–5 are
    profiled with `with_stack` on (cheap here: no compile inside the window)."""
    from kinetoscope.handlers import tensorboard_trace_handler

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=STEPS - 2, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(out), worker_name="worker0"),
        record_shapes=True,
        with_stack=True,
    ) as prof:
        for _ in range(STEPS):
            loss = fast(torch.randn(8, 16)).square().mean()  # type: ignore[operator]
            loss.backward()
            opt.step()
            opt.zero_grad()
            prof.step()


class ScaleNet(nn.Module):
    """`recompile_ints`: an int attribute of a module (static to torch: each value it sees
    compiles again, up to the recompile limit) beside an int argument of a function
    (made dynamic by torch after its first change)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 4)
        self.k = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.k  # LINE: int_attribute


def _shift(y: torch.Tensor, n: int) -> torch.Tensor:
    return y + n  # LINE: int_argument


def _train_ints(out: Path) -> None:
    """Steps 0-5: `n` is the step + 1 (one recompile, then dynamic); `k` is 1, 1, 2, 3, 4,
    5 with a recompile limit of 3 (compiles for 1, 2, 3; 4 hits the limit)."""
    from kinetoscope.handlers import tensorboard_trace_handler

    torch._dynamo.config.recompile_limit = 3
    model = ScaleNet()
    # Dynamo alone (`backend="eager"`): the guards are Dynamo's; the log stays small.
    fast, shift = torch.compile(model, backend="eager"), torch.compile(_shift, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(wait=0, warmup=0, active=STEPS, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(out), worker_name="worker0"),
        record_shapes=True,
    ) as prof:
        for step in range(STEPS):
            model.k = max(1, step)
            loss = shift(fast(torch.randn(8, 16)), step + 1).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            prof.step()


def run_case(case: str, out: Path) -> None:
    """The body of one case, in its own process (TORCH_TRACE is already set)."""
    torch.manual_seed(0)
    if case == "graph_break":
        model: nn.Module = BreakNet()
        _train(model, torch.compile(model), out, "worker0")
    elif case == "recompile_shapes":
        model = MlpNet()
        _train(model, torch.compile(model, dynamic=False), out, "worker0", {2: 4, 4: 6})
    elif case == "recompile_value":
        model = MlpNet()
        _train(model, torch.compile(model), out, "worker0", flip_at=3)
    elif case == "compile_failure":
        torch._dynamo.config.suppress_errors = True
        model = MlpNet()
        _train(model, torch.compile(model, backend=_fail_backend), out, "worker0")
    elif case == "cache_hit":
        model = MlpNet()
        _train(model, torch.compile(model), out, "worker0")
    elif case == "before_window":
        model = BreakNet()
        _train_after_compile(model, torch.compile(model), out)
    elif case == "recompile_ints":
        _train_ints(out)
    else:
        raise SystemExit(f"unknown case {case}")


def _rank_main(rank: int, port: int, out: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = MlpNet()
    ddp = nn.parallel.DistributedDataParallel(model)
    torch.manual_seed(1 + rank)  # each rank its own data
    _train(model, torch.compile(ddp), Path(out), f"worker{rank}")
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_two_ranks(out: Path) -> None:
    import torch.multiprocessing as mp

    mp.spawn(_rank_main, args=(_free_port(), str(out)), nprocs=2, join=True)


def _child(case: str, out: Path, cache: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if case == "recompile_value":  # the log's line prefix is local time: show it
        env["TZ"] = "America/Los_Angeles"
    env["TORCH_TRACE"] = str(out / "torch_trace")
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    env["PYTHONHASHSEED"] = "0"
    cmd = [sys.executable, __file__, "--worker", case, str(out)]
    subprocess.run(cmd, env=env, check=True)


def _scrub(folder: Path) -> None:
    """Gzip the logs; in logs and traces, put ``/repo`` for this checkout's path and
    ``/python`` for the Python installation's (stdlib frames)."""
    root = str(Path(__file__).resolve().parent.parent)
    base = sys.base_prefix
    for f in sorted(folder.rglob("*")):
        if f.suffix == ".log" or f.name.endswith(".json.gz"):
            opener = gzip.open if f.suffix == ".gz" else open
            with opener(f, "rt", encoding="utf-8") as src:
                text = src.read().replace(root, "/repo").replace(base, "/python")
            target = f if f.suffix == ".gz" else f.with_name(f.name + ".gz")
            with gzip.open(target, "wt", encoding="utf-8") as dst:
                dst.write(text)
            if target != f:
                f.unlink()


def record(case: str, outdir: Path) -> None:
    out = outdir / case
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory(prefix="ind") as tmp:
        cache = Path(tmp)
        if case == "cache_hit":
            cold = Path(tmp) / "cold"
            _child(case, cold, cache / "cache")
            _child(case, out, cache / "cache")
            shutil.copytree(cold / "torch_trace", out / "cold" / "torch_trace")
        else:
            _child(case, out, cache)
    _scrub(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--case", action="append", choices=CASES + LATE_CASES)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker == "two_ranks":
        run_two_ranks(args.outdir)
    elif args.worker:
        run_case(args.worker, args.outdir)
    else:
        for case in args.case or CASES + LATE_CASES:  # one at a time: the machine is small
            record(case, args.outdir)


if __name__ == "__main__":
    main()
