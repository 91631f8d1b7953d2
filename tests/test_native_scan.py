"""The compiled scanner (`ingest/_scan.c`) against the msgspec path: the same columns for
every text it accepts, and the msgspec path for every text it must not read itself.

Each case is compared on one run of events (the Chunk both paths make of it) and through
the whole loader (the model of a file, scanner on and off). Where the scanner declines a
text, the test names the reason, so a case cannot silently stop exercising what it is for.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from corpus import corpus_path, corpus_traces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kinetoscope.ingest import column_sink, decode, native_chunk, text_blocks
from kinetoscope.ingest.build import THREADS_MIN_TEXT, build_model, scan_threads, text_size
from kinetoscope.ingest.column_sink import ColumnSink
from kinetoscope.ingest.schema import Event
from kinetoscope.model.trace_model import EVENT_COLUMNS, NARROW_COLUMNS, TraceModel
from scan_compare import assert_same_rows, assert_work_sigs, python_chunk, rows_of

pytestmark = pytest.mark.skipif(
    native_chunk._scan is None, reason="the compiled scanner is not built here"
)

KERNEL = (
    '{"ph": "X", "cat": "kernel", "name": "volta_sgemm", "pid": 0, "tid": 7, "ts": 12.5,'
    ' "dur": 3, "args": {"correlation": 9, "device": 0, "stream": 7, "blocks per SM": 0.5,'
    ' "est. achieved occupancy %": 25, "External id": 4}}'
)
OP = (
    '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 11, "tid": 11, "ts": 10,'
    ' "dur": 5, "args": {"External id": 4, "Input Dims": [[2, 3], [3, 4]],'
    ' "Call stack": "a.py(1): f;b.py(2): g"}}'
)


def both_paths(*events: str) -> tuple[dict[str, Any], dict[str, Any] | str]:
    """(msgspec path's rows, scanner's rows or its reason) of the events joined by commas."""
    body = ",\n".join(events).encode()
    expected = python_chunk(body)
    assert expected is not None, "the case must decode the msgspec way"
    raw = native_chunk.scan_text(body)
    if isinstance(raw, str):
        return rows_of(expected), raw
    native = native_chunk.chunk_from_text(body)
    assert native is not None
    return rows_of(expected), rows_of(native)


ACCEPTED = {
    "kernel and op": [KERNEL, OP],
    "escapes and non-ASCII": [
        '{"ph": "X", "cat": "cpu_op", "name": "a\\"b\\\\c\\u00e9\\n\\/", "pid": 1, "tid": 1,'
        ' "ts": 1, "dur": 1}',
        '{"ph": "X", "cat": "cpu_op", "name": "aé😀 tab\\t", "pid": 1, "tid": 1, "ts": 2}',
        # The same name spelled two ways: one value in the model.
        '{"ph": "X", "cat": "cpu_op", "name": "a\\u0062", "pid": 1, "tid": 1, "ts": 3}',
        '{"ph": "X", "cat": "cpu_op", "name": "ab", "pid": 1, "tid": 1, "ts": 4}',
    ],
    "string and int pids and tids": [
        '{"ph": "X", "cat": "cpu_op", "name": "n", "pid": "Spans", "tid": "1", "ts": 1}',
        '{"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 1, "ts": 1}',
        '{"ph": "X", "cat": "cpu_op", "name": "n", "pid": -3, "tid": "stream 7", "ts": 1}',
    ],
    "nulls everywhere": [
        '{"ph": "X", "cat": null, "name": null, "pid": null, "tid": null, "ts": null,'
        ' "dur": null, "id": null, "bp": null, "args": {"External id": null, "device": null,'
        ' "Bytes": null, "blocks per SM": null, "Call stack": null, "name": null}}',
    ],
    "absent fields": ["{}", '{"ph": "X"}', '{ "ph" : "i" , "ts" : 5 }'],
    "numbers": [
        '{"ph": "X", "name": "a", "ts": 1e3, "dur": 1.5E-7, "id": -0}',
        '{"ph": "X", "name": "b", "ts": -0.0, "dur": -4, "id": 123456789012345678}',
        '{"ph": "X", "name": "c", "ts": 12345678901234567890, "dur": 0.1}',
        '{"ph": "X", "name": "d", "ts": 1623143089861.123456789, "dur": 1e-400}',
        '{"ph": "X", "name": "e", "ts": 1700000000000123.5, "dur": 99999999999999999999e-5}',
        '{"ph": "X", "name": "f", "ts": 0.000001234567890123456789, "dur": 1E+2}',
        '{"ph": "X", "name": "g", "ts": 1623142623616568.0, "dur": 100.5000}',
        '{"ph": "X", "name": "h", "ts": 9007199254740993.000, "dur": 0.0100e-3}',
        '{"ph": "X", "name": "i", "ts": 1.00000000000000000000001, "dur": 0.0}',
    ],
    "memory events": [
        '{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1,'
        ' "tid": 1, "ts": 11, "args": {"Bytes": -64, "Addr": 4096, "Device Type": 1,'
        ' "Device Id": 0, "Total Allocated": 1024, "Total Reserved": 2048}}',
        '{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,'
        ' "ts": 12, "args": {"Bytes": null, "Addr": 4096}}',
        '{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": 13, "args": {}}',
    ],
    "metadata among events": [
        '{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}}',
        OP,
        '{"ph": "M", "name": "thread_name", "pid": 7, "tid": 9, "args": {"name": "main"}}',
        '{"ph": "M", "name": "process_sort_index", "pid": 7, "args": {"sort_index": 3}}',
        '{"ph": "M", "name": "process_labels", "pid": 7, "args": {"labels": "GPU 0"}}',
        '{"ph": "M", "name": "only_here", "pid": "meta pid"}',
        KERNEL,
    ],
    "flows": [
        '{"ph": "s", "id": 41, "pid": 1, "tid": 1, "ts": 10, "cat": "ac2g", "name": "ac2g"}',
        '{"ph": "f", "id": 41, "pid": 0, "tid": 7, "ts": 12, "cat": "ac2g", "name": "ac2g",'
        ' "bp": "e"}',
    ],
    "odd args values": [
        '{"ph": "X", "name": "a", "ts": 1, "args": []}',
        '{"ph": "X", "name": "b", "ts": 2, "args": [1, {"device": 3}]}',
        '{"ph": "X", "name": "c", "ts": 3, "args": "text"}',
        '{"ph": "X", "name": "d", "ts": 4, "args": 5}',
        '{"ph": "X", "name": "e", "ts": 5, "args": { }}',
        '{"ph": "X", "name": "f", "ts": 6, "args": {"Call stack": ""}}',
        '{"ph": "X", "name": "g", "ts": 7, "args": {"Call stack": ["x"]}}',
        '{"ph": "X", "name": "h", "ts": 8, "args": {"name": 12, "sort_index": "s"}}',
    ],
    "skipped values of every kind": [
        '{"ph": "X", "name": "a", "ts": 1, "extra": {"k": [1, -2.5e-3, true, false, null,'
        ' "s\\u00e9", {"deep": [[[[[]]]]]}]}, "args": {"Input Dims": [[1], []],'
        ' "Ev Idx": 3, "nested": {"a": {"b": {"c": [0]}}}}}',
    ],
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_the_scanner_reads_what_msgspec_reads(case: str) -> None:
    expected, native = both_paths(*ACCEPTED[case])
    assert not isinstance(native, str), f"the scanner declined: {native}"
    assert_same_rows(native, expected)


DECLINED = {
    "a key twice in an event": ('{"ph": "X", "name": "a", "name": "b"}', "a key twice"),
    "a key twice in args": ('{"ph": "X", "args": {"device": 1, "device": 2}}', "twice in args"),
    "an escaped key": ('{"ph": "X", "n\\u0061me": "a"}', "escaped key"),
    "an escaped args key": ('{"ph": "X", "args": {"B\\u0079tes": 1}}', "escaped key in args"),
    "a float in an int field": ('{"ph": "X", "args": {"device": 0.0}}', "int field"),
    "a string in an int field": ('{"ph": "X", "args": {"External id": "12"}}', "int field"),
    "a string timestamp": ('{"ph": "X", "ts": "12.5"}', "float field"),
    "a big int id": ('{"ph": "s", "id": 1234567890123456789}', "int field"),
    "an int name": ('{"ph": "X", "name": 12}', "unexpected type"),
    "a bool pid": ('{"ph": "X", "pid": true}', "unexpected type"),
    "a float tid": ('{"ph": "X", "tid": 1.5}', "int field"),
    "a list as labels": ('{"ph": "M", "args": {"labels": ["a"]}}', "unexpected type"),
    "a number out of range": ('{"ph": "X", "ts": 1e400}', "out of range"),
    "nested too deep": ('{"ph": "X", "x": ' + "[" * 200 + "]" * 200 + "}", "too deep"),
    # msgspec reads a surrogate escape only as a high one followed by an escaped low one.
    "a lone low surrogate": ('{"ph": "X", "x": "\\udc01"}', "lone surrogate"),
    "a lone high surrogate": ('{"ph": "X", "args": {"x": ["\\ud800"]}}', "lone surrogate"),
    "a high surrogate, then no low": ('{"ph": "X", "x": "\\ud800\\u0041"}', "lone surrogate"),
}


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_the_scanner_leaves_what_it_does_not_read_exactly_to_msgspec(case: str) -> None:
    text, reason = DECLINED[case]
    body = text.encode()
    result = native_chunk.scan_text(body)
    assert isinstance(result, str) and reason in result
    assert native_chunk.chunk_from_text(body) is None


@pytest.mark.parametrize(
    "body",
    [
        b'{"ph": "X"},',  # a comma after the last event
        b'{"ph": "X"} {"ph": "X"}',
        b'{"ph": "X", "name": "cut here},{',  # a cut inside a string
        b'{"ph": "X", "args": {"a": [1, 2}}',
        b'{"ph": "X", "ts": 01}',
        b'{"ph": "X", "ts": 1.}',
        b'{"ph": "X", "name": "a\x01b"}',
        b'{"ph": "X", "name": "bad \\x escape"}',
        b'{"ph": "X", "x": "\\udc01"}',  # a lone surrogate in a skipped value (fuzzer)
        b'{"ph": "X", "name": "\xff"}',
        b'{"ph": "X", "x": tru}',
        b'[{"ph": "X"}]',
    ],
)
def test_text_msgspec_rejects_is_never_read(body: bytes) -> None:
    # The typed decode fails (the loader then repairs or salvages it: see test_decode).
    with pytest.raises((msgspec.DecodeError, UnicodeDecodeError)):
        msgspec.json.Decoder(list[Event]).decode(b"[" + body + b"]")
    assert isinstance(native_chunk.scan_text(body), str)


def _json_value(depth: int = 2) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    )
    if depth == 0:
        return scalars
    inner = _json_value(depth - 1)
    containers = st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=4), inner, max_size=3
    )
    return scalars | containers


_EVENT_KEYS = ["ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp", "s", "args"]
_ARG_KEYS = ["External id", "correlation", "device", "stream", "Bytes", "Addr", "Call stack"]
_ARG_KEYS += ["blocks per SM", "Total Allocated", "name", "sort_index", "labels", "other"]
_PHASES = st.sampled_from(["X", "i", "s", "f", "M", "C", "B", "E", ""])


@st.composite
def _event(draw: st.DrawFn) -> dict[str, Any]:
    value = _json_value()
    event = draw(st.dictionaries(st.sampled_from(_EVENT_KEYS), value, max_size=6))
    if draw(st.booleans()):  # mostly well-typed events, as traces are
        event["ph"] = draw(_PHASES)
        event["name"] = draw(st.one_of(st.text(max_size=6), st.sampled_from(["[memory]", "n"])))
        event["ts"] = draw(st.one_of(st.integers(0, 2**60), st.floats(0, 1e16)))
        event["pid"] = draw(st.one_of(st.integers(-5, 2**40), st.text(max_size=3)))
        args = draw(st.dictionaries(st.sampled_from(_ARG_KEYS), st.integers(-9, 2**40)))
        event["args"] = args
    return event


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event(), min_size=1, max_size=6), st.booleans())
def test_random_events_read_the_same_both_ways(events: list[dict[str, Any]], ascii: bool) -> None:
    body = ",".join(json.dumps(e, ensure_ascii=ascii) for e in events).encode()
    expected = python_chunk(body)
    raw = native_chunk.scan_text(body)
    if expected is None:
        assert isinstance(raw, str)
        return
    if isinstance(raw, str):
        return  # declined: the msgspec path reads it (the cases above pin the reasons)
    native = native_chunk.chunk_from_text(body)
    assert native is not None
    assert_same_rows(rows_of(native), rows_of(expected))


def _model(path: Path, scanner: str, monkeypatch: pytest.MonkeyPatch) -> TraceModel:
    monkeypatch.setenv("KINETOSCOPE_SCANNER", scanner)
    return build_model(str(path))


def assert_same_model(a: TraceModel, b: TraceModel) -> None:
    assert a.memory.keys() == b.memory.keys()
    for key, column in a.memory.items():
        assert column.dtype == b.memory[key].dtype, key
        assert np.array_equal(column, b.memory[key], equal_nan=column.dtype.kind == "f"), key
    assert {*a.events, *a.sparse} == {*b.events, *b.sparse} == set(EVENT_COLUMNS)
    for key in EVENT_COLUMNS:  # dense or sparse, read a value per row
        column, other = a.full_column(key), b.full_column(key)
        assert column.dtype == other.dtype, key
        if key == "work_sig":  # the msgspec path leaves it unknown (-1)
            for model in (a, b):
                ends = model.events["args_end"]
                assert_work_sigs(model.full_column("work_sig"), ends, model.args_blob)
            continue
        assert np.array_equal(column, other, equal_nan=column.dtype.kind == "f"), key
    for name in ("names", "categories", "pids", "tids", "process_names", "thread_names"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("process_labels", "process_sort", "thread_sort", "header", "partial"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.warnings == b.warnings
    assert bytes(a.args_blob) == bytes(b.args_blob)


@pytest.mark.parametrize("threads", ["1", "3"])
def test_a_file_with_declined_runs_loads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    # Small runs: some are read by the scanner, some declined (a string timestamp, a cut
    # inside a name that looks like an event boundary), and the model is the same, read
    # run after run in this thread or in slices by scanning threads.
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    monkeypatch.setattr(decode, "CHUNK_TARGET", 600)
    monkeypatch.setattr(text_blocks, "READ_BLOCK", 97)
    tricky = ['{"ph": "X", "name": "x}, {\\"y", "ts": ' + str(i) + "}" for i in range(40)]
    events = [OP, KERNEL] * 30 + tricky + ['{"ph": "X", "ts": "7"}'] + [KERNEL] * 30
    path = tmp_path / "t.json"
    path.write_text('{"schemaVersion": 1, "traceEvents": [' + ",\n".join(events) + "]}")
    declined: list[str] = []
    scan_text = native_chunk.scan_text

    def counting(body: bytes, start: int = 0) -> dict[str, Any] | str:
        result = scan_text(body, start)
        if isinstance(result, str):
            declined.append(result)
        return result

    monkeypatch.setattr(native_chunk, "scan_text", counting)
    scanned = _model(path, "", monkeypatch)
    assert any("float field" in r for r in declined) and any("string" in r for r in declined)
    assert_same_model(scanned, _model(path, "python", monkeypatch))
    assert len(scanned) == 131


@pytest.mark.corpus
@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_every_corpus_trace_gives_the_same_model(
    path: Path, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    monkeypatch.setattr(decode, "CHUNK_TARGET", 256 << 10)  # many runs per trace
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    try:
        expected = _model(path, "python", monkeypatch)
    except Exception as error:  # noqa: BLE001 - a bad input must fail the same way
        with pytest.raises(type(error), match=re.escape(str(error))):
            _model(path, "", monkeypatch)
        return
    assert_same_model(_model(path, "", monkeypatch), expected)


def test_scanning_threads_are_for_big_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KINETOSCOPE_SCAN_THREADS", raising=False)
    cores = min(4, os.cpu_count() or 1)
    assert scan_threads(1 << 20) == 1
    assert scan_threads(THREADS_MIN_TEXT) == cores
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", "3")
    assert scan_threads(1 << 20) == 3
    monkeypatch.setenv("KINETOSCOPE_SCANNER", "python")  # no scanner: nothing to thread
    assert scan_threads(THREADS_MIN_TEXT) == 1


def test_text_size_reads_the_open_handle_and_leaves_it_at_the_start(tmp_path: Path) -> None:
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_bytes(b"[]")
    packed.write_bytes(gzip.compress(b"[]"))
    for path, factor in ((plain, 1), (packed, 30)):
        with open(path, "rb") as f:
            size = path.stat().st_size
            assert text_size(f, size) == size * factor
            assert f.tell() == 0


def _event_with(ts: int, ph: str = "X", cat: str = "cpu_op", **ids: int) -> str:
    args = {"External id": ids.get("external", 1), "correlation": ids.get("correlation", 2)}
    args.update({"stream": ids.get("stream", 7), "Python id": ids.get("python", 3)})
    event = {"ph": ph, "cat": cat, "name": "n", "pid": 1, "tid": 1, "ts": ts, "dur": 1}
    return json.dumps({**event, "id": ids.get("flow", 5), "args": args})


@pytest.mark.parametrize("threads", ["1", "2"])
def test_ids_past_int32_widen_the_same_columns_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    # The scanner says which id columns hold a value past int32 (the merge then checks no
    # column it vouches for); the msgspec path's columns are checked as they merge. The
    # same columns become int64 either way: a big id on a row that is not a flow leaves
    # `flow_id` int32 (-1 there), a big flow id widens it.
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    monkeypatch.setattr(decode, "CHUNK_TARGET", 400)
    big = 2**40
    events = [_event_with(i) for i in range(30)]
    events[7] = _event_with(7, external=big)
    events[20] = _event_with(20, stream=-(2**31) - 1, flow=big)  # not a flow: id unused
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}")
    scanned = _model(path, "", monkeypatch)
    assert_same_model(scanned, _model(path, "python", monkeypatch))
    wide = {k for k in NARROW_COLUMNS if scanned.full_column(k).dtype == np.int64}
    assert wide == {"external_id", "stream"}
    assert scanned.column_at("external_id", 7) == big
    events[25] = _event_with(25, ph="s", cat="ac2g", flow=big)
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}")
    flows = _model(path, "", monkeypatch)
    assert_same_model(flows, _model(path, "python", monkeypatch))
    flow_id = flows.full_column("flow_id")  # sparse: its values widened as a dense one's
    assert flow_id.dtype == np.int64 and flow_id[25] == big


@pytest.mark.parametrize("threads", ["1", "2"])
def test_devices_and_streams_past_int16_widen_at_the_chunk_that_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    # Devices and streams are int16 while every value fits: a later chunk's device past
    # int16 makes its column int32 (the declared type), a stream past it int64, every
    # earlier row kept; the same model both ways.
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    monkeypatch.setattr(decode, "CHUNK_TARGET", 400)
    monkeypatch.setattr(text_blocks, "READ_BLOCK", 397)  # slices of a few events
    parts: list[int] = []
    append = ColumnSink.append

    def counted(sink: ColumnSink, part: dict[str, np.ndarray], *args: Any) -> None:
        parts.append(len(part["ts"]))
        append(sink, part, *args)

    monkeypatch.setattr(ColumnSink, "append", counted)
    events = [_event_with(i, cat="kernel") for i in range(40)]
    events[31] = _event_with(31, cat="kernel", stream=2**15)
    events[33] = events[33].replace('"args": {', '"args": {"device": -40000, ')
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}")
    scanned = _model(path, "", monkeypatch)
    assert_same_model(scanned, _model(path, "python", monkeypatch))
    order = np.argsort(scanned.events["ts"], kind="stable")
    # Read whole, each as the model holds it (a value per row, or sparse: rows and values).
    device, stream = scanned.full_column("device"), scanned.full_column("stream")
    assert device.dtype == np.int32 and stream.dtype == np.int64
    assert device[order].tolist() == [-1] * 33 + [-40000] + [-1] * 6
    assert stream[order].tolist() == [7] * 31 + [2**15] + [7] * 8
    assert len(parts) > 10 and sum(parts) == 80  # merged a few rows at a time, both loads


@pytest.mark.parametrize(
    "rel",
    [
        "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
        "hta/tests/data/mtia_trace_single_rank/mtia_rank_0.json.gz",
        "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_fp16_dp/worker0_round1.pt.trace.json.gz",
    ],
)
def test_the_merge_s_compiled_copies_give_numpy_s_columns(
    rel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A chunk's columns are written by one compiled call (converted, each narrow value
    # checked); numpy's copies a column at a time give the same model, in scanning
    # threads and small chunks.
    path = corpus_path(rel)
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", "2")
    monkeypatch.setattr(text_blocks, "READ_BLOCK", 64 << 10)
    monkeypatch.setattr(column_sink, "HEAP_ROWS", 1)  # in maps from the first chunk
    placed = _model(path, "", monkeypatch)
    monkeypatch.setattr(column_sink, "_place", None)
    assert_same_model(placed, _model(path, "", monkeypatch))


@pytest.mark.parametrize("scanner", ["", "python"])
def test_interned_codes_past_int16_widen_their_column_as_they_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanner: str
) -> None:
    # Names are kept as int16 codes while the file's table has at most 32,768 of them;
    # the chunk that interns the next one makes the column int32 before its codes are
    # written in place (an int16 view would wrap them).
    monkeypatch.setattr(decode, "CHUNK_TARGET", 4000)
    count = 40_000
    events = [
        json.dumps(
            {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1}
        )
        for i in range(count)
    ]
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}")
    model = _model(path, scanner, monkeypatch)
    assert model.events["name"].dtype == np.int32 and model.events["pid"].dtype == np.int16
    names = [model.names[c] for c in model.events["name"][np.argsort(model.events["ts"])]]
    assert names == [f"op{i}" for i in range(count)]


def test_the_scanner_says_which_id_columns_pass_int32() -> None:
    body = ",".join([_event_with(1, correlation=2**31), _event_with(2, python=-(2**31))])
    raw = native_chunk.scan_text(body.encode())
    assert isinstance(raw, dict) and raw["wide"] == ["correlation"]
    chunk = native_chunk.chunk_from_text(body.encode())
    assert chunk is not None and "correlation" not in chunk.int32_columns
    assert chunk.int32_columns == {
        "flow_id",
        "external_id",
        "stream",
        "python_id",
        "python_parent_id",
    }


def test_kept_buffers_leave_nothing_of_an_earlier_scan() -> None:
    # A scan's buffers are kept for the next scans once its chunk is let go of: a later,
    # smaller scan in them reads as a scan in fresh buffers.
    native_chunk.release_scan_buffers()
    small = ",\n".join([KERNEL, OP]).encode()
    fresh = native_chunk.chunk_from_text(small)
    assert fresh is not None
    expected = rows_of(fresh)
    del fresh
    native_chunk.release_scan_buffers()
    large = native_chunk.chunk_from_text(",\n".join([OP, KERNEL] * 400).encode())
    assert large is not None and len(large) == 800
    del large  # its buffers are kept now
    again = native_chunk.chunk_from_text(small)
    assert again is not None
    assert_same_rows(rows_of(again), expected)
    native_chunk.release_scan_buffers()
