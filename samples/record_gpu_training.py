"""Record a small GPU training job whose DataLoader fills most of each step, as a baseline
and with the loader really made faster and slower: the what-if of the corpus's DDP pairs
(`--op 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__'`) on a trace of today's
torch, with the autograd engine's backward thread.

    python samples/record_gpu_training.py --out tests/data/gpu_training

Needs a CUDA GPU. Each step: the DataLoader's `__next__` (a dataset that spins the CPU for
`load_ms` to build a batch, as decoding would), the batch to the GPU, a 4-layer MLP forward
(fp32 with TF32, 2048 x 4096), `loss.backward()` (run by the engine's device thread),
`Adam.step()`, and `loss.item()`, which waits for the GPU.

Writes one run folder per variant (`<variant>/gpu0.<ts>.pt.trace.json.gz`, torch's own
handler, the profiler's default settings, one span of ACTIVE steps) and `measured.json`:
per variant its knobs, the change that names it for `kinetoscope whatif` (its factor: the
loader's total time in the variant's trace over the baseline's, from the raw JSON), and the
wall-clock time of every profiled step but the first and the last, with their median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from record_gpu_streams import SCHEDULE, gpu_profiler, item_total_us
from torch import nn
from torch.utils.data import DataLoader, Dataset

WARMUP_STEPS = 5
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
BATCH, WIDTH, CLASSES = 2048, 4096, 1000
VARIANTS: dict[str, tuple[float, object]] = {
    "baseline": (4.0, None),
    "loader_half": (2.0, {"op": LOADER}),  # on the path: the GPU waits for each batch
    "loader_double": (8.0, {"op": LOADER}),
}


class SpinningBatches(Dataset):
    """Whole batches (`batch_size=None`), each after `load_ms` of CPU work."""

    def __init__(self, load_ms: float, length: int) -> None:
        self.load_s, self.length = load_ms / 1000, length
        self.x = torch.randn(BATCH, WIDTH)
        self.y = torch.randint(0, CLASSES, (BATCH,))

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        end = time.perf_counter() + self.load_s
        while time.perf_counter() < end:
            pass
        return self.x, self.y


def mlp() -> nn.Module:
    """4 layers of WIDTH and a classifier, on the GPU."""
    layers: list[nn.Module] = []
    for _ in range(4):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(WIDTH, CLASSES)).cuda()


def record(run_dir: Path, load_ms: float) -> list[float]:
    """Train under the profiler; the wall-clock time of each profiled step but the first
    and the last."""
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    steps = sum(SCHEDULE[k] for k in ("wait", "warmup", "active"))
    loader = DataLoader(
        SpinningBatches(load_ms, WARMUP_STEPS + steps), batch_size=None, pin_memory=True
    )
    marks: list[float] = []
    prof = gpu_profiler(run_dir)
    for i, (x, y) in enumerate(loader):
        if i == WARMUP_STEPS:
            prof.start()
            marks = [time.perf_counter()]
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()
        if i >= WARMUP_STEPS:
            prof.step()
            marks.append(time.perf_counter())
    prof.stop()
    # marks[j] .. marks[j + 1]: profiler step j (its batch's loading, then its work)
    first = SCHEDULE["wait"] + SCHEDULE["warmup"]
    last = first + SCHEDULE["active"] - 1
    return [(marks[j + 1] - marks[j]) * 1e6 for j in range(first + 1, last)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    measured: dict[str, object] = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
    }
    for name, (load_ms, change) in VARIANTS.items():
        steps = record(out / name, load_ms)
        entry: dict[str, object] = {"knobs": {"load_ms": load_ms}}
        if isinstance(change, dict):
            factor = item_total_us(out / name, LOADER) / item_total_us(out / "baseline", LOADER)
            change = {**change, "factor": round(factor, 4)}
        entry["change"] = change
        entry["steps_us"] = [round(s, 1) for s in steps]
        entry["median_us"] = round(statistics.median(steps), 1)
        measured[name] = entry
        print(name, change, entry["median_us"], flush=True)
    (out / "measured.json").write_text(json.dumps(measured, indent=1) + "\n")


if __name__ == "__main__":
    main()
