"""Debug annotations as JSON values: an event's args.

Annotations are most of a trace's decode time: each distinct one (by its bytes) is read
once per packet sequence, with one `ListFields` call (the fields it has, in C) rather
than a `HasField` per possible field. Values read once are shared by the events that
repeat them; they are only ever encoded, never changed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .rules import NESTED_ARRAY, NESTED_DICT, text

# DebugAnnotation field numbers (Perfetto's debug_annotation.proto).
_NAME_IID, _NAME = 1, 10
_PLAIN = frozenset({2, 3, 4, 5, 6})  # bool, uint, int, double, string: as they are
_POINTER, _NESTED, _LEGACY_JSON, _DICT, _ARRAY, _STRING_IID = 7, 8, 9, 11, 12, 17
SEEN_MAX = 200_000  # distinct annotations remembered per sequence (ids rarely repeat)
SEEN_BYTES = 32 << 20  # and their memory, at most (counted against the load memory cap)
_SEEN_ENTRY = 280  # bytes of one remembered annotation besides its bytes and value


class Seen(dict[bytes, Any]):
    """A sequence's annotations already read, by their bytes, and about what they hold
    in memory (`nbytes`: the key and its decoded value, about twice the key). An
    annotation that names an iid its sequence has not interned is not kept (the iid may
    come later), and the sequence drops them all when it gives an iid another text
    (`held.Sequence.intern`): what is kept reads as it would be read now."""

    nbytes = 0


class _Tables:
    """A sequence's interned annotation names and strings, and whether an iid was missing."""

    __slots__ = ("names", "strings", "missed")

    def __init__(self, names: dict[int, str], strings: dict[int, str]) -> None:
        self.names, self.strings, self.missed = names, strings, False

    def name(self, iid: int) -> str:
        found = self.names.get(iid)
        if found is None:
            self.missed = True
            return ""
        return found

    def string(self, iid: int) -> str:
        found = self.strings.get(iid)
        if found is None:
            self.missed = True
            return ""
        return found


def read_annotations(
    items: Any, names: dict[int, str], strings: dict[int, str], seen: Seen | None = None
) -> dict[str, Any]:
    """Name → value of each annotation; interned names and strings from the sequence.
    `seen`: the sequence's annotations already read, by their bytes (most repeat: the
    same shapes, devices and streams), so each distinct one is read once."""
    tables = _Tables(names, strings)
    if seen is None:
        return _dict(items, tables)
    out: dict[str, Any] = {}
    for item in items:
        key = item.SerializeToString()
        known = seen.get(key)
        if known is None:
            tables.missed = False
            known = _annotation(item, tables)
            if not tables.missed:
                if len(seen) >= SEEN_MAX or seen.nbytes > SEEN_BYTES:
                    seen.clear()
                    seen.nbytes = 0
                seen[key] = known
                seen.nbytes += _SEEN_ENTRY + 2 * len(key)
        name, value = known
        out[name] = value
    return out


def _dict(items: Any, tables: _Tables) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, value = _annotation(item, tables)
        out[name] = value
    return out


def _annotation(item: Any, tables: _Tables) -> tuple[str, Any]:
    name = ""
    value: Any = None
    for field, raw in item.ListFields():
        number = field.number
        if number == _NAME:
            name = text(raw)
        elif number == _NAME_IID:
            name = tables.name(raw)
        elif number in _PLAIN:
            value = text(raw) if isinstance(raw, bytes) else raw
        else:
            value = _special(number, raw, tables)
    return name, value


def _value(item: Any, tables: _Tables) -> Any:
    for field, raw in item.ListFields():
        number = field.number
        if number in _PLAIN:
            return text(raw) if isinstance(raw, bytes) else raw
        if number not in (_NAME, _NAME_IID):
            return _special(number, raw, tables)
    return None


def _special(number: int, raw: Any, tables: _Tables) -> Any:
    if number == _ARRAY:
        return [_value(v, tables) for v in raw]
    if number == _STRING_IID:
        return tables.string(raw)
    if number == _DICT:
        return _dict(raw, tables)
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
