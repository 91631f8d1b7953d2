"""Serving iterations recomputed from a raw trace, without kinetoscope: where each
iteration starts and ends, its phase, tokens and GPU busy time, and per phase the count
and median / p90 of the iteration times.

Method (written from docs/http_api.md's `serving` section, not from the product's code):

- markers: `user_annotation` / `cpu_op` X events named like vLLM's
  `execute_context_R(T)_generation_R(T)`, its detailed
  `execute_T_context_R(sq…)_generation_R(sq…)`, `execute_new_N_cached_M`, or SGLang's
  `step[MODE bs=B …]`; on one (pid, tid), a marker inside an earlier one that ends no
  earlier belongs to it (the outer one is the iteration; the inner ones fill counts the
  outer lacks);
- no marker: `python_function` frames ending in `…/vllm/…worker…/x.py(N): execute_model`
  or `…/sglang/srt/managers/tp_worker.py(N): forward_batch_generation`, outermost per
  thread (SGLang's phase from the `model_runner.py(N): forward_decode|extend|…` frames
  inside);
- phase from counts: context requests only prefill, generation only decode, both mixed,
  none idle (SGLang modes: EXTEND prefill, DECODE decode, MIXED mixed, IDLE idle);
- GPU work of an iteration: kernel / gpu_memcpy / gpu_memset events whose runtime or
  driver call (same `correlation`) starts, on the marker's thread, inside the marker;
  busy = the length of the union of those events; end = max(marker end, last GPU end);
- p90: linear interpolation between the sorted values (rank 0.9 × (n - 1));
- an iteration the markers give no phase (frames without SGLang's forward frames) takes
  one from its work, by other means than the product's rules: no GPU event, idle; else
  the leading dims of its ops' first input tensors (rank 2 or more: `Input Dims`; the
  activation, weights come after it): the largest equal to the smallest is decode, at
  least twice it prefill; else its kernels' time
  launched by graph launch calls (`cudaGraphLaunch` / `hipGraphLaunch`) at least half of
  its kernel time is decode; else, among such iterations, an eager one with at least
  twice their median kernel time is prefill; else kernel names (decode:
  `paged_attention_v1/v2`, `flash_fwd_splitkv`, `BatchDecodeWith`; prefill:
  `BatchPrefillWith`, `FmhaBatchPrefill`, Triton's `_fwd_kernel`), else unknown; its
  tokens then the most leading dim of a prefill, the fewest of a decode (one a request).

All times in integer nanoseconds (`raw.ns`); the result in µs.
"""

from __future__ import annotations

import gzip
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .raw import ns, read_raw

CONTEXT_GENERATION = re.compile(r"^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)$")
DETAILED = re.compile(r"^execute_(\d+)_context_(\d+)\(sq(\d+)[^)]*\)_generation_(\d+)\(sq(\d+)")
NEW_CACHED = re.compile(r"^execute_new_(\d+)_cached_(\d+)$")
STEP = re.compile(r"^step\[([A-Z_]+)((?: [a-z_]+=\d+)*)\]$")
VLLM_FRAME = re.compile(r"/?vllm/.*worker[^/]*/[^/]+\.py\(\d+\): execute_model$")
SGLANG_FRAME = re.compile(r"sglang/srt/managers/tp_worker\.py\(\d+\): forward_batch_generation$")
SGLANG_FORWARD = re.compile(r"sglang/srt/model_executor/model_runner\.py\(\d+\): forward_(\w+)$")
MODES = {"EXTEND": "prefill", "DECODE": "decode", "MIXED": "mixed", "IDLE": "idle"}
FORWARDS = {"extend": "prefill", "split_prefill": "prefill", "decode": "decode", "idle": "idle"}
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


@dataclass
class It:
    thread: tuple[Any, Any]
    start: int
    end: int
    phase: str | None = None
    tokens: int | None = None
    gpu: list[tuple[int, int]] = field(default_factory=list)
    kernels: list[tuple[str, int, bool]] = field(default_factory=list)  # name, ns, graph
    leading_dims: list[int] = field(default_factory=list)


