"""A trace file as plain Python data, read with the standard library only."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any


@dataclass
class RawTrace:
    """A trace's header (every top-level key but the events) and its events, as written."""

    path: Path
    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)

    def complete(self, *cats: str) -> list[dict[str, Any]]:
        """Complete (`ph: X`) events of the given categories (any category when none)."""
        wanted = set(cats)
        return [
            e for e in self.events if e.get("ph") == "X" and (not wanted or e.get("cat") in wanted)
        ]


def read_raw(path: str | Path) -> RawTrace:
    """Parse a `.json` or `.json.gz` trace; a bare top-level array (before 2021) too.
    Empty `{}` events (JAX's exporter ends its list with one) are dropped."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    if isinstance(doc, list):
        return RawTrace(path, {}, [e for e in doc if isinstance(e, dict) and e])
    events = doc.get("traceEvents") or []
    header = {k: v for k, v in doc.items() if k != "traceEvents"}
    return RawTrace(path, header, [e for e in events if isinstance(e, dict) and e])


def ns(value: Any) -> int:
    """A time in µs as written (int or float) as exact integer nanoseconds: ints exactly,
    floats by their shortest decimal text past 2**52 ns (epoch µs × 1000 is past it, where
    `round(value * 1000)` is off by tens of ns)."""
    if isinstance(value, int):
        return value * 1000
    if abs(value) * 1000 < 2**52:
        return round(value * 1000)
    return int((Decimal(repr(value)) * 1000).to_integral_value(ROUND_HALF_EVEN))
