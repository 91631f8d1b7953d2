"""Columns straight from event text, by the optional compiled scanner (`_scan.c`).

The scanner reads a run of whole events once, without the GIL, into raw columns and
string tables; this module gives them the shape `columns.build_chunk` gives decoded
events, through the same phase, kind, duration and metadata rules. Where the scanner
meets anything it does not read exactly as msgspec does, it says why and the text goes
the msgspec way (`None` here). Without a compiler at install time there is no scanner and
every chunk goes the msgspec way; `KINETOSCOPE_SCANNER=python` asks for that too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from ..model.categories import Kind
from .columns import (
    INTERNED,
    Chunk,
    build_chunk,
    build_text_chunk,
    clean_durations,
    kinds,
    meta_entries,
    phase_table,
)
from .event_text import skip_separator
from .schema import Event

try:
    from . import _scan  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the msgspec path does everything
    _scan = None

_META = "M"
_STRING = msgspec.json.Decoder(str)
_WIDE_FLOATS = frozenset(
    ("ts", "dur", "blocks_per_sm", "occupancy", "nbytes", "total_allocated", "total_reserved")
)


def scanner_enabled() -> bool:
    """Whether chunks are read by the compiled scanner (built, and not switched off)."""
    return _scan is not None and os.environ.get("KINETOSCOPE_SCANNER", "") != "python"


def scan_text(body: bytes, start: int = 0) -> dict[str, Any] | str:
    """The scanner's raw columns of `body[start:]` (read in place, not copied), or why it
    left the text to msgspec."""
    if _scan is None:
        return "the compiled scanner is not built"
    if not body.isascii():
        try:  # the scanner checks structure, not UTF-8; msgspec rejects bad UTF-8
            body.decode("utf-8")
        except UnicodeDecodeError:
            return "text that is not UTF-8"
    text = memoryview(body)[start:] if start else body
    return _scan.scan(text, _unescaped)  # type: ignore[no-any-return]


def _unescaped(token: bytes) -> str | None:
    """The text of a JSON string token with escapes, as msgspec reads it (None: it does not)."""
    try:
        return _STRING.decode(token)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def chunk_from_text(body: bytes) -> Chunk | None:
    """The Chunk of `body` (whole events joined by commas), or None: decode it with msgspec."""
    if not scanner_enabled():
        return None
    raw = scan_text(body)
    return None if isinstance(raw, str) else _chunk(raw)


@dataclass
class ScannedSlice:
    """A slice's raw columns, as a scanning thread leaves them (see `scan_slice`)."""

    raw: dict[str, Any]
    used: int


def scan_slice(body: bytes) -> ScannedSlice | Chunk:
    """In a scanning thread: the raw columns of a slice from `iter_event_pieces`, made
    into a Chunk by the merging thread (`as_chunk`). A slice cut inside an event (the
    scanner then declines it) goes the msgspec way, which finds the whole events in it
    and says how much text they used.

    Why the merging thread: the chunk's columns live until the model is joined, and
    memory a thread allocates stays in that thread's malloc arena once freed, where the
    views computed next cannot reuse it (+20-30 MB of peak RSS, measured)."""
    start = skip_separator(body, 0)
    raw = scan_text(body, start) if scanner_enabled() and start < len(body) else None
    if isinstance(raw, dict):
        return ScannedSlice(raw, len(body))
    return build_text_chunk(body)


def as_chunk(result: ScannedSlice | Chunk | list[Event]) -> Chunk:
    """The Chunk of what a reader gave: a scanning thread's raw columns, a Chunk made
    already, or decoded events (the msgspec path)."""
    if isinstance(result, Chunk):
        return result
    if isinstance(result, list):
        return build_chunk(result)
    chunk = _chunk(result.raw, copy=True)
    chunk.used = result.used
    return chunk


def text_slice_chunk(body: bytes) -> Chunk:
    """In a worker process: the Chunk of a slice from `iter_event_pieces`."""
    return as_chunk(scan_slice(body))


