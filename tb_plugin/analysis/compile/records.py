"""One TORCH_TRACE log read into what the `compile` view needs of it, per compile.

Records read (torch's `CompilationMetrics` and the artifacts beside them; facts checked
against torch 2.13 and tlparse's test inputs, docs/compile.md):

- `compilation_metrics`: one per frame compile (its frame `co_name`, `co_filename`,
  `co_firstlineno`, the times in seconds `entire_frame_compile_time_s`,
  `backend_compile_time_s`, `inductor_compile_time_s`, `code_gen_time_s`, the start
  `start_time_us` or `start_time` (s), `fail_type`/`fail_reason`, `restart_reasons`, and in
  newer torch `recompile_reason`, `num_graph_breaks`, `guard_count`, `graph_op_count`, the
  cache counters and `cudagraph_skip_reason`); `bwd_compilation_metrics` (and the older
  `aot_autograd_backward_compilation_metrics`): the lazily compiled backward;
- artifacts `recompile_reasons` (why a frame compiled again), `dynamo_graph_break_reason`,
  `dynamo_error`, the FX graph and AOTAutograd cache's hits and misses (their `key` is the
  `## Call CompiledFxGraph <key> ##` of the trace), `torch_version`;
- `inductor_output_code`: the generated code, for the kernels it defines;
- `chromium_event`: the phases (`phases.py`).

A compile is named by its compile id, `frame/compile` ("0/1": frame 0's second compile),
`!ca/frame/compile` under compiled autograd; each log is one process, so (rank, id) names
a compile across logs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ...ingest.compile_log import LogReading, LogRecord, read_compile_log
from ...ingest.compile_log_files import CompileLogFile
from .phases import Phases

KINDS = frozenset(
    {
        "compilation_metrics",
        "bwd_compilation_metrics",
        "aot_autograd_backward_compilation_metrics",
        "chromium_event",
        "artifact",
        "inductor_output_code",
    }
)
ARTIFACTS = frozenset(
    {
        "recompile_reasons",
        "dynamo_graph_break_reason",
        "dynamo_error",
        "fx_graph_cache_hit",
        "fx_graph_cache_miss",
        "aotautograd_cache_hit",
        "aotautograd_cache_miss",
        "aotautograd_cache_bypass",
        "torch_version",
    }
)
CACHE_ARTIFACTS = {
    "fx_graph_cache_hit": ("inductor", "hit"),
    "fx_graph_cache_miss": ("inductor", "miss"),
    "aotautograd_cache_hit": ("aot", "hit"),
    "aotautograd_cache_miss": ("aot", "miss"),
    "aotautograd_cache_bypass": ("aot", "miss"),  # not cached: the compile ran in full
}
# A kernel Inductor's generated code defines: `triton_poi_fused_add_0 = async_compile.triton(`.
_KERNEL = re.compile(r"(?m)^(\w+) = async_compile\.(?!wait\b)\w+\(")


@dataclass
class CompileFacts:
    """What one log says of one compile (None: the log does not say)."""

    compile_id: str
    metrics: dict[str, Any] | None = None
    backward: dict[str, Any] | None = None
    attempts: int = 1
    recompile_reasons: list[str] | None = None
    graph_breaks: list[str] = field(default_factory=list)
    error: str | None = None
    cache: dict[tuple[str, str], int] = field(default_factory=dict)
    time_saved_ms: float = 0.0
    fx_keys: list[str] = field(default_factory=list)
    kernels: dict[str, list[str]] = field(default_factory=dict)  # name → its code's files


@dataclass
class LogFacts:
    """A log's compiles in the order they first appear, its phases and what the read saw."""

    log: CompileLogFile
    rank: int | None
    pid: int | None = None
    torch_version: str | None = None
    compiles: dict[str, CompileFacts] = field(default_factory=dict)
    phases: Phases = field(default_factory=Phases)
    reading: LogReading | None = None

    def of(self, compile_id: str) -> CompileFacts:
        facts = self.compiles.get(compile_id)
        if facts is None:
            facts = self.compiles[compile_id] = CompileFacts(compile_id)
        return facts


def envelope_id(meta: dict[str, Any]) -> str | None:
    """The compile id a record's envelope names, as torch prints a `CompileId`."""
    frame, compile_, autograd = (
        meta.get("frame_id"),
        meta.get("frame_compile_id"),
        meta.get("compiled_autograd_id"),
    )
    if autograd is not None:
        return f"!{autograd}/{frame}/{compile_}" if frame is not None else f"!{autograd}"
    if frame is None or compile_ is None:
        return None
    return f"{frame}/{compile_}"


