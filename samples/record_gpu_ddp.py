"""Record a one-GPU DDP job over NCCL (world size 1), with CUDA sync events on and with the
profiler's default settings: c10d's cross-stream waits (the NCCL stream waits for the
gradients, the gradient copies wait for the all-reduce) as today's torch records them.

    python samples/record_gpu_ddp.py --out tests/data/gpu_ddp

Needs a CUDA GPU. Each step: a batch made on the GPU, record_gpu_training.py's MLP (fp32
with TF32, a batch of 1024) under `DistributedDataParallel` (`bucket_cap_mb=16`: 4
all-reduces and 8 `cudaStreamWaitEvent` calls a step), `loss.backward()`, `SGD.step()`,
`loss.item()`. With one rank NCCL launches no work: the waits hold nothing.

Writes one run folder per variant (`sync` and `default`,
`<variant>/gpu0.<ts>.pt.trace.json.gz`, torch's own handler, one span of ACTIVE steps).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from record_gpu_streams import gpu_profiler
from record_gpu_training import CLASSES, WIDTH, mlp
from torch.nn.parallel import DistributedDataParallel

WARMUP_STEPS = 5
SCHEDULE = {"wait": 1, "warmup": 2, "active": 6, "repeat": 1}
BATCH = 1024


def record(run_dir: Path, sync_events: bool) -> None:
    torch.manual_seed(0)
    model = DistributedDataParallel(mlp(), bucket_cap_mb=16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, WIDTH, device="cuda")
    y = torch.randint(0, CLASSES, (BATCH,), device="cuda")

    def step() -> None:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()

    for _ in range(WARMUP_STEPS):
        step()
    with gpu_profiler(run_dir, sync_events, SCHEDULE) as prof:
        for _ in range(sum(SCHEDULE[k] for k in ("wait", "warmup", "active"))):
            step()
            prof.step()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    torch.cuda.set_device(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    try:
        for name, sync_events in (("sync", True), ("default", False)):
            record(out / name, sync_events)
            print(name, "recorded", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
