"""What a view's JSON gives a notebook frame besides its rows: nested objects' fields
flattened to `parent.child` columns, and the top-level fields plain enough for a frame's
`attrs`. Shared by the views' own frames (a view folder's `frames.py`) and the notebook's,
which reaches it through `api.lower`."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any


def flatten(row: Mapping[str, Any]) -> dict[str, Any]:
    """One row's fields, nested objects' fields under `parent.child` names."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        if isinstance(value, Mapping):
            for sub, leaf in flatten(value).items():
                out[f"{name}.{sub}"] = leaf
        else:
            out[name] = value
    return out


def plain_fields(
    view: Mapping[str, Any], response: Any, exclude: Sequence[str] = ()
) -> dict[str, Any]:
    """The view's top-level fields whose declared type is plain: numbers, text, booleans,
    or lists of them (objects and tables are left to frames of their own, and `attrs`
    stays cheap to copy, as pandas does on every operation)."""
    hints = typing.get_type_hints(response)
    return {
        name: value
        for name, value in view.items()
        if name not in exclude and name in hints and _plain_type(hints[name])
    }


_SCALARS = (int, float, str, bool, type(None))
_UNION_TYPE = getattr(types, "UnionType", typing.Union)  # `int | None` (Python 3.10+)


def _plain_type(hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return True
    if origin in (typing.Union, _UNION_TYPE) or origin is list:
        return all(_plain_type(arg) and typing.get_origin(arg) is not list for arg in args)
    return hint in _SCALARS
