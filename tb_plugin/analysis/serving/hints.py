"""Serving rules kept as data (`data/serving.json`): which engine a name belongs to, and
which phase an attention kernel serves."""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import name_flags
from ..core.rules import load

ATTENTION_PHASES = ("", "decode", "prefill")  # attention_phase_codes: index into this


def _joined(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


@cache
def _engines() -> tuple[tuple[str, re.Pattern[str]], ...]:
    rules = load("serving")["engines"]
    return tuple((engine, _joined(rule["patterns"])) for engine, rule in rules.items())


@cache
def _attention() -> tuple[tuple[str, re.Pattern[str]], ...]:
    rules = load("serving")["attention_phase"]
    return tuple((phase, _joined(rules[phase]["patterns"])) for phase in ATTENTION_PHASES[1:])


def engine_name(name: str) -> str:
    """The serving engine whose ops, kernels or frames carry this name ("" for none)."""
    for engine, pattern in _engines():
        if pattern.search(name):
            return engine
    return ""


def attention_phase(name: str) -> str:
    """The phase an attention kernel's name says it serves ("" for none)."""
    for phase, pattern in _attention():
        if pattern.search(name):
            return phase
    return ""


def _names_engine(name: str) -> bool:
    return engine_name(name) != ""


def engine_of(model: TraceModel) -> str | None:
    """The serving engine the trace shows, or None: its Python frames' engine where frames
    name one (the code that ran), else the engine its ops and kernels name, in
    `engine_precedence` (SGLang runs vLLM's kernels and ops; vLLM never SGLang's)."""
    codes = np.flatnonzero(name_flags(model, _names_engine))
    if codes.size == 0:
        return None
    names = [model.names[code] for code in codes.tolist()]
    frames = {engine_name(n) for n in names if _FRAME.search(n)}
    seen = frames or {engine_name(n) for n in names}
    order = load("serving")["engine_precedence"]
    return min(seen, key=lambda e: (order.index(e) if e in order else len(order), e))


_FRAME = re.compile(r"\.py\(\d+\): ")  # a Python frame's name: file(line): function


def attention_phase_codes(model: TraceModel) -> np.ndarray:
    """Per interned name: 0, or the index in ATTENTION_PHASES of the phase it says."""

    def build(m: TraceModel) -> np.ndarray:
        out = np.zeros(len(m.names), dtype=np.int8)
        for code in np.flatnonzero(name_flags(m, _says_phase)).tolist():
            out[code] = ATTENTION_PHASES.index(attention_phase(m.names[code]))
        out.flags.writeable = False
        return out

    return model.derived("_serving_attention_phase", build)


def _says_phase(name: str) -> bool:
    return attention_phase(name) != ""
