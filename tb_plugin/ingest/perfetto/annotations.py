"""Debug annotations as JSON values: an event's args.

Annotations are most of a trace's decode time: each distinct one (by its bytes) is read
once per packet sequence, with one `ListFields` call (the fields it has, in C) rather
than a `HasField` per possible field. Values read once are shared by the events that
repeat them; they are only ever encoded, never changed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .schema import NESTED_ARRAY, NESTED_DICT

# DebugAnnotation field numbers (Perfetto's debug_annotation.proto).
_NAME_IID, _NAME = 1, 10
_PLAIN = frozenset({2, 3, 4, 5, 6})  # bool, uint, int, double, string: as they are
_POINTER, _NESTED, _LEGACY_JSON, _DICT, _ARRAY, _STRING_IID = 7, 8, 9, 11, 12, 17
SEEN_MAX = 200_000  # distinct annotations remembered per sequence (ids rarely repeat)
SEEN_BYTES = 32 << 20  # and their memory, at most (counted against the load memory cap)
_SEEN_ENTRY = 280  # bytes of one remembered annotation besides its bytes and value


class Seen(dict[bytes, Any]):
    """A sequence's annotations already read, by their bytes, and about what they hold
    in memory (`nbytes`: the key and its decoded value, about twice the key)."""

    nbytes = 0


def text(value: str | bytes) -> str:
    """A string field's value: proto2 string fields holding bytes that are not UTF-8 come
    back as bytes (damage, or a writer's bug); those are read with replacements."""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def read_annotations(
    items: Any, names: dict[int, str], strings: dict[int, str], seen: Seen | None = None
) -> dict[str, Any]:
    """Name → value of each annotation; interned names and strings from the sequence.
    `seen`: the sequence's annotations already read, by their bytes (most repeat: the
    same shapes, devices and streams), so each distinct one is read once."""
    out: dict[str, Any] = {}
    for item in items:
        if seen is None:
            name, value = _annotation(item, names, strings)
        else:
            key = item.SerializeToString()
            known = seen.get(key)
            if known is None:
                if len(seen) >= SEEN_MAX or seen.nbytes > SEEN_BYTES:
                    seen.clear()
                    seen.nbytes = 0
                known = seen[key] = _annotation(item, names, strings)
                seen.nbytes += _SEEN_ENTRY + 2 * len(key)
            name, value = known
        out[name] = value
    return out


def _annotation(item: Any, names: dict[int, str], strings: dict[int, str]) -> tuple[str, Any]:
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
    return name, value


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
