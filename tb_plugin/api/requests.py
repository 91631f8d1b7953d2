"""Request parameters of views: one error type (answered as HTTP 400) and the parsers
every view shares, so a bad number reads the same whatever route it was sent to."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Params = Mapping[str, str]


class ViewParamError(ValueError):
    """A request parameter of a view is malformed or names nothing (HTTP 400)."""


def number(params: Params, key: str, default: float | None = None) -> float | None:
    text = params.get(key)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        raise ViewParamError(f"{key} must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise ViewParamError(f"{key} must be finite, not {text!r}")
    return value


def integer(params: Params, key: str, default: int, lo: int, hi: int) -> int:
    text = params.get(key)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ViewParamError(f"{key} must be an integer, not {text!r}") from None
    if not lo <= value <= hi:
        raise ViewParamError(f"{key} must be between {lo} and {hi}, not {value}")
    return value


def choice(params: Params, key: str, choices: Sequence[str], default: str) -> str:
    value = params.get(key) or default
    if value not in choices:
        raise ViewParamError(f"{key} must be one of {', '.join(choices)}, not {value!r}")
    return value
