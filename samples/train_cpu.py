"""Write a small logdir of real CPU profiler traces to try kinetoscope on.

    python samples/train_cpu.py --logdir samples/logdir
    tensorboard --logdir samples/logdir

Runs "mlp" and "cnn" train on random data in one process (worker "worker0"); run
"ddp_gloo" trains a DDP-wrapped model in two processes over the gloo backend (workers
"rank0" and "rank1"). Each worker gets three spans (schedule repeat=3).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

# Quiet, before torch loads: c10's warnings ("Memory block of unknown size was allocated
# before the profiling started") are about the profiler, not the model; errors still show.
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from kinetoscope.handlers import tensorboard_trace_handler  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402
from torch.profiler import ProfilerActivity, profile, schedule  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

# A schedule of several cycles is what this sample shows (one trace per span).
warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle")

# wait=1, warmup=1, active=3, repeat=3 needs 15 steps; the rest run unprofiled after.
SCHEDULE = {"wait": 1, "warmup": 1, "active": 3, "repeat": 3}
STEPS = 24
BATCH = 32


def make_mlp() -> nn.Module:
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(28 * 28, 256),
        nn.ReLU(),
        nn.Linear(256, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def make_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 10),
    )


MODELS = {"mlp": make_mlp, "cnn": make_cnn}


def make_loader(seed: int) -> DataLoader[tuple[torch.Tensor, ...]]:
    gen = torch.Generator().manual_seed(seed)
    images = torch.randn(STEPS * BATCH, 1, 28, 28, generator=gen)
    labels = torch.randint(0, 10, (STEPS * BATCH,), generator=gen)
    # num_workers=0 keeps loading in the profiled process, so it shows up in the trace.
    return DataLoader(TensorDataset(images, labels), batch_size=BATCH, num_workers=0)


def train(
    model: nn.Module, loader: DataLoader[tuple[torch.Tensor, ...]], run_dir: Path, worker: str
) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(**SCHEDULE),
        on_trace_ready=tensorboard_trace_handler(str(run_dir), worker_name=worker),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
    ) as prof:
        for images, labels in loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(images), labels)
            loss.backward()
            opt.step()
            prof.step()


def ddp_worker(rank: int, world_size: int, rendezvous: str, run_dir: str) -> None:
    # The ranks meet in a file store, not on a probed free TCP port: a port found free can
    # be taken by another process before rank 0 binds it.
    # One thread per rank: two ranks share a small CPU budget.
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world_size
    )
    try:
        torch.manual_seed(0)  # same initial weights on every rank
        model = DistributedDataParallel(make_mlp())
        train(model, make_loader(seed=rank), Path(run_dir), worker=f"rank{rank}")
        # Both ranks done before either tears gloo down: a rank that destroyed the group
        # while its peer still talked to it died in C++ ("terminate called without an
        # active exception"), now and then (seen in CI).
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", required=True, type=Path)
    parser.add_argument(
        "--runs",
        nargs="+",
        choices=sorted(MODELS),
        default=["mlp", "cnn"],
        help="single-process runs to write (default: mlp cnn)",
    )
    parser.add_argument("--no-ddp", action="store_true", help="skip the 2-rank gloo run")
    args = parser.parse_args()

    logdir: Path = args.logdir.resolve()
    for name in args.runs:
        start = time.monotonic()
        torch.manual_seed(0)
        train(MODELS[name](), make_loader(seed=1), logdir / name, worker="worker0")
        print(f"run {name}: {time.monotonic() - start:.1f} s")
    if not args.no_ddp:
        start = time.monotonic()
        world_size = 2
        with tempfile.TemporaryDirectory(prefix="kinetoscope-ddp-") as rendezvous:
            mp.spawn(
                ddp_worker,
                args=(world_size, f"{rendezvous}/store", str(logdir / "ddp_gloo")),
                nprocs=world_size,
                join=True,
            )
        print(f"run ddp_gloo: {time.monotonic() - start:.1f} s")
    print(f"logdir: {logdir}")


if __name__ == "__main__":
    main()
