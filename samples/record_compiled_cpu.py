"""Record small real CPU traces of a `torch.compile`d model for kinetoscope's test data.

    python samples/record_compiled_cpu.py --out tests/data/compiled_cpu

Inductor on CPU gives C++ kernels (`cpp_fused_*`) called from its Python wrapper inside
`## Call CompiledFxGraph … ##` regions. Writes, with `with_stack` and `record_shapes`:

- ``plain.pt.trace.json``: the profiler's trace as exported;
- ``enriched.pt.trace.json``: the same steps with
  ``torch.fx.experimental._config.enrich_profiler_metadata`` on, after torch's
  ``map_recorded_events_to_aten_ops_with_stack_trace`` post-pass (model stack traces on
  the events, where this torch version adds them);
- ``inductor_code/``: the generated files the trace names (kernels and wrappers).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(64)
        self.up = nn.Linear(64, 128)
        self.down = nn.Linear(128, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = torch.nn.functional.gelu(self.up(h))
        return x + self.down(h) * 0.5


def _profile(fn, x: torch.Tensor, path: Path, post_pass: bool) -> None:
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, record_shapes=True, with_stack=True) as prof:
        for _ in range(2):
            fn(x)
    prof.export_chrome_trace(str(path))
    if post_pass:
        from torch.profiler import _utils

        mapper = getattr(_utils, "map_recorded_events_to_aten_ops_with_stack_trace", None)
        if mapper is not None:
            data = json.loads(path.read_text())
            mapper(data)
            path.write_text(json.dumps(data))
    with open(path, "rb") as src, gzip.open(f"{path}.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="ind"))
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    torch.manual_seed(0)
    model = Block()
    x = torch.randn(4, 16, 64)
    fast = torch.compile(model)
    for _ in range(2):
        fast(x)
    _profile(fast, x, args.out / "plain.pt.trace.json", post_pass=False)
    from torch.fx.experimental import _config as fx_config

    fx_config.enrich_profiler_metadata = True
    torch._dynamo.reset()
    fast = torch.compile(model)
    for _ in range(2):
        fast(x)
    _profile(fast, x, args.out / "enriched.pt.trace.json", post_pass=True)
    code = args.out / "inductor_code"
    code.mkdir(exist_ok=True)
    for f in cache.rglob("*.py"):
        if f.stem.startswith("c") and len(f.stem) > 40:
            shutil.copy(f, code / f.name)


if __name__ == "__main__":
    main()
