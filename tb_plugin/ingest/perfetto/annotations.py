"""Debug annotations as JSON values: an event's args.

Read with one `ListFields` call per annotation (the fields it has, in C) rather than a
`HasField` per possible field: annotations are most of a trace's decode time.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .schema import NESTED_ARRAY, NESTED_DICT

# DebugAnnotation field numbers (Perfetto's debug_annotation.proto).
_NAME_IID, _NAME = 1, 10
_PLAIN = frozenset({2, 3, 4, 5, 6})  # bool, uint, int, double, string: as they are
_POINTER, _NESTED, _LEGACY_JSON, _DICT, _ARRAY, _STRING_IID = 7, 8, 9, 11, 12, 17


def text(value: str | bytes) -> str:
    """A string field's value: proto2 string fields holding bytes that are not UTF-8 come
    back as bytes (damage, or a writer's bug); those are read with replacements."""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def read_annotations(items: Any, names: dict[int, str], strings: dict[int, str]) -> dict[str, Any]:
    """Name → value of each annotation; interned names and strings from the sequence."""
    out: dict[str, Any] = {}
    for item in items:
        name = ""
        value: Any = None
        for field, raw in item.ListFields():
            number = field.number
            if number == _NAME:
                name = text(raw)
            elif number == _NAME_IID:
                name = names.get(raw, "")
            elif number in _PLAIN:
                value = text(raw) if isinstance(raw, bytes) else raw
            else:
                value = _special(number, raw, names, strings)
        out[name] = value
    return out


def _value(item: Any, names: dict[int, str], strings: dict[int, str]) -> Any:
    for field, raw in item.ListFields():
        number = field.number
        if number in _PLAIN:
            return text(raw) if isinstance(raw, bytes) else raw
        if number not in (_NAME, _NAME_IID):
            return _special(number, raw, names, strings)
    return None


def _special(number: int, raw: Any, names: dict[int, str], strings: dict[int, str]) -> Any:
    if number == _ARRAY:
        return [_value(v, names, strings) for v in raw]
    if number == _STRING_IID:
        return strings.get(raw, "")
    if number == _DICT:
        return read_annotations(raw, names, strings)
    if number == _POINTER:
        return hex(raw)
    if number == _LEGACY_JSON:
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return text(raw)
    if number == _NESTED:
        return _nested(raw)
    return None


def _nested(value: Any) -> Any:
    """A NestedValue (the older encoding of dicts and arrays)."""
    if value.nested_type == NESTED_DICT:
        return {text(k): _nested(v) for k, v in zip(value.dict_keys, value.dict_values)}
    if value.nested_type == NESTED_ARRAY:
        return [_nested(v) for v in value.array_values]
    for field, raw in value.ListFields():
        if field.name.endswith("_value") and field.name != "array_values":
            return text(raw) if isinstance(raw, bytes) else raw
    return None
