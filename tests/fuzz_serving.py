"""Fuzzer of the serving view (`analysis.serving`) from the trace on: real and built
serving traces (vLLM V1 with and without annotations, CUDA and ROCm names, SGLang, tensor
parallel) cut to windows and mutated where iteration finding and phase rules are most
likely wrong (tests/fuzz_serving_mutations.py).

Property, for every input: the load gives a model or a clear `TraceDecodeError`; the view
gives a page or a `TooLarge`, never another exception, within SLOW_SECONDS; its numbers
are finite and agree with each other (an iteration's GPU busy time within its GPU span,
graph-replayed kernel time within its kernel time, a phase the view names, the page within
the count); its JSON stays in proportion to the input.

By hand, the long budget (findings land in --out as <kind>-<sha1>.json with a .txt):

    python tests/fuzz_serving.py --minutes 30 [--out fuzz-findings] [--seed N]

The test command runs a few seconds of it in a child process (tests/test_property_fuzz.py).
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import msgspec
from fuzz_property import Finding, run_property_fuzzer
from fuzz_serving_mutations import Mutator
from kinetoscope.analysis.serving.view import serving_view
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.text_blocks import TraceDecodeError
from kinetoscope.model.errors import TooLarge

SLOW_SECONDS = 5.0
ANSWER_FLOOR, ANSWER_PER_BYTE = 200_000, 4
PHASES = {"prefill", "decode", "mixed", "idle", "unknown"}
SLACK_US = 0.01


def check(data: bytes, folder: Path) -> tuple[str, Finding | None]:
    """What the input gave ("view", "no_iterations" or an error kind), and (finding kind,
    detail) or None when it met the property."""
    path = folder / "input.pt.trace.json"
    path.write_bytes(data)
    started = time.monotonic()
    try:
        model = build_model(str(path))
        view = serving_view(model, {"offset": 0, "limit": 50})
    except (TraceDecodeError, TooLarge) as exc:
        return getattr(exc, "kind", "too_large"), None
    except Exception:  # noqa: BLE001 - what the property rules out
        return "raised", ("raised", traceback.format_exc())
    elapsed = time.monotonic() - started
    if elapsed > SLOW_SECONDS:
        return "slow", ("slow", f"{elapsed:.2f} s")
    answer = msgspec.json.encode(view)
    if len(answer) > ANSWER_FLOOR + ANSWER_PER_BYTE * len(data):
        return "view", ("big-answer", f"{len(answer)} bytes of answer from {len(data)}")
    wrong = disagreements(view)
    if wrong:
        return "view", ("inconsistent", "; ".join(wrong[:5]))
    return ("view" if view["iteration_count"] else "no_iterations"), None


def disagreements(view: dict[str, Any]) -> list[str]:
    """What in the view contradicts itself or is not a number."""
    out = [f"not finite: {path}" for path in _not_finite(view, "view")]
    shown = view["iterations"]
    if len(shown) > min(view["limit"], max(0, view["iteration_count"] - view["offset"])):
        out.append(f"{len(shown)} iterations shown of {view['iteration_count']}")
    for it in shown:
        where = f"iteration {it['index']}"
        if it["phase"] not in PHASES:
            out.append(f"{where}: phase {it['phase']!r}")
        if it["dur_us"] + SLACK_US < it["host_dur_us"] or it["host_dur_us"] < 0:
            out.append(f"{where}: dur {it['dur_us']} < host {it['host_dur_us']}")
        if it["gpu_start_us"] is not None and it["gpu_end_us"] is not None:
            span = it["gpu_end_us"] - it["gpu_start_us"]
            if it["gpu_busy_us"] > span + SLACK_US:
                out.append(f"{where}: busy {it['gpu_busy_us']} > GPU span {span}")
        if it["graph_replayed_us"] > it["kernel_us"] + SLACK_US:
            out.append(f"{where}: replayed {it['graph_replayed_us']} > kernels {it['kernel_us']}")
        pct = it["graph_replayed_pct"]
        if pct is not None and not -SLACK_US <= pct <= 100 + SLACK_US:
            out.append(f"{where}: replayed {pct} %")
    counted = sum(stats["count"] for stats in view["phases"].values())
    if counted != view["iteration_count"]:
        out.append(f"phases count {counted} of {view['iteration_count']} iterations")
    return out


def _not_finite(value: Any, path: str) -> list[str]:
    if isinstance(value, float):
        return [] if math.isfinite(value) else [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _not_finite(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _not_finite(v, f"{path}[{i}]")]
    return []


def main(argv: list[str] | None = None) -> int:
    return run_property_fuzzer(__doc__ or "", lambda rng: Mutator(rng).input, check, ".json", argv)


if __name__ == "__main__":
    sys.exit(main())
