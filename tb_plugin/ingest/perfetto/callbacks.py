"""What the compiled Perfetto reader (`native.py`) asks of Python while it reads: legacy
JSON annotation values, Chrome metadata items for the header, a category's arrow kind;
each read by the protobuf runtime reader's own code, so both readers agree."""

from __future__ import annotations

from typing import Any

import msgspec

from .flows import flow_kind, header_value
from .rules import BAD_VALUE, failure, text

_encode = msgspec.json.Encoder().encode


def _as_read(raw: bytes) -> str | bytes:
    """A string field as the protobuf runtime gives it: str when UTF-8, else bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


class ReaderCallbacks:
    """What the compiled reader asks of Python, read by the protobuf reader's own code."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.header = header

    def legacy(self, raw: bytes) -> bytes | tuple[int, str]:
        """A legacy JSON annotation value's text; or (1, why) when reading it fails the
        packet, (2, why) when encoding it does (annotations._special, events._raw)."""
        value = _as_read(raw)
        try:
            try:
                decoded = msgspec.json.decode(value)
            except msgspec.DecodeError:
                decoded = text(value)
        except BAD_VALUE as err:
            return 1, failure(err)
        try:
            return _encode(decoded)
        except BAD_VALUE as err:
            return 2, failure(err)

    def header_item(
        self,
        name: bytes,
        json: bytes | None,
        int_value: int | None,
        bool_value: bool | None,
        string: bytes,
    ) -> str | None:
        """Sets one ChromeMetadata item in the header (None), or why it fails the packet."""
        try:
            value = header_value(
                None if json is None else _as_read(json), int_value, bool_value, _as_read(string)
            )
        except BAD_VALUE as err:
            return failure(err)
        self.header[text(_as_read(name))] = value
        return None

    def flow_kind(self, category: str) -> bool:
        """Whether a category makes an arrow "ac2g"."""
        return flow_kind(category) == "ac2g"
