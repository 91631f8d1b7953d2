"""Damage is never reported as whole (issue 27): each damaged input loads `partial` with a
warning that says what was lost, or fails with a clear error when nothing was read, and
the compiled scanner and the msgspec path (KINETOSCOPE_SCANNER=python) agree, read in
one thread or in slices by scanning threads."""

from __future__ import annotations

import functools
import gzip
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from kinetoscope.ingest import decode, text_blocks
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.decode import TraceDecodeError
from kinetoscope.model.trace_model import TraceModel
from test_native_scan import assert_same_model

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

READERS = ["", "python"]  # the compiled scanner (where built), msgspec


def _text() -> str:
    t = TraceBuilder()
    for i in range(40):
        t.op(f"aten::op{i % 7}", i * 10, 5, **{"Input Dims": [[i, 3]]})
    return json.dumps({"schemaVersion": 1, "traceEvents": t.events, "traceName": "x"})


def _deep(text: str) -> str:
    return text.replace('"args": {', '"args": {"deep": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1)


def _huge_ts(text: str) -> str:
    return text.replace('"ts": 200', '"ts": 2' + "0" * 10_000_000, 1)


def _deep_header(text: str) -> str:
    return '{"meta": ' + "[" * 100_000 + "]" * 100_000 + ", " + text[1:]


TEXT = _text()
# name: (text, events kept, what the warning says)
PARTIAL = {
    "ends inside a string": (TEXT[: TEXT.index("aten::op3", 2000) + 5], 17, "not closed"),
    "ends inside an event": (TEXT[: TEXT.index('"ts"', 2000)], 13, "not closed"),
    "ends inside the array": (TEXT[: TEXT.rindex("]")], 40, "not closed"),
    "ends inside the object": (TEXT[:-1], 40, "top-level object is closed"),
    "args nested 100k deep": (_deep(TEXT), 39, "unreadable piece"),
    "a 10 MB timestamp": (_huge_ts(TEXT), 39, "unreadable piece"),
    "a header nested 100k deep": (_deep_header(TEXT), 40, "keys before the events array"),
}
# name: (text, error kind, what the message says)
FAILED = {
    "only [": ("[", "unreadable", "no event could be read"),
    "only an open array": ('{"traceEvents": [', "unreadable", "no event could be read"),
    "blanks only": (" \n\t \r\n  ", "empty_file", "only blank text"),
    "empty": ("", "empty_file", "0 bytes"),
}


def _load(path: Path, reader: str, threads: str, monkeypatch: pytest.MonkeyPatch) -> TraceModel:
    monkeypatch.setenv("KINETOSCOPE_SCANNER", reader)
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    return build_model(str(path))


@pytest.fixture(params=["1", "3"], ids=["one thread", "slices"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param != "1":  # small slices, so the text is cut into many
        monkeypatch.setattr(decode, "CHUNK_TARGET", 600)
        monkeypatch.setattr(text_blocks, "READ_BLOCK", 97)
    return str(request.param)


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_damaged_inputs_load_partial_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str, case: str
) -> None:
    text, kept, warning = PARTIAL[case]
    if threads != "1" and len(text) > 1 << 20:
        pytest.skip("97-byte reads of 10 MB: the one-thread case covers it")
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(text)
    models = [_load(path, reader, threads, monkeypatch) for reader in READERS]
    for model in models:
        assert model.partial, case
        assert any(warning in w for w in model.warnings), model.warnings
        assert len(model) == kept
    if threads != "1":
        # A scanning thread does not know where its slice starts in the file: the byte
        # offsets its warnings give are the slice's (the msgspec path does not slice).
        for model in models:
            model.warnings[:] = [re.sub(r"at byte \d+", "at byte N", w) for w in model.warnings]
    assert_same_model(*models)


@pytest.mark.parametrize("case", sorted(FAILED))
def test_nothing_read_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str, case: str
) -> None:
    text, kind, message = FAILED[case]
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(text)
    for reader in READERS:
        with pytest.raises(TraceDecodeError) as info:
            _load(path, reader, threads, monkeypatch)
        assert info.value.kind == kind and message in info.value.message


def test_negative_zero_reads_as_zero_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = TraceBuilder()
    t.op("a", 0, 5)
    t.op("b", 1, 5)
    t.op("c", 2, 5)
    text = json.dumps({"traceEvents": t.events})
    text = text.replace('"ts": 0', '"ts": -0', 1).replace('"ts": 1', '"ts": -0.0', 1)
    text = text.replace('"dur": 5', '"dur": -0', 1)
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(text)
    models = [_load(path, reader, "1", monkeypatch) for reader in READERS]
    for model in models:
        assert model.events["ts"].tolist()[:2] == [0.0, 0.0]
        assert not np.signbit(model.events["ts"]).any()
        assert not np.signbit(model.events["dur"]).any()
        assert not model.partial
    assert_same_model(*models)


@functools.cache
def _big_gzip_trace() -> bytes:
    """About 1 MB of gzip: 60k events with args, as a profiler writes them."""
    t = TraceBuilder()
    for i in range(60_000):
        t.op(f"aten::op{i % 97}", i * 10, 5, **{"Input Dims": [[i % 512, 3]]})
    return gzip.compress(json.dumps({"traceEvents": t.events}, indent=1).encode(), 6)


@pytest.mark.parametrize("where", [0.2, 0.5, 0.8])
@pytest.mark.parametrize(
    ("reader", "threads"), [("", "1"), ("python", "1"), ("", "3")], ids=["C", "msgspec", "slices"]
)
def test_one_flipped_bit_in_gzip_loads_partial_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: float, reader: str, threads: str
) -> None:
    data = bytearray(_big_gzip_trace())
    assert 500_000 < len(data) < 2_000_000
    data[int(len(data) * where)] ^= 0x10
    path = tmp_path / "w.1.pt.trace.json.gz"
    path.write_bytes(bytes(data))
    started = time.perf_counter()
    model = _load(path, reader, threads, monkeypatch)
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0, f"{elapsed:.2f} s"
    assert model.partial and 0 < len(model) < 60_000
    assert any("damaged" in w for w in model.warnings), model.warnings
    # What was kept came before the damage: the events in file order, none invented.
    assert np.array_equal(model.events["ts"], np.arange(len(model)) * 10.0)
