"""TORCH_TRACE compile logs read again from the raw text, with the standard library only:
per compile, the numbers the `compile` view reports, from the definitions in
docs/compile.md (not from kinetoscope's code).

A log line is `<level><MMDD> <time> <pid> <path>:<line>] <json>`; the JSON's first key is
the record's type; a record with `has_payload` is followed by its payload lines, each
starting with a tab. Compile ids: `<frame_id>/<frame_compile_id>` from the envelope (the
metrics' own `compile_id` where they have one)."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LINE = re.compile(r"^[VIWEC]\d{4} \S+ +(\d+) .*?\] (\{.*)$")
KERNEL = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.M)
NESTED = [
    ("entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us"),
    ("backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"),
    ("inductor_compile_time_s", "inductor_cumulative_compile_time_us"),
    ("code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"),
]
COUNTERS = {
    "inductor_hits": ["inductor_fx_local_cache_hit_count", "inductor_fx_remote_cache_hit_count"],
    "inductor_misses": [
        "inductor_fx_local_cache_miss_count",
        "inductor_fx_remote_cache_miss_count",
    ],
    "aot_hits": ["aotautograd_local_cache_hit_count", "aotautograd_remote_cache_hit_count"],
    "aot_misses": ["aotautograd_local_cache_miss_count", "aotautograd_remote_cache_miss_count"],
}
ARTIFACT_COUNTER = {
    "fx_graph_cache_hit": "inductor_hits",
    "fx_graph_cache_miss": "inductor_misses",
    "aotautograd_cache_hit": "aot_hits",
    "aotautograd_cache_miss": "aot_misses",
    "aotautograd_cache_bypass": "aot_misses",
}


@dataclass
class Facts:
    """One compile as the raw log says it."""

    metrics: dict[str, Any] | None = None
    backward: dict[str, Any] | None = None
    reasons_artifact: list[str] | None = None
    graph_break_artifacts: int = 0
    cache_artifacts: dict[str, int] = field(default_factory=dict)
    kernels: set[str] = field(default_factory=set)
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)  # first of each name


@dataclass
class Log:
    rank: int | None = None
    pid: int | None = None
    compiles: dict[str, Facts] = field(default_factory=dict)
    phase_count: int = 0


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:  # type: ignore[operator]
        return f.read().split("\n")


def _records(path: Path) -> list[tuple[dict[str, Any], str | None, int]]:
    out: list[tuple[dict[str, Any], str | None, int]] = []
    pending: list[str] | None = None
    for text in _lines(path):
        if text.startswith("\t"):
            if pending is not None:
                pending.append(text[1:])
            continue
        if not text.strip():
            continue
        if pending is not None:
            meta, _, pid = out[-1]
            out[-1] = (meta, "\n".join(pending), pid)
            pending = None
        m = LINE.match(text)
        if not m:
            continue
        try:
            meta = json.loads(m.group(2))
        except json.JSONDecodeError:
            continue
        out.append((meta, None, int(m.group(1))))
        if "has_payload" in meta:
            pending = []
    if pending is not None and out:
        meta, _, pid = out[-1]
        out[-1] = (meta, "\n".join(pending), pid)
    return out


def _cid(meta: dict[str, Any]) -> str | None:
    if meta.get("frame_id") is None or meta.get("frame_compile_id") is None:
        return None
    return f"{meta['frame_id']}/{meta['frame_compile_id']}"


def read_log(path: Path) -> Log:
    """The log's compiles; its rank is its file name's (`..._rank_<r>_...`, as tlparse's
    multi-rank report names ranks), else its records' `rank`."""
    named = re.match(r"dedicated_log_torch_trace_rank_(\d+)[_.]", path.name)
    log = Log(rank=int(named.group(1)) if named else None)
    stack: list[tuple[str, str | None, float]] = []
    for meta, payload, pid in _records(path):
        log.pid = log.pid if log.pid is not None else pid
        if isinstance(meta.get("rank"), int) and log.rank is None:
            log.rank = meta["rank"]
        kind = next(iter(meta))
        cid = _cid(meta)
        if kind == "chromium_event":
            _phase(log, stack, payload, cid)
            continue
        body = meta[kind]
        if (
            isinstance(body, dict)
            and isinstance(body.get("compile_id"), str)
            and kind != "artifact"
        ):
            cid = body["compile_id"]
        if cid is None:
            continue
        facts = log.compiles.setdefault(cid, Facts())
        if kind == "compilation_metrics":
            facts.metrics = body
        elif kind in ("bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics"):
            facts.backward = body
        elif kind == "inductor_output_code":
            facts.kernels |= {
                name for name, what in KERNEL.findall(payload or "") if what != "wait"
            }
        elif kind == "artifact":
            _artifact(facts, body.get("name"), payload or "")
    return log


