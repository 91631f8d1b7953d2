"""Record small real GPU traces (and a memory snapshot) for kinetoscope's test data.

    python samples/record_gpu.py --logdir OUT

Needs a CUDA GPU. Each run folder gets one or two spans of a small workload, written by
kinetoscope's handler (worker "gpu0"), kept small (< 1 MB gzipped each):

- ``gemm_bf16``: bf16 matmul family (mm, addmm, bmm, baddbmm, matmul, linear), a bf16
  convolution forward and backward, fp8 ``_scaled_mm`` where the GPU has it; shapes,
  ``with_flops``, memory, stacks.
- ``attention``: a small transformer block (modules): SDPA flash and memory-efficient,
  causal and not, forward and backward; layer norm, embedding, GELU, softmax.
- ``compiled``, ``compiled_enriched``: the same block under ``torch.compile`` (Triton) with
  ``torch.fx.experimental._config.enrich_profiler_metadata`` on.
- ``cudagraph_replay``: two CUDA graphs (batch 4 and 8) captured while profiled into
  ``capture_traces/`` (as vLLM and SGLang do), then replayed while profiled.
- ``cudagraph_self``: one trace holding a graph's capture and its replays.
- ``compiled_cudagraphs``: ``torch.compile(mode="reduce-overhead")`` (CUDA graph trees).
- ``memory_snapshot``: the caching allocator's history (``snapshot.pickle``, with an OOM)
  beside a trace with memory events of the same steps.
"""

from __future__ import annotations

import argparse
import contextlib
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.nn.functional as F
from kinetoscope.handlers import tensorboard_trace_handler
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

WORKER = "gpu0"
ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


@contextmanager
def profiled(run_dir: Path, steps: int, **options: bool) -> Iterator[Callable[[], None]]:
    """A profiler over `steps` active steps after one wait and one warm-up step."""
    with profile(
        activities=ACTIVITIES,
        schedule=schedule(wait=1, warmup=1, active=steps, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(run_dir), worker_name=WORKER),
        **options,
    ) as prof:
        yield prof.step


class Block(nn.Module):
    """A pre-norm transformer block, small enough for a trace under 1 MB."""

    def __init__(self, dim: int = 512, heads: int = 8, causal: bool = True) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 4096, dim: int = 512) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.block = Block(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.embed(tokens)))


def gemm_bf16(run_dir: Path) -> None:
    dev, bf16 = "cuda", torch.bfloat16
    a, b = (
        torch.randn(1024, 2048, device=dev, dtype=bf16),
        torch.randn(2048, 512, device=dev, dtype=bf16),
    )
    bias = torch.randn(512, device=dev, dtype=bf16)
    ba, bb = (
        torch.randn(8, 256, 128, device=dev, dtype=bf16),
        torch.randn(8, 128, 64, device=dev, dtype=bf16),
    )
    bc = torch.randn(8, 256, 64, device=dev, dtype=bf16)
    lin = nn.Linear(2048, 1024, device=dev, dtype=bf16)
    conv = nn.Conv2d(64, 128, 3, padding=1, device=dev, dtype=bf16).to(
        memory_format=torch.channels_last
    )
    img = torch.randn(16, 64, 32, 32, device=dev, dtype=bf16).to(memory_format=torch.channels_last)
    with profiled(
        run_dir, 2, record_shapes=True, with_flops=True, profile_memory=True, with_stack=True
    ) as step:
        for _ in range(4):
            torch.mm(a, b)
            torch.addmm(bias, a, b)
            torch.bmm(ba, bb)
            torch.baddbmm(bc, ba, bb)
            torch.matmul(a, b)
            lin(a)
            conv(img.requires_grad_()).sum().backward()
            scaled_mm_fp8(dev)
            torch.cuda.synchronize()
            step()


