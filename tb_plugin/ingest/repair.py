"""Repairs of trace text that is not quite JSON, applied only to text that failed to decode.

Each repair is reported once in `warnings`. Like Python's own `json` module, the values
that odd writers emit are read rather than rejected: bare `N/A`, `NaN` and `Infinity`
(read as null, i.e. missing), numbers beyond float range (null), raw control characters
and bytes that are not UTF-8.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

_VALUE_START = rb"(?<=[:\[,])(\s*)"
_VALUE_END = rb"(?=\s*[,\]}])"
_BARE_NA = re.compile(_VALUE_START + rb"N/A" + _VALUE_END)
_NON_FINITE = re.compile(_VALUE_START + rb"(?:-?Infinity|NaN)" + _VALUE_END)
_BIG_EXPONENT = re.compile(_VALUE_START + rb"(-?\d+(?:\.\d+)?[eE]\+?\d{3,})" + _VALUE_END)
_CONTROL = bytes(range(0x20)).translate(None, b"\t\n\r")
_CONTROL_TO_SPACE = bytes.maketrans(_CONTROL, b" " * len(_CONTROL))


def repair_text(chunk: bytes, warnings: list[str]) -> bytes:
    """Fix what early and odd writers emit; returns `chunk` itself when nothing changed."""
    fixed = chunk
    try:
        fixed.decode("utf-8")
    except UnicodeDecodeError:
        fixed = fixed.decode("utf-8", errors="replace").encode("utf-8")
        warn_once(warnings, "bytes that are not UTF-8 were replaced by U+FFFD")
    if any(c in fixed for c in _CONTROL):
        stripped = fixed.translate(_CONTROL_TO_SPACE)
        if stripped != fixed:
            fixed = stripped
            warn_once(warnings, "raw control characters inside strings were replaced by spaces")
    if b"N/A" in fixed:
        message = 'bare N/A values (not JSON) were read as the string "N/A"'
        fixed = _substitute(_BARE_NA, rb'\1"N/A"', fixed, warnings, message)
    if b"NaN" in fixed or b"Infinity" in fixed:
        message = "NaN and Infinity values (not JSON) were read as missing"
        fixed = _substitute(_NON_FINITE, rb"\1null", fixed, warnings, message)
    if b"e" in fixed or b"E" in fixed:
        fixed = _substitute(
            _BIG_EXPONENT,
            _null_if_infinite,
            fixed,
            warnings,
            "numbers beyond float range were read as missing",
        )
    return fixed


def _null_if_infinite(match: re.Match[bytes]) -> bytes:
    return match.group(1) + b"null" if math.isinf(float(match.group(2))) else match.group(0)


def _substitute(
    pattern: re.Pattern[bytes],
    replacement: bytes | Callable[[re.Match[bytes]], bytes],
    text: bytes,
    warnings: list[str],
    message: str,
) -> bytes:
    changed = pattern.sub(replacement, text)
    if changed != text:
        warn_once(warnings, message)
        return changed
    return text


def warn_once(warnings: list[str], message: str) -> None:
    """Append `message` unless it is there: each repair or loss is reported once."""
    if message not in warnings:
        warnings.append(message)
