"""Logdirs of runs built at test time from one real corpus trace: the trace copied as N
runs (one worker each), one hour apart (`baseTimeNanoseconds`), named in an order that is
not their time order, every complete event's duration given seeded random noise, and
chosen slowdowns applied from a given run on: a set of kernel names slower, memory events'
sizes and levels larger."""

from __future__ import annotations

import copy
import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOUR_NS = 3600 * 10**9
Event = dict[str, Any]


@dataclass
class Slowdown:
    """From run `first` on, `scale` the events `applies` picks (durations, or memory)."""

    first: int
    scale: float
    applies: Callable[[Event], bool]
    memory: bool = False  # scale the memory event's Bytes and levels, not a duration


@dataclass
class TrendLogdir:
    root: Path
    names: list[str]  # run names in time order
    slowdowns: list[Slowdown] = field(default_factory=list)


def read_trace(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data if isinstance(data, dict) else {"traceEvents": data}


def kernel_named(names: set[str]) -> Callable[[Event], bool]:
    return lambda e: e.get("cat") == "kernel" and e.get("name") in names


def memory_event(e: Event) -> bool:
    return e.get("name") == "[memory]"


def _apply(event: Event, slowdowns: list[Slowdown], run: int) -> None:
    for slow in slowdowns:
        if run < slow.first or not slow.applies(event):
            continue
        if slow.memory:
            args = event.get("args", {})
            for key in ("Bytes", "Total Allocated", "Total Reserved"):
                if isinstance(args.get(key), (int, float)):
                    args[key] = int(args[key] * slow.scale)
        elif isinstance(event.get("dur"), (int, float)):
            event["dur"] = event["dur"] * slow.scale


def build_trend_logdir(
    source: Path, root: Path, runs: int, slowdowns: list[Slowdown], noise: float, seed: int
) -> TrendLogdir:
    """`runs` runs of `source` under `root` (see the module docstring); noise is the
    half-width of the uniform relative noise on every duration."""
    base = read_trace(source)
    rng = random.Random(seed)
    order = list(range(runs))
    rng.shuffle(order)  # run i is named night_{order[i]}: names sort out of time order
    names = [f"night_{order[i]:02d}" for i in range(runs)]
    for i, name in enumerate(names):
        trace = copy.deepcopy(base)
        start = trace.get("baseTimeNanoseconds")
        shift = i * HOUR_NS
        if isinstance(start, int):
            trace["baseTimeNanoseconds"] = start + shift
        for event in trace["traceEvents"]:
            if not isinstance(start, int) and isinstance(event.get("ts"), (int, float)):
                event["ts"] = event["ts"] + shift / 1000
            if isinstance(event.get("dur"), (int, float)) and event.get("ph") == "X":
                event["dur"] = event["dur"] * (1 + rng.uniform(-noise, noise))
            _apply(event, slowdowns, i)
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "worker0.pt.trace.json").write_text(json.dumps(trace), encoding="utf-8")
    return TrendLogdir(root, names, slowdowns)


BERT = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
BERT_GEMM = (
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>"
    "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)"
)


def browser_logdir(corpus: Path, root: Path) -> TrendLogdir:
    """The real-browser test's logdir (tests/e2e/trends.mjs): 7 runs of an H100 BERT
    trace, its biggest GEMM kernel 1.5× from run 3, every allocation 1.3× from run 4."""
    slowdowns = [
        Slowdown(3, 1.5, kernel_named({BERT_GEMM})),
        Slowdown(4, 1.3, memory_event, memory=True),
    ]
    return build_trend_logdir(corpus / BERT, root, 7, slowdowns, noise=0.02, seed=5)


if __name__ == "__main__":
    import sys

    built = browser_logdir(Path(sys.argv[1]), Path(sys.argv[2]))
    print(json.dumps({"names": built.names, "kernel": BERT_GEMM}))
