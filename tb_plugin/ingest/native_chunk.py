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
from typing import Any

import msgspec
import numpy as np

from ..model.categories import Kind, Phase, memory_names
from .columns import (
    INTERNED,
    Chunk,
    build_chunk,
    build_text_chunk,
    kind_table,
    meta_entries,
    phase_table,
)
from .event_text import skip_separator
from .pieces import Seamed
from .schema import Event

try:
    from . import _scan  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the msgspec path does everything
    _scan = None

_META = "M"
_NONE = np.zeros(0, dtype=np.uint8)
_STRING = msgspec.json.Decoder(str)
# The dtypes of the scanner's columns (`_scan.c`: COLUMNS, MEMORY).
_COLUMN_TYPES = {
    "ts": np.float64,
    "dur": np.float64,
    "id": np.int64,
    "args_end": np.int64,
    "external_id": np.int64,
    "correlation": np.int64,
    "device": np.int32,
    "stream": np.int64,
    "blocks_per_sm": np.float32,
    "occupancy": np.float32,
    "has_stack": np.bool_,
    "work_sig": np.int64,
    "python_id": np.int64,
    "python_parent_id": np.int64,
}
_MEMORY_TYPES = {
    "row": np.int64,
    "bytes": np.float64,
    "addr": np.int64,
    "device_type": np.int32,
    "device_id": np.int32,
    "total_allocated": np.float64,
    "total_reserved": np.float64,
}
# A memory event without one of its args reads it as missing.
_MEMORY_MISSING = {"bytes": np.nan, "total_allocated": np.nan, "total_reserved": np.nan}


def scanner_enabled() -> bool:
    """Whether chunks are read by the compiled scanner (built, and not switched off)."""
    return _scan is not None and os.environ.get("KINETOSCOPE_SCANNER", "") != "python"


def scan_text(body: bytes | memoryview, start: int = 0) -> dict[str, Any] | str:
    """The scanner's raw columns of `body[start:]` (read in place, not copied), or why it
    left the text to msgspec."""
    if _scan is None:
        return "the compiled scanner is not built"
    return _scan.scan(b"", body, start, len(body), _unescaped)  # type: ignore[no-any-return]


def _unescaped(token: bytes) -> str | None:
    """The text of a JSON string token with escapes, as msgspec reads it (None: it does not)."""
    try:
        return _STRING.decode(token)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def chunk_from_text(body: bytes | memoryview) -> Chunk | None:
    """The Chunk of `body` (whole events joined by commas), or None: decode it with msgspec."""
    if not scanner_enabled():
        return None
    raw = scan_text(body)
    return None if isinstance(raw, str) else _chunk(raw)


def scan_slice(piece: bytes | Seamed) -> Chunk:
    """In a scanning thread: the Chunk of a slice from `iter_event_pieces`, its columns
    made there too (the merging thread only copies them into the model's). A slice cut
    inside an event (the scanner then declines it) goes the msgspec way, which finds the
    whole events in it and says how much text they used (`Chunk.used`). A `Seamed` slice
    is read where it lies; declined, it is joined and read as any slice."""
    if isinstance(piece, Seamed):
        raw = _scan_seamed(piece) if scanner_enabled() else None
        if isinstance(raw, dict):
            return _chunk(raw, used=len(piece))
        piece = piece.text()
    body = piece
    start = skip_separator(body, 0)
    raw = scan_text(body, start) if scanner_enabled() and start < len(body) else None
    if isinstance(raw, dict):
        return _chunk(raw, used=len(body))
    return build_text_chunk(body)


def _scan_seamed(piece: Seamed) -> dict[str, Any] | str:
    assert _scan is not None
    prefix = memoryview(piece.prefix)[skip_separator(piece.prefix, 0) :]
    return _scan.scan(prefix, piece.block, piece.start, piece.end, _unescaped)  # type: ignore[no-any-return]


def as_chunk(result: Chunk | list[Event]) -> Chunk:
    """The Chunk of what a reader gave: a Chunk made already, or decoded events (the
    msgspec path)."""
    return build_chunk(result) if isinstance(result, list) else result


def text_slice_chunk(body: bytes | Seamed) -> Chunk:
    """In a worker process: the Chunk of a slice from `iter_event_pieces` (its args as
    bytes: a scanner's buffer does not cross to another process). The buffers the
    scanner kept are let go of (the last chunk's come back once it is sent): an idle
    worker holds one chunk's at most."""
    chunk = scan_slice(body)
    chunk.args = bytes(chunk.args)
    release_scan_buffers()
    return chunk


def release_scan_buffers() -> None:
    """Free the buffers the scanner keeps for its next scans (the last chunks' columns
    and args text): once a load ends."""
    if _scan is not None:
        _scan.release_buffers()


