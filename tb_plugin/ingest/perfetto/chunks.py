"""The compiled Perfetto reader's chunks (`_native.c`) as the column builder's Chunks: the
columns `columns.build_chunk` makes of the same events, and its own reading of the core
args where a chunk has a value the compiled reader leaves to it."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from ...model.categories import Kind
from .. import native_chunk
from ..columns import INTERNED, Chunk, arg_columns, clean_durations, kinds, phase_table

_INT_COLUMNS = frozenset(
    ("id", "args_len", "external_id", "external_id_lower", "correlation", "device", "stream")
    + ("addr", "device_type", "device_id", "python_id", "python_parent_id")
)


def chunk_of(raw: dict[str, Any]) -> Chunk:
    """The Chunk of one of the compiled reader's chunks: the columns `columns.build_chunk`
    makes of the same events."""
    tables: dict[str, list[Any]] = raw["tables"]
    codes = {k: np.frombuffer(v, dtype=np.int32) for k, v in raw["codes"].items()}
    wide = {
        k: np.frombuffer(v, dtype=np.int64 if k in _INT_COLUMNS else np.float64)
        for k, v in raw["columns"].items()
        if k != "has_stack"
    }
    cols, negative, memory_rows = _row_columns(tables, codes, wide)
    cols["ts"] = wide["ts"]
    cols["args_end"] = np.cumsum(wide["args_len"])
    blob = raw["args"]  # a buffer (the builder writes it to its args file as it is)
    if raw["python_core"]:  # a value only the column builder reads as it does
        ends, text = cols["args_end"].tolist(), bytes(blob)
        raws = [msgspec.Raw(text[s:e]) for s, e in zip([0, *ends[:-1]], ends)]
        memory = arg_columns(cols, raws, wide["args_len"], text)
    else:
        external = wide["external_id"]
        cols["external_id"] = np.where(external >= 0, external, wide["external_id_lower"])
        cols["correlation"] = wide["correlation"]
        cols["device"] = wide["device"].astype(np.int32)
        cols["stream"] = wide["stream"]
        cols["blocks_per_sm"] = wide["blocks_per_sm"].astype(np.float32)
        cols["occupancy"] = wide["occupancy"].astype(np.float32)
        cols["has_stack"] = np.frombuffer(raw["columns"]["has_stack"], dtype=np.bool_)
        cols["work_sig"] = np.full(len(external), -1, dtype=np.int64)
        cols["python_id"] = wide["python_id"]
        cols["python_parent_id"] = wide["python_parent_id"]
        memory = _memory_part(cols["kind"], wide) if memory_rows else None
    return Chunk(
        cols=cols,
        tables={k: tables[k] for k in INTERNED},
        args=blob,
        memory=memory,
        meta=[],
        warnings=[],
        events=int(raw["events"]),
        negative_durations=negative,
    )


def _row_columns(
    tables: dict[str, list[Any]], codes: dict[str, np.ndarray], wide: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], int, int]:
    """The chunk's phase, interned, kind, duration and flow id columns; its negative
    durations and memory rows. The JSON scanner's `_scan.rows` makes them in one call
    without the GIL where it is built (numpy's ~12 calls a chunk each may hand the GIL
    to the reading thread and wait to get it back); else numpy, by the same rules."""
    if native_chunk.scanner_enabled():
        return native_chunk.row_columns(tables, codes, wide)
    cols = {"ph": phase_table(tables["ph"])[codes["ph"]]}
    cols.update({key: codes[key] for key in INTERNED})
    cols["kind"] = kinds(tables["cat"], tables["name"], cols)
    dur = wide["dur"].copy()
    negative = int(np.count_nonzero(dur < 0))
    cols["dur"] = clean_durations(dur)
    cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, wide["id"], -1)
    return cols, negative, int(np.count_nonzero(cols["kind"] == Kind.MEMORY))


def _memory_part(kind: np.ndarray, wide: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """The memory table of the chunk's `[memory]` events (a memory event without memory
    args reads them as missing: the reader's defaults, NaN and -1)."""
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