def _wants_payload(kind: str, meta: dict[str, Any]) -> bool:
    if kind == "artifact":
        artifact = meta.get("artifact")
        name = artifact.get("name") if isinstance(artifact, dict) else None
        return isinstance(name, str) and name in ARTIFACTS  # a damaged name may be a dict
    return kind in ("chromium_event", "inductor_output_code")


def read_log_facts(log: CompileLogFile) -> LogFacts:
    """The log read (`ingest.compile_log`, bounded) into its facts; its errors raise as the
    reader raises them (OSError, CompileLogError)."""
    facts = LogFacts(log, log.rank)
    facts.reading = read_compile_log(
        log.path, KINDS, _wants_payload, lambda record: _take(facts, record)
    )
    if facts.reading is not None and facts.phases.skipped:
        facts.reading.skipped += facts.phases.skipped
        facts.reading.warn(f"{facts.phases.skipped} compile phases were not JSON, skipped")
    return facts


def _take(facts: LogFacts, record: LogRecord) -> None:
    meta = record.meta
    if facts.pid is None:
        facts.pid = record.pid
    rank = meta.get("rank")
    if isinstance(rank, int) and not isinstance(rank, bool) and facts.rank is None:
        facts.rank = rank
    cid = envelope_id(meta)
    kind = record.kind
    if kind == "chromium_event":
        if record.payload is not None and not facts.phases.add(record.payload, cid):
            facts.phases.skipped += 1
        return
    body = meta.get(kind)
    if kind == "artifact":
        _artifact(facts, body, cid, record.payload)
        return
    if not isinstance(body, dict):
        return
    own = body.get("compile_id")
    cid = own if isinstance(own, str) and own else cid
    if cid is None:
        return
    compile_facts = facts.of(cid)
    attempt = meta.get("attempt")
    if isinstance(attempt, int) and not isinstance(attempt, bool):
        compile_facts.attempts = max(compile_facts.attempts, attempt + 1)
    if kind == "compilation_metrics":
        compile_facts.metrics = body
    elif kind == "inductor_output_code":
        _output_code(compile_facts, body, record.payload)
    else:  # the backward's metrics
        compile_facts.backward = body


def _artifact(facts: LogFacts, body: Any, cid: str | None, payload: str | None) -> None:
    name = body.get("name") if isinstance(body, dict) else None
    if payload is None or not isinstance(name, str):
        return
    if name == "torch_version":
        facts.torch_version = _torch_version(payload)
        return
    if cid is None:
        return
    compile_facts = facts.of(cid)
    if name == "recompile_reasons":
        compile_facts.recompile_reasons = _reasons(payload)
    elif name == "dynamo_graph_break_reason":
        compile_facts.graph_breaks.append(payload)
    elif name == "dynamo_error":
        compile_facts.error = payload
    elif name in CACHE_ARTIFACTS:
        key = CACHE_ARTIFACTS[name]
        compile_facts.cache[key] = compile_facts.cache.get(key, 0) + 1
        _cache_payload(compile_facts, name, payload)


def _cache_payload(facts: CompileFacts, name: str, payload: str) -> None:
    try:
        value = msgspec.json.decode(payload)
    except (msgspec.DecodeError, RecursionError):
        return
    if not isinstance(value, dict):
        return
    key = value.get("key")
    if name.startswith("fx_graph") and isinstance(key, str) and key not in facts.fx_keys:
        facts.fx_keys.append(key)
    saved = value.get("time_saved_ms")
    if name.endswith("_hit") and isinstance(saved, (int, float)) and not isinstance(saved, bool):
        facts.time_saved_ms += float(saved)


def _reasons(payload: str) -> list[str]:
    """A `recompile_reasons` payload: a JSON list of reasons (newest cache entry first),
    though torch writes a single reason as bare text."""
    try:
        value = msgspec.json.decode(payload)
    except (msgspec.DecodeError, RecursionError):
        return [payload.strip()] if payload.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)]


def _torch_version(payload: str) -> str | None:
    try:
        value = msgspec.json.decode(payload)
    except (msgspec.DecodeError, RecursionError):
        return None
    version = value.get("pytorch_version") if isinstance(value, dict) else value
    return version if isinstance(version, str) else None


def _output_code(facts: CompileFacts, body: dict[str, Any], payload: str | None) -> None:
    """The kernels one generated module defines, with the module's file name."""
    filename = body.get("filename")
    stem = filename.replace("\\", "/").rsplit("/", 1)[-1] if isinstance(filename, str) else ""
    for name in _KERNEL.findall(payload or ""):
        files = facts.kernels.setdefault(name, [])
        if stem and stem not in files:
            files.append(stem)