def _counts(name: str) -> tuple[str | None, int | None]:
    """(phase, tokens) a marker name says."""
    m = CONTEXT_GENERATION.match(name)
    if m:
        cr, ct, gr, gt = map(int, m.groups())
        return _phase(cr, gr), ct + gt
    m = DETAILED.match(name)
    if m:
        return _phase(int(m[2]), int(m[4])), int(m[1])
    m = NEW_CACHED.match(name)
    if m:
        return _phase(int(m[1]), int(m[2])), None
    m = STEP.match(name)
    if m:
        fields = dict(f.split("=") for f in m[2].split())
        phase = MODES.get(m[1], "unknown")
        if phase == "prefill":
            return phase, int(fields["toks"]) if "toks" in fields else None
        if phase == "decode":
            return phase, int(fields.get("g_sq", fields["bs"]))
        if phase == "mixed" and "c_sq" in fields:
            return phase, int(fields["c_sq"]) + int(fields["g_sq"])
        return phase, 0 if phase == "idle" else None
    return None, None


def _phase(context: int, generation: int) -> str:
    if context and generation:
        return "mixed"
    return "prefill" if context else ("decode" if generation else "idle")


def _outermost(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Per thread, each outermost event with the events inside it."""
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    by_thread: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for e in events:
        by_thread.setdefault((str(e["pid"]), str(e["tid"])), []).append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (ns(e["ts"]), -ns(e.get("dur", 0))))
        reach = None
        for e in evs:
            end = ns(e["ts"]) + ns(e.get("dur", 0))
            if reach is not None and end <= reach:
                out[-1][1].append(e)
                continue
            out.append((e, []))
            reach = end if reach is None else max(reach, end)
    return out


def iterations(path: str | Path) -> list[It]:
    raw = read_raw(path)
    host = raw.complete("user_annotation", "cpu_op")
    marked = [e for e in host if _counts(e["name"])[0] is not None]
    found: list[It] = []
    for outer, inner in _outermost(marked):
        it = _it(outer)
        for e in [outer, *inner]:
            phase, tokens = _counts(e["name"])
            it.phase = it.phase or phase
            it.tokens = it.tokens if it.tokens is not None else tokens
        found.append(it)
    if not found:
        found = _from_frames(raw.complete("python_function"))
    found.sort(key=lambda it: it.start)
    _attach_gpu(raw.events, found)
    if any(it.phase is None for it in found):
        _attach_dims(raw.complete("cpu_op"), found)
        _work_phases(found)
    return found


def _it(e: dict[str, Any]) -> It:
    start = ns(e["ts"])
    return It((str(e["pid"]), str(e["tid"])), start, start + ns(e.get("dur", 0)))


def _from_frames(frames: list[dict[str, Any]]) -> list[It]:
    marked = [e for e in frames if VLLM_FRAME.search(e["name"]) or SGLANG_FRAME.search(e["name"])]
    out = []
    forwards = [e for e in frames if SGLANG_FORWARD.search(e["name"])]
    for outer, _ in _outermost(marked):
        it = _it(outer)
        seen = {
            FORWARDS.get(SGLANG_FORWARD.search(f["name"])[1], "unknown")  # type: ignore[index]
            for f in forwards
            if it.start <= ns(f["ts"]) <= it.end
        }
        it.phase = (seen.pop() if len(seen) == 1 else "mixed") if seen else None
        out.append(it)
    return out


def _attach_gpu(events: list[dict[str, Any]], found: list[It]) -> None:
    calls = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver", "runtime"):
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None and corr not in calls:
                calls[corr] = e
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in GPU_CATS:
            continue
        call = calls.get((e.get("args") or {}).get("correlation"))
        if call is None:
            continue
        t, thread = ns(call["ts"]), (str(call["pid"]), str(call["tid"]))
        for it in found:
            if it.thread == thread and it.start <= t <= it.end:
                it.gpu.append((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))))
                if e.get("cat") == "kernel":
                    graph = "GraphLaunch" in str(call.get("name", ""))
                    it.kernels.append((str(e.get("name", "")), ns(e.get("dur", 0)), graph))
                break


def _attach_dims(ops: list[dict[str, Any]], found: list[It]) -> None:
    for e in ops:
        dims = (e.get("args") or {}).get("Input Dims")
        if not isinstance(dims, list):
            continue
        t, thread = ns(e["ts"]), (str(e["pid"]), str(e["tid"]))
        for it in found:
            if it.thread == thread and it.start <= t <= it.end:
                first = dims[0] if dims else None  # the activation: weights come after it
                if isinstance(first, list) and len(first) >= 2 and first[0] > 0:
                    it.leading_dims.append(first[0])
                break


DECODE_NAMES = ("paged_attention_v1", "paged_attention_v2", "flash_fwd_splitkv", "batchdecodewith")
PREFILL_NAMES = ("batchprefillwith", "fmhabatchprefill")


def _work_phases(found: list[It]) -> None:
    replayed = [it for it in found if _graph_share(it) >= 0.5]
    totals = sorted(sum(d for _, d, _ in it.kernels) for it in replayed)
    reference = _rank(totals, 0.5) if totals else None
    for it in found:
        if it.phase is None:
            it.phase = _work_phase(it, reference)
            if it.leading_dims and it.phase in ("prefill", "decode"):
                # tokens: the most rows (a decode's: one a request, its fewest rows)
                dims = it.leading_dims
                it.tokens = max(dims) if it.phase == "prefill" else min(dims)


def _graph_share(it: It) -> float:
    total = sum(d for _, d, _ in it.kernels)
    return sum(d for _, d, g in it.kernels if g) / total if total else 0.0


def _work_phase(it: It, reference: float | None) -> str:
    if not it.gpu:
        return "idle"
    if it.leading_dims:
        most, least = max(it.leading_dims), min(it.leading_dims)
        if most == least:
            return "decode"
        if most >= 2 * least:
            return "prefill"
    if _graph_share(it) >= 0.5:
        return "decode"
    if reference and sum(d for _, d, _ in it.kernels) >= 2 * reference:
        return "prefill"
    names = [n.lower() for n, _, _ in it.kernels]
    decode = any(k in n for n in names for k in DECODE_NAMES)
    prefill = any(k in n for n in names for k in PREFILL_NAMES) or "_fwd_kernel" in [
        n.split("_0d")[0] for n in names
    ]
    if decode and prefill:
        return "mixed"
    return "decode" if decode else ("prefill" if prefill else "unknown")


def busy(intervals: list[tuple[int, int]]) -> int:
    total, reach = 0, None
    for s, e in sorted(intervals):
        if reach is None or s >= reach:
            total += e - s
            reach = e
        elif e > reach:
            total += e - reach
            reach = e
    return total


# Every marker's name holds one of these: a file whose text has none has no iteration,
# and is not parsed (the corpus's 148 MB CPU trace costs seconds to parse).
NEEDLES = (b"execute_", b"step[", b"forward_batch_generation")


def may_have_markers(path: str | Path) -> bool:
    opener: Any = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        text = f.read()
    return any(needle in text for needle in NEEDLES)


def summary(path: str | Path) -> dict[str, Any]:
    """Per iteration (start, dur, phase, tokens, busy) in µs, and per phase the count,
    median and p90 of dur_us."""
    rows = []
    for it in iterations(path) if may_have_markers(path) else []:
        end = max([it.end, *(e for _, e in it.gpu)])
        rows.append(
            {
                "start_us": it.start / 1000,
                "dur_us": (end - it.start) / 1000,
                "phase": it.phase or "unknown",
                "tokens": it.tokens,
                "gpu_busy_us": busy(it.gpu) / 1000,
            }
        )
    phases: dict[str, dict[str, float]] = {}
    for phase in sorted({r["phase"] for r in rows}):
        durs = sorted(r["dur_us"] for r in rows if r["phase"] == phase)
        phases[phase] = {"count": len(durs), "median": _rank(durs, 0.5), "p90": _rank(durs, 0.9)}
    return {"iterations": rows, "phases": phases}


def _rank(values: list[float], q: float) -> float:
    at = q * (len(values) - 1)
    lo = int(at)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (at - lo)


if __name__ == "__main__":
    import json

    for arg in sys.argv[1:]:
        print(arg, json.dumps(summary(arg), indent=1))
