"""Request parameters of endpoints: one error type (answered as HTTP 400) and one decoder,
so each parameter is parsed once, by its declared type, and a bad value reads the same
whatever route it was sent to. A view's request type (a TypedDict) lives beside its
compute, in its folder's `types.py`; `NoParams` is the one of views without parameters.

Each is parsed once, before loading (`decode_request`), and the compute function gets the
decoded TypedDict: a value that is not an integer, a finite number or one of a Literal's
choices answers 400. Ranges and names (a device that exists, t1 after t0) are checked by
the compute function."""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypedDict

from ...model.errors import ViewParamError

Params = Mapping[str, str]  # a query as it comes: names to text


class NoParams(TypedDict):
    pass


def request_fields(request: Any) -> tuple[str, ...]:
    """The parameter names of a request type, in declaration order (inherited first)."""
    return tuple(request.__annotations__)


def decode_request(request: Any, args: Params) -> dict[str, Any]:
    """The parameters a request type (a TypedDict: a view's `types.py`, or `NoParams`)
    declares, taken from the query and parsed by type, once, before any loading: an `int`,
    a finite `float`, one of a `Literal`'s values or a `str`, else ViewParamError (400).
    Empty values count as absent, so the result holds only what was given: an instance of
    the request type. Ranges and names (a width of at least 1, a device that exists) are
    the compute function's to check."""
    out: dict[str, Any] = {}
    for key, hint in _type_hints(request).items():
        text = args.get(key)
        if text is None or text == "":
            continue
        out[key] = _parse(key, text, hint)
    return out


@cache
def _type_hints(request: Any) -> dict[str, Any]:
    """The request type's hints, resolved once (`get_type_hints` evaluates the annotations
    again at each call: a quarter of a ms of every trace view request's CPU)."""
    return typing.get_type_hints(request)


def _parse(key: str, text: str, hint: Any) -> Any:
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is typing.Union and len(options) == 1:
        hint = options[0]  # Optional[X]
    if hint is int:
        try:
            return int(text)
        except ValueError:
            raise ViewParamError(f"{key} must be an integer, not {text!r}") from None
    if hint is float:
        try:
            value = float(text)
        except ValueError:
            raise ViewParamError(f"{key} must be a number, not {text!r}") from None
        if not math.isfinite(value):
            raise ViewParamError(f"{key} must be finite, not {text!r}")
        return value
    if typing.get_origin(hint) is typing.Literal:
        choices = [str(v) for v in typing.get_args(hint)]
        if text not in choices:
            raise ViewParamError(f"{key} must be one of {', '.join(choices)}, not {text!r}")
    return text
