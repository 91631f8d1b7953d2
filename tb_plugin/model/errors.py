"""Errors any layer may raise about a request, and the one range check that raises them.
The doors map them (a route answers 400, the CLI exits 2, the notebook raises)."""

from __future__ import annotations


class ViewParamError(ValueError):
    """A request parameter of a view is malformed or names nothing (HTTP 400)."""


class TooLarge(ValueError):
    """A view's answer would pass one of its caps (HTTP 413, kind `too_large`): the
    message names the cap (its setting) and what to do."""


def bounded(value: int | None, key: str, default: int, lo: int, hi: int) -> int:
    """A decoded integer parameter within [lo, hi]; `default` when it was not given."""
    if value is None:
        return default
    if not lo <= value <= hi:
        raise ViewParamError(f"{key} must be between {lo} and {hi}, not {value}")
    return value