def _artifact(facts: Facts, name: str, payload: str) -> None:
    if name == "recompile_reasons":
        try:
            value = json.loads(payload)
            facts.reasons_artifact = (
                [str(v) for v in value] if isinstance(value, list) else [str(value)]
            )
        except json.JSONDecodeError:
            facts.reasons_artifact = [payload]
    elif name == "dynamo_graph_break_reason":
        facts.graph_break_artifacts += 1
    elif name in ARTIFACT_COUNTER:
        key = ARTIFACT_COUNTER[name]
        facts.cache_artifacts[key] = facts.cache_artifacts.get(key, 0) + 1


def _phase(
    log: Log, stack: list[tuple[str, str | None, float]], payload: str | None, cid: str | None
) -> None:
    try:
        event = json.loads(payload or "")
    except json.JSONDecodeError:
        return
    args = event.get("args") or {}
    own = args.get("compile_id") if isinstance(args, dict) else None
    cid = own if isinstance(own, str) and own != "None" else cid
    if event.get("ph") == "B":
        stack.append((event["name"], cid, float(event["ts"])))
        return
    if event.get("ph") in ("i", "I", "n"):
        log.phase_count += 1
        return
    names = [s[0] for s in stack]
    if event.get("ph") != "E" or event["name"] not in names:
        return
    at = len(names) - 1 - names[::-1].index(event["name"])
    name, begin_cid, start = stack[at]
    del stack[at:]
    log.phase_count += 1
    cid = begin_cid or cid
    if cid is not None:
        log.compiles.setdefault(cid, Facts()).phases.setdefault(name, (start, float(event["ts"])))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def nested(metrics: dict[str, Any] | None) -> list[float | None]:
    out: list[float | None] = []
    for seconds, micros in NESTED:
        s = _number((metrics or {}).get(seconds))
        out.append(float(round(s * 1e6)) if s is not None else _number((metrics or {}).get(micros)))
    return out


def compile_numbers(facts: Facts) -> dict[str, Any]:
    """What the view must say of one compile."""
    times = nested(facts.metrics)
    dur = times[0]
    if dur is None and "entire_frame_compile" in facts.phases:
        a, b = facts.phases["entire_frame_compile"]
        dur = b - a
    own = []
    for i, t in enumerate(times):  # each stage less the next inner one known
        inner = next((x for x in times[i + 1 :] if x is not None), 0.0)
        own.append(None if t is None else max(t - inner, 0.0))
    metrics = facts.metrics or {}
    if any(k in metrics for keys in COUNTERS.values() for k in keys):
        cache = {
            key: int(sum(_number(metrics.get(k)) or 0 for k in keys))
            for key, keys in COUNTERS.items()
        }
    elif facts.cache_artifacts:
        cache = {key: facts.cache_artifacts.get(key, 0) for key in COUNTERS}
    else:
        cache = {key: None for key in COUNTERS}
    reasons = facts.reasons_artifact or (
        [metrics["recompile_reason"]] if metrics.get("recompile_reason") else []
    )
    restarts = metrics.get("restart_reasons") or []
    bwd = facts.backward
    bwd_dur = _number((bwd or {}).get("duration_us"))
    if bwd is not None and bwd_dur is None and "entire_backward_compile" in facts.phases:
        a, b = facts.phases["entire_backward_compile"]
        bwd_dur = b - a
    return {
        "dur_us": dur,
        "stages": own,
        "cache": cache,
        "reasons": [" ".join(r.strip().split("\n")[0].split()) for r in reasons if r.strip()],
        "graph_breaks": facts.graph_break_artifacts or len(restarts),
        "fail_type": metrics.get("fail_type"),
        "frame": metrics.get("co_name"),
        "line": metrics.get("co_firstlineno"),
        "backward_dur_us": bwd_dur if bwd is not None else None,
        "kernels": facts.kernels,
    }
