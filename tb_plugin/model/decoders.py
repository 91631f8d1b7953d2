"""JSON decoders of event args, one pair a shape, shared by every thread."""

from __future__ import annotations

import threading
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

_decoders: dict[type, tuple[Any, Any]] = {}
_decoders_lock = threading.Lock()


def decoders_for(shape: type[T]) -> tuple[msgspec.json.Decoder[list[T]], msgspec.json.Decoder[T]]:
    """JSON decoders of `list[shape]` and `shape`, built once per shape.

    msgspec fills a Struct type's decoding info on first use, and two threads doing that
    for the same type at once can crash the process (seen with msgspec 0.22): build under a
    lock, then share.
    """
    with _decoders_lock:
        pair = _decoders.get(shape)
        if pair is None:
            pair = (msgspec.json.Decoder(list[shape]), msgspec.json.Decoder(shape))  # type: ignore[valid-type]
            _decoders[shape] = pair
        return pair
