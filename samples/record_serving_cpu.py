"""Record small real CPU traces of a serving loop for kinetoscope's test data.

    python samples/record_serving_cpu.py --out tests/data/serving

A tiny decoder LM (embedding, two attention + MLP blocks, LM head) served the way an
engine schedules it: a prefill iteration, decode iterations (one token per running
request), a mixed one (a new prompt beside the running decodes), more decodes. The engine
code runs under the file names vLLM's and SGLang's code has (compiled from a string with
that name, so the Python frames read `vllm/v1/worker/gpu_model_runner.py(N):
execute_model`, not a path of this machine). Writes:

- ``vllm/engine.pt.trace.json.gz``: each iteration in vLLM's iteration annotation
  ``execute_context_{R}({T})_generation_{R}({T})`` around ``execute_model``
  (``with_stack``, ``record_shapes``);
- ``sglang_frames/engine.pt.trace.json.gz``: the same schedule with no annotation, only
  SGLang's frames (``tp_worker.py: forward_batch_generation`` around the model runner's
  ``forward_extend`` / ``forward_decode``);
- ``tp2/rank{0,1}.pt.trace.json.gz``: two gloo ranks serving the schedule tensor-parallel
  (each MLP's output all-reduced), SGLang's ``step[MODE bs=B ...]`` annotations.

The schedule (`SCHEDULE`) is what the tests check the view against.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import torch
import torch.distributed as dist
from torch import nn

# (context requests, context tokens, generation requests): one entry per iteration.
SCHEDULE = [(2, 40, 0), (0, 0, 2), (0, 0, 2), (0, 0, 2), (1, 12, 2), (0, 0, 3), (0, 0, 3)]
GAP_S = 0.003  # the scheduler's time between iterations

VLLM_RUNNER = """
def execute_model(model, tokens):
    with torch.no_grad():
        return model(tokens)
"""
SGLANG_RUNNER = """
def forward_extend(model, tokens):
    with torch.no_grad():
        return model(tokens)


def forward_decode(model, tokens):
    with torch.no_grad():
        return model(tokens)
"""
SGLANG_WORKER = """
def forward_batch_generation(runner, model, tokens, decode):
    if decode:
        return runner["forward_decode"](model, tokens)
    return runner["forward_extend"](model, tokens)
"""


def _code(source: str, filename: str) -> dict[str, Any]:
    """Functions whose frames carry `filename` (the engine's path), not this file's."""
    namespace: dict[str, Any] = {"torch": torch}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


class Block(nn.Module):
    def __init__(self, width: int, tp: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.up = nn.Linear(width, 4 * width // tp)
        self.down = nn.Linear(4 * width // tp, width)
        self.tp = tp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        x = x + nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = self.down(nn.functional.gelu(self.up(x)))
        if self.tp > 1:
            dist.all_reduce(h)  # the row-parallel MLP's partial sums
        return x + h


class TinyLM(nn.Module):
    def __init__(self, tp: int = 1, width: int = 64, vocab: int = 512) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([Block(width, tp) for _ in range(2)])
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)[None]
        for block in self.blocks:
            x = block(x)
        return self.head(x[:, -1])


def _tokens(context_tokens: int, generation_requests: int) -> torch.Tensor:
    return torch.randint(0, 512, (context_tokens + generation_requests,))


def _serve(step: Callable[[int, int, int, torch.Tensor], None]) -> None:
    for cr, ct, gr in SCHEDULE:
        step(cr, ct, gr, _tokens(ct, gr))
        time.sleep(GAP_S)


def _profiled(path: Path, run: Callable[[], None]) -> None:
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, record_shapes=True, with_stack=True) as prof:
        run()
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = path.with_suffix("")  # x.pt.trace.json
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as src, gzip.open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()


def record_vllm(out: Path) -> None:
    model = TinyLM()
    runner = _code(VLLM_RUNNER, "vllm/v1/worker/gpu_model_runner.py")

    def step(cr: int, ct: int, gr: int, tokens: torch.Tensor) -> None:
        name = f"execute_context_{cr}({ct})_generation_{gr}({gr})"
        with torch.profiler.record_function(name):
            runner["execute_model"](model, tokens)

    _serve(step)  # warm-up, not profiled
    _profiled(out / "vllm" / "engine.pt.trace.json.gz", lambda: _serve(step))


def record_sglang_frames(out: Path) -> None:
    model = TinyLM()
    runner = _code(SGLANG_RUNNER, "sglang/srt/model_executor/model_runner.py")
    worker = _code(SGLANG_WORKER, "sglang/srt/managers/tp_worker.py")

    def step(cr: int, ct: int, gr: int, tokens: torch.Tensor) -> None:
        # SGLang runs a mixed batch as an extend (forward_extend).
        worker["forward_batch_generation"](runner, model, tokens, cr == 0)

    _serve(step)
    _profiled(out / "sglang_frames" / "engine.pt.trace.json.gz", lambda: _serve(step))


def _sglang_step_name(cr: int, ct: int, gr: int) -> str:
    if cr == 0:
        return f"step[DECODE bs={gr}]"
    if gr == 0:
        return f"step[EXTEND bs={cr} toks={ct}]"
    return f"step[MIXED bs={cr + gr} c={cr} g={gr} c_sq={ct} g_sq={gr}]"


def _tp_rank(rank: int, port: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = TinyLM(tp=2)

    def step(cr: int, ct: int, gr: int, tokens: torch.Tensor) -> None:
        with torch.profiler.record_function(_sglang_step_name(cr, ct, gr)), torch.no_grad():
            model(tokens)

    _serve(step)
    _profiled(Path(out) / "tp2" / f"rank{rank}.pt.trace.json.gz", lambda: _serve(step))
    dist.destroy_process_group()


def record_tp(out: Path) -> None:
    import torch.multiprocessing as mp

    torch.manual_seed(0)
    mp.spawn(_tp_rank, args=(29611, str(out)), nprocs=2, join=True)
    for rank in range(2):  # the header states the rank, as torch's handler writes it
        path = out / "tp2" / f"rank{rank}.pt.trace.json.gz"
        doc = json.loads(gzip.decompress(path.read_bytes()))
        doc.setdefault("distributedInfo", {"backend": "gloo", "rank": rank, "world_size": 2})
        path.write_bytes(gzip.compress(json.dumps(doc).encode()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("tests/data/serving"))
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    record_vllm(args.out)
    record_sglang_frames(args.out)
    record_tp(args.out)
    for path in sorted(args.out.rglob("*.gz")):
        print(path, path.stat().st_size)


if __name__ == "__main__":
    main()