def _chunk(raw: dict[str, Any], used: int = 0) -> Chunk:
    """The Chunk of the scanner's raw columns (views of its buffers, read-only, where
    no rule changes them: the model builder copies them into the model's columns)."""
    tables: dict[str, list[Any]] = raw["tables"]
    codes = {k: np.frombuffer(v, dtype=np.int32) for k, v in raw["codes"].items()}
    wide: dict[str, np.ndarray] = {
        k: np.frombuffer(v, dtype=_COLUMN_TYPES[k]) for k, v in raw["columns"].items()
    }
    memory: dict[str, np.ndarray] = {
        k: np.frombuffer(v, dtype=_MEMORY_TYPES[k]) for k, v in raw["memory"].items()
    }
    blob: Any = raw["args"]
    meta: list[tuple[Any, Any, str, Any]] = []
    is_meta = (
        np.array([v == _META for v in tables["ph"]], dtype=bool)[codes["ph"]]
        if _META in tables["ph"]  # most chunks have none: no numpy call then
        else None
    )
    if is_meta is not None and is_meta.any():
        lengths = np.diff(wide["args_end"], prepend=0)
        meta = _meta(tables, codes, wide["args_end"], lengths, blob, is_meta)
        blob = _without_rows(blob, lengths, is_meta)
        keep = ~is_meta
        wide = {k: v[keep] for k, v in wide.items()}
        wide["args_end"] = np.cumsum(lengths[keep])
        memory = _memory_without_meta(memory, keep)
        codes["ph"] = codes["ph"][keep]
        for key in INTERNED:
            codes[key], tables[key] = _first_appearance(codes[key][keep], tables[key])
    cols, negative, memory_rows = row_columns(tables, codes, wide)
    for key in _COLUMN_TYPES:
        if key not in ("dur", "id"):
            cols[key] = wide[key]
    return Chunk(
        cols=cols,
        tables={k: tables[k] for k in INTERNED},
        args=blob,
        memory=_memory_part(cols["kind"], memory) if memory_rows else None,
        meta=meta,
        warnings=[],
        events=int(raw["events"]),
        used=used,
        negative_durations=negative,
        int32_columns=_int32_columns(raw["wide"]),
    )


def row_columns(
    tables: dict[str, list[Any]], codes: dict[str, np.ndarray], wide: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], int, int]:
    """The chunk's phase, interned, kind, duration and flow id columns (the rules of
    `columns.build_chunk`: `phase_table`, `kinds`, `clean_durations`), made by `_scan.rows`
    in one call without the GIL; its negative durations and memory rows."""
    assert _scan is not None
    rows = codes["ph"].size
    cols = {key: codes[key] for key in INTERNED}
    cols.update(
        ph=np.empty(rows, np.uint8),
        kind=np.empty(rows, np.uint8),
        dur=np.empty(rows, np.float64),
        flow_id=np.empty(rows, np.int64),
    )
    is_memory_name = memory_names(tables["name"])
    memory_name = _NONE if is_memory_name is None else is_memory_name.view(np.uint8)
    phases, instant = len(Phase), Phase.INSTANT
    negative, memory_rows = _scan.rows(
        codes["ph"], phase_table(tables["ph"]), codes["cat"], codes["name"],
        kind_table(tables["cat"]), memory_name, wide["dur"], wide["id"],
        cols["ph"], cols["kind"], cols["dur"], cols["flow_id"],
        phases, instant, Kind.MEMORY, Kind.FLOW,
    )  # fmt: skip
    return cols, negative, memory_rows


# Each narrow model column the scanner checks, by the scanner's column it is made of
# (`flow_id` is `id` or -1; rows set aside later keep a column within int32).
_NARROW_OF_SCANNED = {
    "id": "flow_id",
    "external_id": "external_id",
    "correlation": "correlation",
    "stream": "stream",
    "python_id": "python_id",
    "python_parent_id": "python_parent_id",
}


def _int32_columns(wide: list[str]) -> frozenset[str]:
    """The narrow model columns whose scanned values all fit int32 (`wide`: the scanner's
    columns with a value that does not)."""
    return frozenset(v for k, v in _NARROW_OF_SCANNED.items() if k not in wide)


def _meta(
    tables: dict[str, list[Any]],
    codes: dict[str, np.ndarray],
    ends: np.ndarray,
    lengths: np.ndarray,
    blob: Any,
    is_meta: np.ndarray,
) -> list[tuple[Any, Any, str, Any]]:
    rows = np.flatnonzero(is_meta)
    text = memoryview(blob)
    starts = (ends - lengths)[rows].tolist()
    raws = [msgspec.Raw(bytes(text[s:e])) for s, e in zip(starts, ends[rows].tolist())]

    def values(key: str) -> list[Any]:
        return [tables[key][c] for c in codes[key][rows].tolist()]

    return meta_entries(values("pid"), values("tid"), values("name"), raws)


def _memory_without_meta(memory: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    """The memory args of the rows kept, their rows counted among the rows kept."""
    rows = memory["row"]
    kept = keep[rows]
    out = {k: v[kept] for k, v in memory.items()}
    out["row"] = (np.cumsum(keep) - 1)[rows[kept]]
    return out


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


def _memory_part(kind: np.ndarray, memory: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """The memory table of the chunk's `[memory]` events, from the args of the events that
    have memory args (a memory event without them reads them as missing)."""
    rows = np.flatnonzero(kind == Kind.MEMORY)
    if rows.size == 0:
        return None
    at = np.searchsorted(memory["row"], rows)
    has = at < memory["row"].size
    has[has] = memory["row"][at[has]] == rows[has]
    at = np.where(has, at, 0)
    out = {"row": rows.astype(np.int64)}
    for key, column in memory.items():
        if key != "row":
            values = column[at] if column.size else np.zeros(rows.size, column.dtype)
            out[key] = np.where(has, values, _MEMORY_MISSING.get(key, -1)).astype(column.dtype)
    return out