def scaled_mm_fp8(dev: str) -> None:
    if torch.cuda.get_device_capability() < (8, 9):
        return
    x = torch.randn(256, 512, device=dev).to(torch.float8_e4m3fn)
    w = torch.randn(256, 512, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device=dev)
    torch._scaled_mm(x, w, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def attention(run_dir: Path) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    model = TinyLM().cuda().to(torch.bfloat16)
    tokens = torch.randint(0, 4096, (4, 256), device="cuda")
    q = torch.randn(4, 8, 256, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    with profiled(
        run_dir, 2, record_shapes=True, with_flops=True, with_stack=True, with_modules=True
    ) as step:
        for _ in range(4):
            model(tokens).float().logsumexp(-1).mean().backward()
            with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
                F.scaled_dot_product_attention(q, q, q, is_causal=False).sum().backward()
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
            torch.softmax(q, -1)
            torch.cuda.synchronize()
            step()


def enable_compile_metadata() -> None:
    # Stack traces of the model code on the events of compiled graphs (torch 2.10+).
    import torch.fx.experimental._config as fx_config

    fx_config.enrich_profiler_metadata = True


def compiled(run_dir: Path) -> None:
    enable_compile_metadata()
    model = TinyLM().cuda().to(torch.bfloat16)
    fast = torch.compile(model)
    tokens = torch.randint(0, 4096, (4, 256), device="cuda")
    for _ in range(2):  # compile before profiling
        fast(tokens).float().mean().backward()
    with profiled(run_dir, 2, record_shapes=True, with_stack=True, with_modules=True) as step:
        for _ in range(4):
            fast(tokens).float().mean().backward()
            torch.cuda.synchronize()
            step()


def compiled_enriched(run_dir: Path) -> None:
    """A compiled model's trace after torch's own post-pass that adds the model's stack
    traces (``map_recorded_events_to_aten_ops_with_stack_trace``), as a user would run it."""
    import gzip
    import json
    import tempfile

    from torch.profiler import _utils as profiler_utils

    enable_compile_metadata()
    model = TinyLM().cuda().to(torch.bfloat16)
    fast = torch.compile(model)
    tokens = torch.randint(0, 4096, (4, 256), device="cuda")
    for _ in range(2):
        fast(tokens).float().mean().backward()
    with profile(
        activities=ACTIVITIES, record_shapes=True, with_stack=True, with_modules=True
    ) as prof:
        fast(tokens).float().mean().backward()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.json"
        prof.export_chrome_trace(str(raw))
        data = json.loads(raw.read_text())
    enrich = getattr(profiler_utils, "map_recorded_events_to_aten_ops_with_stack_trace", None)
    data["kinetoscope_recorder"] = {"enriched": enrich is not None}
    if enrich is not None:
        enrich(data)
    run_dir.mkdir(parents=True, exist_ok=True)
    with gzip.open(run_dir / f"{WORKER}.1.pt.trace.json.gz", "wt") as out:
        json.dump(data, out)


def make_graph(model: nn.Module, batch: int) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
    static_in = torch.randint(0, 4096, (batch, 64), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(2):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        model(static_in)
    return graph, static_in


def cudagraph_replay(run_dir: Path) -> None:
    model = TinyLM().cuda().to(torch.bfloat16).eval()
    capture_dir = run_dir / "capture_traces"
    with profile(
        activities=ACTIVITIES,
        record_shapes=True,
        with_stack=True,
        with_modules=True,
        on_trace_ready=tensorboard_trace_handler(str(capture_dir), worker_name=WORKER),
    ):
        graphs = [make_graph(model, batch) for batch in (4, 8)]
    with profiled(run_dir, 2, record_shapes=True, with_stack=True) as step:
        for _ in range(4):
            for graph, _ in graphs:
                graph.replay()
            graphs[0][0].replay()
            torch.cuda.synchronize()
            step()


def cudagraph_self(run_dir: Path) -> None:
    model = TinyLM().cuda().to(torch.bfloat16).eval()
    with profile(
        activities=ACTIVITIES,
        record_shapes=True,
        with_stack=True,
        with_modules=True,
        on_trace_ready=tensorboard_trace_handler(str(run_dir), worker_name=WORKER),
    ):
        graph, _ = make_graph(model, 4)
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()


def compiled_cudagraphs(run_dir: Path) -> None:
    enable_compile_metadata()
    model = TinyLM().cuda().to(torch.bfloat16).eval()
    fast = torch.compile(model, mode="reduce-overhead")
    tokens = torch.randint(0, 4096, (4, 128), device="cuda")
    with torch.no_grad():
        for _ in range(4):
            fast(tokens)
        with profiled(run_dir, 2, record_shapes=True, with_stack=True) as step:
            for _ in range(4):
                fast(tokens)
                torch.cuda.synchronize()
                step()


def memory_snapshot(run_dir: Path) -> None:
    enable_compile_metadata()
    torch.cuda.memory._record_memory_history(max_entries=4000, stacks="python")
    model = torch.compile(TinyLM().cuda())
    opt = torch.optim.AdamW(model.parameters())
    tokens = torch.randint(0, 4096, (4, 128), device="cuda")
    with profiled(run_dir, 2, profile_memory=True, record_shapes=True, with_stack=True) as step:
        for _ in range(4):
            model(tokens).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            step()
    with contextlib.suppress(torch.OutOfMemoryError):  # 32 TiB: an OOM in the history
        torch.empty(1 << 45, dtype=torch.uint8, device="cuda")
    torch.cuda.memory._dump_snapshot(str(run_dir / "snapshot.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)


RECORDINGS: dict[str, Callable[[Path], None]] = {
    "gemm_bf16": gemm_bf16,
    "attention": attention,
    "compiled": compiled,
    "compiled_enriched": compiled_enriched,
    "cudagraph_replay": cudagraph_replay,
    "cudagraph_self": cudagraph_self,
    "compiled_cudagraphs": compiled_cudagraphs,
    "memory_snapshot": memory_snapshot,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", required=True, type=Path)
    parser.add_argument("--only", nargs="*", choices=sorted(RECORDINGS))
    args = parser.parse_args()
    torch.manual_seed(0)
    for name in args.only or RECORDINGS:
        try:
            RECORDINGS[name](args.logdir / name)
            print(f"recorded {name}", flush=True)
        except Exception:  # one recording failing must not lose the others
            print(f"FAILED {name}", flush=True)
            traceback.print_exc()


if __name__ == "__main__":
    main()
