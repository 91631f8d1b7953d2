"""Inputs for the serving fuzzer: real and built serving traces as seeds, windows of their
events, and mutations where iterations and phases are found: engine markers and Python
frames renamed, repeated, nested and cut; kernel names of the other phase or vendor;
times at the edges (zero, negative, huge, not numbers); op shapes of the wrong type;
launches and kernels parted (correlation ids shared or dropped); GPU work moved to the
host's process and back; the header's rank facts damaged."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from serving_v1_jobs import CUDA, ROCM, vllm_v1_trace

TESTS = Path(__file__).resolve().parent
WINDOW_MAX = 4000  # events of a seed in one input: a few iterations, quick to load
REPEAT_MAX = 3000

# fmt: off
NAMES = [
    "execute_context_0(0)_generation_4(4)", "execute_context_2(2048)_generation_0(0)",
    "execute_context_-1(-5)_generation_99999999999999999999(1)", "execute_context_x(y)",
    "vllm/v1/worker/gpu_model_runner.py(1344): execute_model",
    "vllm/v1/worker/gpu_worker.py(212): execute_model",
    "sglang/srt/managers/tp_worker.py(445): forward_batch_generation",
    "xfuser/model_executor/pipelines.py(10): forward", "capture_8_PIECEWISE", "capture__FULL",
    "cudaGraphLaunch", "hipGraphLaunch", "cudaLaunchKernel", "hipExtModuleLaunchKernel",
    "void vllm::paged_attention_v2_kernel<float, float, 128, 16, 128, true, 512>(float*)",
    "void flashinfer::BatchPrefillWithPagedKVCacheKernel<1u, true>(flashinfer::paged_kv_t)",
    "_fwd_kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)",
    "vllm::unified_attention_with_output", "aten::mm", "aten::linear", "", "\u0000", "\ud7ff",
    CUDA.gemm, ROCM.gemm, CUDA.attention, ROCM.attention, "sgl_kernel::rmsnorm",
]
NUMBERS: list[Any] = [
    0, -1, 1, 0.5, 1e-9, 1e15, -1e15, 1.7976931348623157e308, 2**63, -(2**63), "NaN", "12",
    None, True, [], {},
]
SHAPES: list[Any] = [
    [[]], [[1e30]], [[-1, 4096]], [[2**62, 2**62]], "x", [["a"]], [[1, 2], 3], None,
    [[0, 0]], [[32, 1000, 4096], [4096, 6144]], [[1] * 64],
]
# fmt: on


def _events_of(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)  # type: ignore[no-any-return]


def seeds() -> list[dict[str, Any]]:
    """The serving traces of tests/data and the built vLLM V1 ones (both vendors, with
    and without op shapes), as documents."""
    out = [_events_of(p) for p in sorted((TESTS / "data" / "serving").glob("*/*.json*"))]
    for vendor in (CUDA, ROCM):
        for shapes in (True, False):
            built = vllm_v1_trace(vendor, shapes)
            out.append({**built.header, "traceEvents": list(built.events)})
    return out


class Mutator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seeds = seeds()
        self.mutations: list[Callable[[list[dict[str, Any]]], None]] = [
            self.drop,
            self.repeat,
            self.rename,
            self.retime,
            self.reshape,
            self.part,
            self.rehome,
            self.reorder,
            self.rephase,
        ]

    def input(self) -> bytes:
        """One trace: a window of a seed's events (its metadata kept), mutated one to four
        times, as JSON."""
        rng = self.rng
        doc = rng.choice(self.seeds)
        events = doc["traceEvents"]
        meta = [e for e in events if e.get("ph") == "M"]
        rest = [e for e in events if e.get("ph") != "M"]
        start = rng.randrange(max(1, len(rest) - WINDOW_MAX))
        window = [dict(e) for e in rest[start : start + rng.randint(1, WINDOW_MAX)]]
        for _ in range(rng.randint(1, 4)):
            rng.choice(self.mutations)(window)
        header = {k: v for k, v in doc.items() if k != "traceEvents"}
        if rng.random() < 0.1:
            header["distributedInfo"] = {
                "rank": rng.choice(NUMBERS),
                "world_size": rng.choice(NUMBERS),
            }
        out = {**header, "traceEvents": meta + window}
        return json.dumps(out, allow_nan=True).encode()

    def _some(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not events:
            return []
        k = self.rng.randint(1, max(1, len(events) // 10))
        return self.rng.sample(events, min(k, len(events)))

    def drop(self, events: list[dict[str, Any]]) -> None:
        for e in self._some(events):
            events.remove(e)

    def repeat(self, events: list[dict[str, Any]]) -> None:
        """An event (a marker, most often) again and again, each a step later."""
        if not events:
            return
        base = self.rng.choice(events)
        step = self.rng.choice([0, 1, 10, 1000, -5])
        for i in range(self.rng.randint(1, REPEAT_MAX)):
            copy = dict(base)
            if isinstance(copy.get("ts"), (int, float)):
                copy["ts"] = copy["ts"] + i * step
            events.append(copy)

    def rename(self, events: list[dict[str, Any]]) -> None:
        for e in self._some(events):
            e["name"] = self.rng.choice(NAMES)

    def retime(self, events: list[dict[str, Any]]) -> None:
        for e in self._some(events):
            e[self.rng.choice(["ts", "dur"])] = self.rng.choice(NUMBERS)

    def reshape(self, events: list[dict[str, Any]]) -> None:
        for e in self._some(events):
            args = e.setdefault("args", {}) if isinstance(e.get("args", {}), dict) else {}
            args["Input Dims"] = self.rng.choice(SHAPES)

    def part(self, events: list[dict[str, Any]]) -> None:
        """Launches and their kernels parted: one correlation id for many, or none."""
        shared = self.rng.choice([1, 0, -1, 2**40])
        for e in self._some(events):
            args = e.get("args")
            if isinstance(args, dict):
                if self.rng.random() < 0.5:
                    args["correlation"] = shared
                else:
                    args.pop("correlation", None)
                    args.pop("External id", None)

    def rehome(self, events: list[dict[str, Any]]) -> None:
        """Events moved to another process or thread (GPU work onto the host's)."""
        places = list({(e.get("pid"), e.get("tid")) for e in events[:200]})
        for e in self._some(events):
            e["pid"], e["tid"] = self.rng.choice(places or [(0, 0)])

    def reorder(self, events: list[dict[str, Any]]) -> None:
        self.rng.shuffle(events) if self.rng.random() < 0.5 else events.reverse()

    def rephase(self, events: list[dict[str, Any]]) -> None:
        for e in self._some(events):
            e["ph"] = self.rng.choice(["X", "B", "E", "i", "s", "f", "C", "b", "e", "X "])
