"""The compiled scanner against the msgspec path on one text: shared by test_native_scan,
the fuzzer (tests/fuzz_scanner.py) and its regression tests."""

from __future__ import annotations

import traceback
from typing import Any

import numpy as np
from kinetoscope.ingest import native_chunk
from kinetoscope.ingest.columns import INTERNED, Chunk, build_chunk
from kinetoscope.ingest.event_text import decode_events
from kinetoscope.ingest.text_blocks import DecodeReport


def python_chunk(body: bytes) -> Chunk | None:
    events = decode_events(body, DecodeReport())
    return None if events is None else build_chunk(events)


def rows_of(chunk: Chunk) -> dict[str, Any]:
    """Everything a chunk says, with codes turned into their values (a table may hold one
    value twice when two texts spell it differently; the merge joins them)."""
    out: dict[str, Any] = {k: v for k, v in chunk.cols.items() if k not in INTERNED}
    for key in INTERNED:
        out[key] = [chunk.tables[key][c] for c in chunk.cols[key].tolist()]
    out["args"] = chunk.args
    out["memory"] = chunk.memory
    out["meta"] = chunk.meta
    out["events"] = chunk.events
    return out


def assert_same_rows(native: dict[str, Any], expected: dict[str, Any]) -> None:
    assert native.keys() == expected.keys()
    for key, want in expected.items():
        got = native[key]
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype, key
            assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), key
        elif key == "memory" and want is not None:
            assert got is not None and got.keys() == want.keys()
            for name, column in want.items():
                assert np.array_equal(got[name], column, equal_nan=True), name
        else:
            assert got == want, key
            # 1 == 1.0 == True in Python: the types must match too (int pid vs str pid).
            if isinstance(want, list):
                assert [type(v) for v in got] == [type(v) for v in want], key


def disagreement(body: bytes) -> str | None:
    """None when both paths agree on `body`: the same rows, or msgspec rejects it and the
    scanner declines it too, or the scanner declines (msgspec then reads it). Otherwise
    what differs (an exception in either path counts)."""
    try:
        expected = python_chunk(body)
    except Exception:  # noqa: BLE001 - a crash of the msgspec path is a finding too
        return "msgspec path raised: " + traceback.format_exc(limit=4)
    try:
        raw = native_chunk.scan_text(body)
        if isinstance(raw, str):
            return None
        if expected is None:
            return "the scanner read a text msgspec rejects"
        native = native_chunk.chunk_from_text(body)
        if native is None:
            return "scan_text read the text but chunk_from_text did not"
        assert_same_rows(rows_of(native), rows_of(expected))
    except AssertionError as error:
        return f"different rows: {error!r}"
    except Exception:  # noqa: BLE001
        return "scanner path raised: " + traceback.format_exc(limit=4)
    return None
