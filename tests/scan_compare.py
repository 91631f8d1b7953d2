"""The compiled scanner against the msgspec path on one text: shared by test_native_scan,
the fuzzer (tests/fuzz_scanner.py) and its regression tests."""

from __future__ import annotations

import traceback
from typing import Any

import msgspec
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
    out: dict[str, Any] = {
        k: v for k, v in chunk.cols.items() if k not in INTERNED and k != "work_sig"
    }
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
        assert np.all(expected.cols["work_sig"] == -1), "msgspec path: work_sig unknown"
        assert np.all(native.cols["work_sig"] != -1), "the scanner hashes every row"
        assert_work_sigs(native.cols["work_sig"], native.cols["args_end"], native.args)
    except AssertionError as error:
        return f"different rows: {error!r}"
    except Exception:  # noqa: BLE001
        return "scanner path raised: " + traceback.format_exc(limit=4)
    return None


# The work args the scanner hashes, by their index in its table of args keys (_scan.c).
WORK_KEYS = {
    "Input Dims": 17,
    "Input dims": 18,
    "Input type": 19,
    "Concrete Inputs": 20,
    "flops": 21,
}
_SEED, _MULTIPLIER, _MASK = 14695981039346656037, 0x9E3779B97F4A7C15, (1 << 64) - 1


def _work_step(h: int, word: int) -> int:
    h = ((h ^ word) * _MULTIPLIER) & _MASK
    return h ^ (h >> 32)


def _work_hash(h: int, key: int, value: bytes) -> int:
    """One work arg on top of `h`: a word of the key's number + 1 (top byte) and the
    value's length, then the value's text 8 bytes (little-endian) a word, the last padded
    with zeros; each word taken in by a multiply and an xorshift."""
    h = _work_step(h, (key + 1) << 56 ^ len(value))
    for at in range(0, len(value), 8):
        h = _work_step(h, int.from_bytes(value[at : at + 8], "little"))
    return h


def reference_work_sigs(args_end: np.ndarray, blob: Any) -> np.ndarray:
    """The scanner's `work_sig` of each row, computed here from the row's args text: the
    hash of each work arg (`_work_hash`), in the args' order, from a fixed seed; 0 without
    work args; 0 and 2**64 - 1 become 1 (after each arg, as the scanner keeps it)."""
    ends = args_end.tolist()
    data = bytes(blob)
    out = np.zeros(len(ends), dtype=np.int64)
    for row, (start, end) in enumerate(zip([0, *ends[:-1]], ends)):
        text = data[start:end]
        if not text.lstrip().startswith(b"{"):
            continue  # args that are not an object (kept as they are) hold no work args
        members = msgspec.json.decode(text, type=dict[str, msgspec.Raw])
        h = None
        for key, raw in members.items():
            if key in WORK_KEYS:
                h = _work_hash(_SEED if h is None else h, WORK_KEYS[key], bytes(raw))
                h = 1 if h in (0, _MASK) else h
        if h is not None:
            out[row] = np.array(h, dtype=np.uint64).view(np.int64)
    return out


def assert_work_sigs(work_sig: np.ndarray, args_end: np.ndarray, blob: Any) -> None:
    """Each known (not -1) `work_sig` is the hash of the row's work args."""
    known = work_sig != -1
    want = reference_work_sigs(args_end, blob)
    assert np.array_equal(work_sig[known], want[known]), "work_sig"
