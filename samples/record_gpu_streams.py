"""Record the two-stream GPU job: the critical path's cross-stream waits on a real GPU, once
with the profiler's CUDA sync events and once with its default settings, and the what-if
experiment on it (a baseline, then each change really made).

    python samples/record_gpu_streams.py --out tests/data/gpu_streams

Needs a CUDA GPU. Each step, on one GPU:

- a side stream copies a pinned host batch to the GPU (`Memcpy HtoD`, `copy_mb` MB, the
  copy engine: no SMs) while the default stream runs `gemm_repeats` bf16 matrix products
  (4096 x `gemm_k` x 4096);
- the default stream waits for the copy (`wait_stream`: a `cudaEventRecordWithFlags` then a
  `cudaStreamWaitEvent`) and adds the products' result to the batch;
- the side stream waits for the sum and copies `offload_mb` MB of it back to pinned host
  memory (`Memcpy DtoH`); the step ends with `torch.cuda.synchronize()`.

The products are counted at start-up (after the GPU is warm) so that they take ~60 % of the
copy: the copy and the waits are on the critical path, the products are not.

Writes one run folder per variant (`<variant>/gpu0.<ts>.pt.trace.json.gz`, torch's own
handler, one span of ACTIVE steps) and `measured.json`: per variant its knobs, the change
that names it for `kinetoscope whatif`, its factor (the changed item's total duration in the
variant's trace over the baseline's, read from the raw JSON; `factor_cuda_events`: the same
ratio timed with CUDA events outside the profiler), and the wall-clock time of every
profiled step but the first and the last, with their median.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch._C._profiler import _ExperimentalConfig
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

WORKER = "gpu0"
WARMUP_STEPS = 5  # unprofiled: cuBLAS picks its kernels, the allocator fills its cache
SCHEDULE = {"wait": 1, "warmup": 2, "active": 12, "repeat": 1}
GEMM_N = 4096
H2D = "Memcpy HtoD (Pinned -> Device)"
D2H = "Memcpy DtoH (Device -> Pinned)"
MB = 1 << 20
COPY_MB = 256  # ~5 ms at ~50 GB/s: host noise (~50 µs a step) is ~1 % of a step


class Job:
    """The buffers of one variant's step, allocated once."""

    def __init__(self, copy_mb: int, gemm_k: int, gemm_repeats: int, offload_mb: int) -> None:
        dev, bf16 = torch.device("cuda"), torch.bfloat16
        self.side = torch.cuda.Stream()
        self.repeats = gemm_repeats
        self.batch = torch.ones(copy_mb * MB // 2, dtype=bf16).pin_memory()
        self.staged = torch.empty(self.batch.numel(), dtype=bf16, device=dev)
        self.x = torch.randn(GEMM_N, gemm_k, dtype=bf16, device=dev)
        self.w = torch.randn(gemm_k, GEMM_N, dtype=bf16, device=dev)
        self.offload = offload_mb * MB // 2
        self.host_out = torch.empty(self.offload, dtype=bf16).pin_memory()

    def step(self) -> None:
        default = torch.cuda.current_stream()
        with torch.cuda.stream(self.side):
            self.staged.copy_(self.batch, non_blocking=True)
        out = torch.mm(self.x, self.w)
        for _ in range(self.repeats - 1):
            out = torch.mm(self.x, self.w)
        default.wait_stream(self.side)
        width = min(out.numel(), self.staged.numel())
        self.staged[:width] += out.view(-1)[:width]
        self.side.wait_stream(default)
        with torch.cuda.stream(self.side):
            self.host_out.copy_(self.staged[: self.offload], non_blocking=True)
        torch.cuda.synchronize()


def _cuda_ms(work: Callable[[], object], stream: torch.cuda.Stream | None = None) -> float:
    """The median of 9 timings of `work` with CUDA events (after 3 warm-ups)."""
    stream = stream or torch.cuda.current_stream()
    times = []
    for i in range(12):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            start.record()
            work()
            end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def _h2d_ms(mb: int) -> float:
    host = torch.ones(mb * MB // 2, dtype=torch.bfloat16).pin_memory()
    dev = torch.empty_like(host, device="cuda")
    return _cuda_ms(lambda: dev.copy_(host, non_blocking=True), torch.cuda.Stream())


def _d2h_ms(mb: int) -> float:
    dev = torch.ones(mb * MB // 2, dtype=torch.bfloat16, device="cuda")
    host = torch.empty(dev.numel(), dtype=torch.bfloat16).pin_memory()
    return _cuda_ms(lambda: host.copy_(dev, non_blocking=True), torch.cuda.Stream())


def _gemm_ms(k: int) -> float:
    x = torch.randn(GEMM_N, k, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(k, GEMM_N, dtype=torch.bfloat16, device="cuda")
    return _cuda_ms(lambda: torch.mm(x, w))


def _warm_gpu(seconds: float = 1.0) -> None:
    """Matrix products until the clocks are up: timings taken cold were ~25 % slow."""
    x = torch.randn(GEMM_N, GEMM_N, dtype=torch.bfloat16, device="cuda")
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            torch.mm(x, x)
        torch.cuda.synchronize()


# the knob each change turns -> the item it changes (how a trace names it), its CUDA-event timer
ITEMS: dict[str, tuple[str, Callable[[int], float]]] = {
    "copy_mb": (H2D, _h2d_ms),
    "gemm_k": ("gemm", _gemm_ms),
    "offload_mb": (D2H, _d2h_ms),
}


def variants(repeats: int) -> dict[str, tuple[dict[str, int], object, bool]]:
    """variant -> (its knobs, the change as `kinetoscope whatif` takes it, sync events);
    each change's factor is measured after it is recorded."""
    base = {"copy_mb": COPY_MB, "gemm_k": GEMM_N, "gemm_repeats": repeats, "offload_mb": 64}
    return {
        "baseline_sync": (base, None, True),
        "baseline": (base, None, False),
        # on the path: the copy the default stream waits for, half as large
        "copy_half": ({**base, "copy_mb": COPY_MB // 2}, {"kernel": H2D}, False),
        # off the path: the products finish before the copy anyway
        "gemm_half": ({**base, "gemm_k": GEMM_N // 2}, {"kernel": "gemm"}, False),
        # the path moves: the products now outlast the copy
        "gemm_double": ({**base, "gemm_k": GEMM_N * 2}, {"kernel": "gemm"}, False),
        # on the path, after the second wait: the copy back, twice as large
        "offload_double": ({**base, "offload_mb": 128}, {"kernel": D2H}, False),
    }


def gpu_profiler(
    run_dir: Path, sync_events: bool = False, span: dict[str, int] = SCHEDULE
) -> profile:
    """The profiler of the GPU recordings (this script's, record_gpu_training.py's and
    record_gpu_ddp.py's): CPU and CUDA, torch's own handler (worker "gpu0", gzip), one span,
    CUDA sync events where asked."""
    return profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(**span),
        on_trace_ready=tensorboard_trace_handler(str(run_dir), worker_name=WORKER, use_gzip=True),
        experimental_config=_ExperimentalConfig(enable_cuda_sync_events=sync_events),
    )


def record(run_dir: Path, job: Job, sync_events: bool) -> list[float]:
    """Profile the job; the wall-clock time of each profiled step but the first and last."""
    for _ in range(WARMUP_STEPS):
        job.step()
    steps = sum(SCHEDULE[k] for k in ("wait", "warmup", "active"))
    marks: list[float] = []
    with gpu_profiler(run_dir, sync_events) as prof:
        for _ in range(steps):
            marks.append(time.perf_counter())
            job.step()
            prof.step()
    active = marks[SCHEDULE["wait"] + SCHEDULE["warmup"] :]
    return [(b - a) * 1e6 for a, b in zip(active[1:-1], active[2:], strict=False)]


def _events(run_dir: Path) -> list[dict]:
    (trace,) = run_dir.glob("*.pt.trace.json.gz")
    return json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]


def _is_product(event: dict) -> bool:
    return event.get("cat") == "kernel" and "elementwise" not in event.get("name", "")


def gemm_kernel(run_dir: Path) -> str:
    """The products' kernel as cuBLAS named it in a run's trace (one name: asserted)."""
    (name,) = {e["name"] for e in _events(run_dir) if _is_product(e)}
    return name


def item_total_us(run_dir: Path, item: str) -> float:
    """The total duration of an item in a run's trace (every variant records as many steps),
    from the raw JSON: an event by its name (a memcpy, an op); "gemm": the kernels but the
    elementwise add (the products' kernels, however cuBLAS splits them)."""
    events = _events(run_dir)
    if item == "gemm":
        durs = [e["dur"] for e in events if _is_product(e)]
    else:
        durs = [e["dur"] for e in events if e.get("name") == item]
    return float(sum(durs))


def _changed_entry(
    out: Path, name: str, knobs: dict[str, int], base: dict[str, int], change: dict[str, object]
) -> dict:
    knob = next(k for k in ITEMS if knobs[k] != base[k])
    item, timer = ITEMS[knob]
    factor = item_total_us(out / name, item) / item_total_us(out / "baseline", item)
    by_events = timer(knobs[knob]) / timer(base[knob])
    if change.get("kernel") == "gemm":  # the products' kernel, as the baseline names it
        change = {**change, "kernel": gemm_kernel(out / "baseline")}
    return {**change, "factor": round(factor, 4), "factor_cuda_events": round(by_events, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    _warm_gpu()
    copy_ms, gemm_ms = _h2d_ms(COPY_MB), _gemm_ms(GEMM_N)
    repeats = max(1, round(0.6 * copy_ms / gemm_ms))
    measured: dict[str, object] = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "calibration": {"h2d_ms": copy_ms, "gemm_ms": gemm_ms, "gemm_repeats": repeats},
    }
    table = variants(repeats)
    base = table["baseline"][0]
    for name, (knobs, change, sync_events) in table.items():
        steps = record(out / name, Job(**knobs), sync_events)
        entry: dict[str, object] = {"knobs": knobs, "sync_events": sync_events}
        entry["change"] = _changed_entry(out, name, knobs, base, change) if change else None
        entry["steps_us"] = [round(s, 1) for s in steps]
        entry["median_us"] = round(statistics.median(steps), 1)
        measured[name] = entry
        print(name, entry["change"], entry["median_us"], flush=True)
    (out / "measured.json").write_text(json.dumps(measured, indent=1) + "\n")


if __name__ == "__main__":
    main()
