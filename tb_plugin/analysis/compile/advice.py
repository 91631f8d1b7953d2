"""Advice from what the compile logs say: each rule reads the recompiles, graph breaks,
failures, CUDA-graph notes and step times, and says what to change, naming its evidence
(the compile ids). docs/compile.md lists the rules; one piece of advice per finding (a
graph break at one line is one, whatever the ranks and compiles it broke)."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable

from .reasons import RecompileReason, recompile_reason
from .steps import duration_text
from .types import (
    Compile,
    CompileAdvice,
    CompileFailure,
    CudaGraphNote,
    GraphBreak,
    Recompile,
    SourceLine,
    StepCompileTime,
)

EVERY_STEP = 3  # recompiles of one guard in this many steps in a row: it fails every step
COMPILE_SHARE = 0.5  # a step spending more of its time compiling is a cold-start step
_LIMIT = ("recompile limit", "recompile_limit", "cache_size_limit")
_ARGUMENT = re.compile(r"^[A-Za-z_]\w*$")  # a plain name: an argument or a local, no attribute


def _where(file: str | None, line: int | None) -> str:
    return f"{os.path.basename(file)}:{line}" if file and line is not None else "?"


def _one_rank(ranks: Iterable[int | None]) -> int | None:
    distinct = set(ranks)
    return distinct.pop() if len(distinct) == 1 else None


def _advice(
    rule: str,
    text: str,
    ids: list[str],
    ranks: list[int | None],
    file: str | None,
    line: int | None,
) -> CompileAdvice:
    return {
        "rule": rule,
        "text": text,
        "compile_ids": list(dict.fromkeys(ids)),
        "rank": _one_rank(ranks),
        "file": file,
        "line": line,
    }


def recompile_advice(recompiles: list[Recompile]) -> list[CompileAdvice]:
    """mark_dynamic (a size that changes), value_guard (a Python value), guard_every_step."""
    groups: dict[tuple[str | None, int | None, str, str], list[Recompile]] = defaultdict(list)
    for r in recompiles:
        parsed = recompile_reason(r["reasons"][0]) if r["reasons"] else None
        # One finding per thing guarded: a tensor's dimension, a value guard's expression
        # (`self.k == 1` then `self.k == 2` are one int attribute changing), else the guard.
        if parsed and parsed.tensor:
            subject = f"{parsed.tensor}\0{parsed.dim}"
        else:
            subject = (parsed.subject if parsed else None) or r["guard"] or ""
        groups[(r["file"], r["line"], r["kind"], subject)].append(r)
    out = []
    for (file, line, kind, _), rows in groups.items():
        out.extend(_recompile_group(file, line, kind, rows))
    return out


def _recompile_group(
    file: str | None, line: int | None, kind: str, rows: list[Recompile]
) -> list[CompileAdvice]:
    ids, ranks = [r["compile_id"] for r in rows], [r["rank"] for r in rows]
    first = rows[0]
    name = f"`{first['frame']}` ({_where(file, line)})"
    times = f"{len(rows)} time{'s' if len(rows) > 1 else ''}"
    parsed = recompile_reason(first["reasons"][0]) if first["reasons"] else None
    out = []
    if kind in ("shape", "stride") and parsed and parsed.tensor:
        tensor, dim = parsed.tensor, parsed.dim
        what = "size" if kind == "shape" else "stride"
        changes = _size_changes(rows)
        text = (
            f"mark this dimension dynamic: {name} recompiled {times} because the {what} "
            f"of dimension {dim} of `{tensor}` changed ({changes}); call "
            f"`torch._dynamo.mark_dynamic({tensor}, {dim})` before the call, or compile with "
            "`dynamic=True`, so one graph serves every size"
        )
        out.append(_advice("mark_dynamic", text, ids, ranks, file, line))
    elif kind in ("value", "id", "type", "length"):
        src = first["source"]
        said = _value_guard_text(name, times, rows, src, parsed)
        file, line = (src["file"], src["line"]) if src else (file, line)
        if said is not None:
            out.append(_advice("value_guard", said, ids, ranks, file, line))
    every = _every_step(rows)
    if every:
        text = (
            f"this guard fails every step: {name} recompiled in steps {every} "
            f"({first['guard'] or first['kind']}); it recompiles until the recompile "
            "limit, then runs without compiling"
        )
        out.append(_advice("guard_every_step", text, ids, ranks, file, line))
    return out


def _value_guard_text(
    name: str,
    times: str,
    rows: list[Recompile],
    src: SourceLine | None,
    parsed: RecompileReason | None,
) -> str | None:
    """What a guard on a Python value says to do (`parsed`: the first row's reason); None
    for an int argument that recompiled once: torch then made it a dynamic int (automatic
    dynamic shapes), so later values reuse that graph and there is nothing to change."""
    guards = list(dict.fromkeys(r["guard"] or r["kind"] for r in rows))
    said = f"`{guards[0]}`" + (f" and {len(guards) - 1} more" if len(guards) > 1 else "")
    at = f", from {_where(src['file'], src['line'])}" if src else ""
    subject = parsed.subject if parsed else None
    if parsed is not None and parsed.int_value and subject:
        if _ARGUMENT.match(subject):
            if len(rows) == 1:
                return None
            return (
                f"{name} recompiled {times} because the int `{subject}` changed (guard {said}"
                f"{at}): torch compiles an int argument again as a dynamic int after its "
                "first change, so this compile was static (`dynamic=False`, or automatic "
                "dynamic shapes off); let torch make it dynamic, or pass it as a tensor"
            )
        return (
            f"{name} recompiled {times} because the int `{subject}` changed (guard {said}{at}): "
            "torch keeps an int attribute of an nn.Module static, so each value it takes is "
            "a compile of its own; set `torch._dynamo.config.allow_unspec_int_on_nn_module "
            "= True`, or hold it in a tensor"
        )
    return (
        f"{name} recompiled {times} because the guard {said}{f' ({at[2:]})' if at else ''} "
        "failed: it guards a Python value, so each value it sees is a compile of its own; "
        "pass it as a tensor, or take the branch out of the compiled function"
    )


def _size_changes(rows: list[Recompile]) -> str:
    """8 → 4 → 6: the sizes a dimension took, recompile by recompile."""
    chain: list[str] = []
    for r in rows:
        parsed = recompile_reason(r["reasons"][0]) if r["reasons"] else None
        if parsed is None or parsed.sizes is None:
            continue
        expected, actual = parsed.sizes
        if not chain or chain[-1] != expected:
            chain.extend(["…", expected] if chain else [expected])
        chain.append(actual)
    return " → ".join(chain).replace("→ … →", "…")


def _every_step(rows: list[Recompile]) -> str | None:
    steps = sorted({r["step"] for r in rows if r["step"] is not None})
    run = 1
    for a, b in zip(steps, steps[1:]):
        run = run + 1 if b == a + 1 else 1
        if run >= EVERY_STEP:
            return ", ".join(str(s) for s in steps)
    return None


def graph_break_advice(breaks: list[GraphBreak]) -> list[CompileAdvice]:
    """One per place and reason: where Dynamo stopped, and where the user's code led there
    when that place is library code (a DDP wrapper, the standard library)."""
    groups: dict[tuple[str | None, int | None, str], list[GraphBreak]] = defaultdict(list)
    for b in breaks:
        groups[(b["file"], b["line"], b["reason"])].append(b)
    out = []
    for (file, line, reason), rows in groups.items():
        user = rows[0]["user"]
        hint = f"; {rows[0]['hints'][0]}" if rows[0]["hints"] else ""
        at = f" at {_where(file, line)}" if file else ""
        if user and (user["file"], user["line"]) != (file, line):
            at += f", reached from your code at {_where(user['file'], user['line'])}"
        text = (
            f"graph break{at}: {reason}: the frame is cut into compiled pieces that run "
            f"apart, with Python between them{hint}"
        )
        ids, ranks = [r["compile_id"] for r in rows], [r["rank"] for r in rows]
        place = (user["file"], user["line"]) if user else (file, line)
        out.append(_advice("graph_break", text, ids, ranks, *place))
    return out


def failure_advice(failures: list[CompileFailure]) -> list[CompileAdvice]:
    out = []
    for f in failures:
        reason = " ".join((f["reason"] or "").split())[:300]
        frame = f"`{f['frame']}`" if f["frame"] else f"compile {f['compile_id']}"
        user = f["user"]
        if any(word in (f["reason"] or "") for word in _LIMIT):
            text = f"{frame} hit the recompile limit ({reason}): from then on it runs uncompiled"
            rule = "recompile_limit"
        else:
            then = (
                "it ran eagerly instead (suppress_errors)"
                if f["suppressed"]
                else "the error was raised"
            )
            text = f"compiling {frame} failed ({f['fail_type']}: {reason}): {then}"
            rule = "compile_failure"
        file, line = (user["file"], user["line"]) if user else (None, None)
        out.append(_advice(rule, text, [f["compile_id"]], [f["rank"]], file, line))
    return out


def cudagraph_advice(notes: list[CudaGraphNote]) -> list[CompileAdvice]:
    out = []
    for n in notes:
        if n["kind"] == "skipped":
            text = f"CUDA graphs were skipped for compile {n['compile_id']}: {n['reason']}"
            out.append(_advice("cudagraph_skip", text, [n["compile_id"]], [n["rank"]], None, None))
        else:
            text = (
                f"the CUDA graph of compile {n['compile_id']} was re-recorded {n['count']} "
                "times: its inputs' addresses or shapes change between calls"
            )
            out.append(
                _advice("cudagraph_rerecord", text, [n["compile_id"]], [n["rank"]], None, None)
            )
    return out


def cold_step_advice(steps: list[StepCompileTime], compiles: list[Compile]) -> list[CompileAdvice]:
    """Steps that spent most of their time compiling: the window measured compiles."""
    cold = [s for s in steps if s["step_us"] > 0 and s["compile_us"] > COMPILE_SHARE * s["step_us"]]
    if not cold:
        return []
    ids = [p["compile_id"] for s in cold for p in s["compiles"]]
    misses = any(
        c["cache"]["state"] in ("miss", "partial") for c in compiles if c["compile_id"] in ids
    )
    names = ", ".join(
        f"{s['worker']} step {s['step'] if s['step'] is not None else s['name']}" for s in cold[:4]
    )
    spent = sum(s["compile_us"] for s in cold)
    their, these = (
        ("its", "this step measures") if len(cold) == 1 else ("their", "these steps measure")
    )
    text = (
        f"{names} spent most of {their} time compiling ({duration_text(spent)}): {these} "
        "the compiler, not the model; profile after a warm-up (the profiler schedule's "
        "`wait`/`warmup`)"
    )
    if misses:
        text += (
            ", and keep Inductor's cache between runs (TORCHINDUCTOR_CACHE_DIR) so the next "
            "run finds it warm"
        )
    return [_advice("compile_in_window", text, ids, [], None, None)]


def advice(
    compiles: list[Compile],
    recompiles: list[Recompile],
    breaks: list[GraphBreak],
    failures: list[CompileFailure],
    notes: list[CudaGraphNote],
    steps: list[StepCompileTime],
) -> list[CompileAdvice]:
    return [
        *failure_advice(failures),
        *recompile_advice(recompiles),
        *graph_break_advice(breaks),
        *cudagraph_advice(notes),
        *cold_step_advice(steps, compiles),
    ]