def _chunk(raw: dict[str, Any], copy: bool = False) -> Chunk:
    """The Chunk of the scanner's raw columns; `copy`: no column is a view of them."""
    tables: dict[str, list[Any]] = raw["tables"]
    codes = {k: np.frombuffer(v, dtype=np.int32) for k, v in raw["codes"].items()}
    wide = {
        k: np.frombuffer(v, dtype=np.float64 if k in _WIDE_FLOATS else np.int64)
        for k, v in raw["columns"].items()
        if k != "has_stack"
    }
    wide["has_stack"] = np.frombuffer(raw["columns"]["has_stack"], dtype=np.bool_)
    blob: bytes = raw["args"]
    is_meta = np.array([v == _META for v in tables["ph"]], dtype=bool)[codes["ph"]]
    meta: list[tuple[Any, Any, str, Any]] = []
    if is_meta.any():
        meta = _meta(tables, codes, wide, blob, is_meta)
        blob = _without_rows(blob, wide["args_len"], is_meta)
        keep = ~is_meta
        wide = {k: v[keep] for k, v in wide.items()}
        codes["ph"] = codes["ph"][keep]
        for key in INTERNED:
            codes[key], tables[key] = _first_appearance(codes[key][keep], tables[key])
    cols = {"ph": phase_table(tables["ph"])[codes["ph"]]}
    cols.update({key: codes[key] for key in INTERNED})
    cols["kind"] = kinds(tables["cat"], tables["name"], cols)
    cols["ts"] = wide["ts"].copy() if copy else wide["ts"]
    negative = int(np.count_nonzero(wide["dur"] < 0))
    cols["dur"] = clean_durations(wide["dur"].copy())
    cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, wide["id"], -1)
    cols["args_end"] = np.cumsum(wide["args_len"])
    external = wide["external_id"]
    cols["external_id"] = np.where(external >= 0, external, wide["external_id_lower"])
    cols["device"] = wide["device"].astype(np.int32)
    for key in ("correlation", "stream", "has_stack", "work_sig", "python_id", "python_parent_id"):
        cols[key] = wide[key].copy() if copy else wide[key]
    cols["blocks_per_sm"] = wide["blocks_per_sm"].astype(np.float32)
    cols["occupancy"] = wide["occupancy"].astype(np.float32)
    return Chunk(
        cols=cols,
        tables={k: tables[k] for k in INTERNED},
        args=blob,
        memory=_memory_part(cols["kind"], wide),
        meta=meta,
        warnings=[],
        events=int(raw["events"]),
        negative_durations=negative,
    )


def _meta(
    tables: dict[str, list[Any]],
    codes: dict[str, np.ndarray],
    wide: dict[str, np.ndarray],
    blob: bytes,
    is_meta: np.ndarray,
) -> list[tuple[Any, Any, str, Any]]:
    rows = np.flatnonzero(is_meta)
    ends = np.cumsum(wide["args_len"])
    starts = ends - wide["args_len"]
    raws = [msgspec.Raw(blob[s:e]) for s, e in zip(starts[rows].tolist(), ends[rows].tolist())]

    def values(key: str) -> list[Any]:
        return [tables[key][c] for c in codes[key][rows].tolist()]

    return meta_entries(values("pid"), values("tid"), values("name"), raws)


def _without_rows(blob: bytes, lengths: np.ndarray, drop: np.ndarray) -> bytes:
    """The args text of the rows not dropped."""
    keep_byte = np.repeat(~drop, lengths)
    return np.frombuffer(blob, dtype=np.uint8)[keep_byte].tobytes()


def _first_appearance(codes: np.ndarray, values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes into a table of only the values used, in order of first use (as the
    msgspec path's tables are once metadata events are set aside)."""
    used, first = np.unique(codes, return_index=True)
    used = used[np.argsort(first)]
    remap = np.zeros(len(values), dtype=np.int32)
    remap[used] = np.arange(used.size, dtype=np.int32)
    return remap[codes], [values[i] for i in used.tolist()]


def _memory_part(kind: np.ndarray, wide: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    rows = np.flatnonzero(kind == Kind.MEMORY)
    if rows.size == 0:
        return None
    return {
        "row": rows.astype(np.int64),
        "bytes": wide["nbytes"][rows],
        "addr": wide["addr"][rows],
        "device_type": wide["device_type"][rows].astype(np.int32),
        "device_id": wide["device_id"][rows].astype(np.int32),
        "total_allocated": wide["total_allocated"][rows],
        "total_reserved": wide["total_reserved"][rows],
    }
