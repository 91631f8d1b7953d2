"""Perfetto flows as Kineto's flow events, and metadata values."""

from __future__ import annotations

from typing import Any

import msgspec

from ...model.categories import CATEGORY_KINDS, GPU_ACTIVITY_KINDS, LAUNCH_KINDS
from ..schema import Event
from .rules import text


def flow_kind(*categories: str | None) -> str:
    """Kineto's arrow kind: "ac2g" where a side is a launch call or GPU work (between a
    launch and its kernel), "fwdbwd" otherwise (between operators)."""
    for category in categories:
        kind = CATEGORY_KINDS.get((category or "").lower())
        if kind in GPU_ACTIVITY_KINDS or kind in LAUNCH_KINDS:
            return "ac2g"
    return "fwdbwd"


def flow_event(ph: str, at: Event, flow: int, kind: str) -> Event:
    return Event(
        ph=ph,
        cat=kind,
        name=kind,
        pid=at.pid,
        tid=at.tid,
        ts=at.ts,
        id=flow,
        bp="e" if ph == "f" else None,
    )


def metadata_value(item: Any) -> Any:
    """The value of a ChromeMetadata item (a trace's top-level key of the JSON form)."""
    return header_value(
        item.json_value if item.HasField("json_value") else None,
        item.int_value if item.HasField("int_value") else None,
        item.bool_value if item.HasField("bool_value") else None,
        item.string_value,
    )


def header_value(
    json: str | bytes | None, int_value: int | None, bool_value: bool | None, string: str | bytes
) -> Any:
    """The first of a metadata item's JSON (decoded), int, bool and string values it has."""
    if json is not None:
        try:
            return msgspec.json.decode(json)
        except (msgspec.DecodeError, UnicodeDecodeError):  # not JSON, or not UTF-8
            return text(json)
    if int_value is not None:
        return int_value
    if bool_value is not None:
        return bool_value
    return text(string)
