"""Request parameters of views: one error type (answered as HTTP 400) and the parsers
every view shares, so a bad number reads the same whatever route it was sent to."""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping, Sequence
from typing import Any

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


def query_params(request: Any, args: Params) -> dict[str, str]:
    """The parameters a request type declares, taken from the query and checked by type
    once, before any loading: an `int`, a finite `float` or one of a `Literal`'s values,
    else ViewParamError (400) with the same words as the parsers above. Empty values
    count as absent. Ranges and names are the compute function's to check."""
    out: dict[str, str] = {}
    for key, hint in typing.get_type_hints(request).items():
        text = args.get(key)
        if text is None or text == "":
            continue
        _check(args, key, text, hint)
        out[key] = text
    return out


def _check(args: Params, key: str, text: str, hint: Any) -> None:
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is typing.Union and len(options) == 1:
        hint = options[0]  # Optional[X]
    if hint is int:
        try:
            int(text)
        except ValueError:
            raise ViewParamError(f"{key} must be an integer, not {text!r}") from None
    elif hint is float:
        number(args, key)
    elif typing.get_origin(hint) is typing.Literal:
        choice(args, key, [str(v) for v in typing.get_args(hint)], text)
