"""Every span view of two models of the same trace, compared: the JSON and the protobuf
form of one trace must give the same numbers (tests/test_perfetto_reader.py)."""

from __future__ import annotations

import math
from typing import Any

import msgspec
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.registry import Answer, Scope
from kinetoscope.model.errors import ViewParamError
from kinetoscope.model.trace_model import TraceModel


def span_views(model: TraceModel) -> dict[str, Any]:
    """Each span endpoint's answer without parameters (those that need none)."""
    out: dict[str, Any] = {}
    for endpoint in ENDPOINTS.values():
        if endpoint.scope is not Scope.SPAN or endpoint.answer is not Answer.COMPUTE:
            continue
        if not endpoint.supports(model):
            out[endpoint.name] = "unsupported"
            continue
        try:
            answer = endpoint.of_span(model, endpoint.decode({}))
        except ViewParamError:
            continue  # a route that needs a parameter (an operator, an event, a window)
        out[endpoint.name] = msgspec.to_builtins(answer)
    return out


def differences(a: Any, b: Any, path: str = "", ignore: frozenset[str] = frozenset()) -> list[str]:
    """Where two view answers differ (floats to 1e-9 relative), as paths."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            if key in ignore:
                continue
            if key not in a or key not in b:
                out.append(f"{path}.{key}: only in {'b' if key not in a else 'a'}")
                continue
            out.extend(differences(a[key], b[key], f"{path}.{key}", ignore))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items vs {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(differences(x, y, f"{path}[{i}]", ignore))
        return out
    if (
        isinstance(a, float)
        and isinstance(b, (int, float))
        or isinstance(b, float)
        and isinstance(a, (int, float))
    ):
        if math.isnan(a) and math.isnan(b) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
            return []
    elif a == b:
        return []
    return [f"{path}: {a!r} vs {b!r}"]
