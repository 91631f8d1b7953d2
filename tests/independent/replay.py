"""CUDA/HIP graph replays attributed to their capture, recomputed from the raw JSON
(docs/architecture.md#graph-replays), without kinetoscope.

- A replayed kernel: a complete kernel event whose `correlation` arg is that of a
  graph-launch call (`cudaGraphLaunch`, `hipGraphLaunch`, `cuGraphLaunch`, any suffix) on
  the host. A replay: the kernels of one graph-launch call, by start time.
- A capture: per host thread, in time order, the kernel-launch calls between a
  `…StreamBeginCapture` and the next `…StreamEndCapture`, read from the trace itself and
  from the traces in a `capture_traces/` folder beside it. A captured call's op is the
  innermost `cpu_op` / `user_annotation` range of its thread that holds it (none for a
  `ProfilerStep#N`). What kernel it launched: its own `kernel`, `grid`, `block` args (HIP);
  a CUDA call has none, and this checker does not look for the warm-up (the product
  does): its kernel is unknown.
- Matching a replay: by `graph node id` when every kernel has one that exactly one
  captured call carries; else the captures are lined up with the replay's kernels at
  every offset: a capture of the same length fits when at least half the positions agree
  (a detail either side lacks agrees); a longer one where no position disagrees and at
  least half of its kernel names are known. The best: most agreeing positions, then the
  same length. Best fits naming different op sequences leave the replay unmatched; else
  the n-th replay of a kernel sequence takes the n-th best fit.

`replay_counts(path)` gives the replayed kernels, how many matched, and the matched
device time (µs) per capturing op name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .raw import RawTrace, read_raw

GRAPH_LAUNCH = re.compile(r"^(cuda|hip|cu)GraphLaunch(_.*)?$")
BEGIN = re.compile(r"^(cuda|hip|cu)StreamBeginCapture")
END = re.compile(r"^(cuda|hip|cu)StreamEndCapture")
KERNEL_LAUNCH = re.compile(
    r"^(cudaLaunchKernel|cudaLaunchKernelExC|cudaLaunchCooperativeKernel|cuLaunchKernel"
    r"|cuLaunchKernelEx|cuLaunchCooperativeKernel|hipLaunchKernel|hipExtLaunchKernel"
    r"|hipModuleLaunchKernel|hipExtModuleLaunchKernel|hipLaunchCooperativeKernel"
    r"|hipExtLaunchMultiKernelMultiDevice|hipModuleLaunchCooperativeKernel)(_.*)?$"
)
HOST_CALLS = ("cuda_runtime", "cuda_driver", "Runtime")
OP_CATS = ("cpu_op", "user_annotation", "Operator")
STEP = re.compile(r"^ProfilerStep#\d+$")

Key = tuple[Any, Any, Any]


@dataclass
class Captured:
    keys: list[Key]
    ops: list[str | None]
    node_ids: list[Any]


@dataclass
class ReplayCounts:
    kernels: int
    matched: int
    op_us: dict[str, float]  # matched replayed kernel time per capturing op name


def _dims(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else None


def _kernels(raw: RawTrace) -> list[dict[str, Any]]:
    return [e for e in raw.complete("kernel", "Kernel") if isinstance(e.get("args"), dict)]


def _innermost_op(ops: list[dict[str, Any]], call: dict[str, Any]) -> str | None:
    """The innermost op range of the call's thread holding the call (the shortest)."""
    start, end = float(call["ts"]), float(call["ts"]) + float(call.get("dur", 0))
    best: dict[str, Any] | None = None
    for op in ops:
        o_start, o_dur = float(op["ts"]), float(op.get("dur", 0))
        holds = o_start <= start and end <= o_start + o_dur
        if holds and (best is None or o_dur <= float(best.get("dur", 0))):
            best = op
    if best is None or STEP.match(best["name"]):
        return None
    return str(best["name"])


def captures_of(raw: RawTrace) -> list[Captured]:
    calls: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    ops: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for e in raw.complete(*HOST_CALLS):
        calls[(e.get("pid"), e.get("tid"))].append(e)
    for e in raw.complete(*OP_CATS):
        ops[(e.get("pid"), e.get("tid"))].append(e)
    out: list[Captured] = []
    for thread, thread_calls in sorted(calls.items(), key=lambda kv: str(kv[0])):
        inside: list[dict[str, Any]] | None = None
        for e in sorted(thread_calls, key=lambda e: float(e["ts"])):
            name = str(e.get("name", ""))
            if BEGIN.match(name):
                inside = []
            elif END.match(name) and inside is not None:
                if inside:
                    out.append(_captured(inside, ops[thread]))
                inside = None
            elif inside is not None and KERNEL_LAUNCH.match(name):
                inside.append(e)
    return out


def _captured(calls: list[dict[str, Any]], ops: list[dict[str, Any]]) -> Captured:
    args = [c.get("args") or {} for c in calls]
    return Captured(
        keys=[(a.get("kernel"), _dims(a.get("grid")), _dims(a.get("block"))) for a in args],
        ops=[_innermost_op(ops, c) for c in calls],
        node_ids=[a.get("graph node id") for a in args],
    )


def _same(a: Key, b: Key) -> bool:
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def _fits(caps: list[Captured], keys: list[Key]) -> list[tuple[int, int]]:
    n, found = len(keys), []
    for c, cap in enumerate(caps):
        extra = len(cap.keys) - n
        for offset in range(max(extra + 1, 0)):
            window = cap.keys[offset : offset + n]
            agree = sum(_same(a, b) for a, b in zip(window, keys))
            named = sum(a[0] is not None for a in window)
            ok = 2 * agree >= n if extra == 0 else agree == n and 2 * named >= n
            if ok and n:
                found.append((agree, extra == 0, c, offset))
    if not found:
        return []
    top = max((agree, same) for agree, same, _, _ in found)
    best = [(c, o) for agree, same, c, o in found if (agree, same) == top]
    if len({tuple(caps[c].ops[o : o + n]) for c, o in best}) > 1:
        return []
    return best


def _by_node_id(caps: list[Captured], replay: list[dict[str, Any]]) -> list[str | None] | None:
    ids = [k["args"].get("graph node id") for k in replay]
    if not ids or any(i is None for i in ids):
        return None
    where: dict[Any, list[str | None]] = defaultdict(list)
    for cap in caps:
        for node_id, op in zip(cap.node_ids, cap.ops):
            if node_id is not None:
                where[node_id].append(op)
    if any(len(where.get(i, [])) != 1 for i in ids):
        return None
    return [where[i][0] for i in ids]


def replay_counts(path: str | Path) -> ReplayCounts | None:
    """None when the trace has no graph-launch call."""
    raw = read_raw(path)
    launches = {
        e["args"]["correlation"]
        for e in raw.complete(*HOST_CALLS)
        if GRAPH_LAUNCH.match(str(e.get("name", "")))
        and isinstance(e.get("args"), dict)
        and "correlation" in e["args"]
    }
    if not launches:
        return None
    replays: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for k in _kernels(raw):
        if k["args"].get("correlation") in launches:
            replays[k["args"]["correlation"]].append(k)
    folder = Path(path).parent / "capture_traces"
    sources = [raw, *[read_raw(p) for p in sorted(folder.glob("*.json*"))]]
    caps = [c for source in sources for c in captures_of(source)]
    counts = ReplayCounts(sum(len(r) for r in replays.values()), 0, defaultdict(float))
    seen: dict[tuple[Key, ...], int] = defaultdict(int)
    memo: dict[tuple[Key, ...], list[tuple[int, int]]] = {}
    for corr in sorted(replays, key=lambda c: min(float(k["ts"]) for k in replays[c])):
        replay = sorted(replays[corr], key=lambda k: float(k["ts"]))
        keys = tuple(
            (k["name"], _dims(k["args"].get("grid")), _dims(k["args"].get("block"))) for k in replay
        )
        ops = _by_node_id(caps, replay)
        if ops is None:
            if keys not in memo:
                memo[keys] = _fits(caps, list(keys))
            if memo[keys]:
                c, offset = memo[keys][seen[keys] % len(memo[keys])]
                seen[keys] += 1
                ops = caps[c].ops[offset : offset + len(keys)]
        if ops is None:
            continue
        for k, op in zip(replay, ops):
            counts.matched += 1
            if op is not None:
                counts.op_us[op] += float(k.get("dur", 0))
    counts.op_us = dict(counts.op_us)
    return counts
