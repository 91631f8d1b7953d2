"""The `Python id` and `Python parent id` args of `python_function` events are columns of
the model (`python_id`, `python_parent_id`), read as a struct of two optional ints reads
them, by the compiled scanner and the msgspec path alike."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from corpus import corpus_model, corpus_path
from independent.raw import read_raw
from kinetoscope.ingest import native_chunk
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import NO_PYTHON_ID
from scan_compare import disagreement, python_chunk

NONE = NO_PYTHON_ID


def _python(args: str) -> str:
    return (
        '{"ph": "X", "cat": "python_function", "name": "f.py(1): f", "pid": 1, "tid": 1,'
        f' "ts": 1, "dur": 1, "args": {args}}}'
    )


# (args text, python_id, python_parent_id, whether the scanner reads it itself)
CASES = {
    "both ids": ('{"Python parent id": 7, "Python id": 8, "Ev Idx": 3}', 8, 7, True),
    "a null parent (a root)": ('{"Python id": 1, "Python parent id": null}', 1, NONE, True),
    "no parent key": ('{"Python id": 5}', 5, NONE, True),
    "no ids": ('{"Ev Idx": 3}', NONE, NONE, True),
    "negative and zero": ('{"Python id": 0, "Python parent id": -4}', 0, -4, True),
    "-1, as no id": ('{"Python id": 3, "Python parent id": -1}', 3, NONE, True),
    "args not an object": ("[1, 2]", NONE, NONE, True),
    # The struct does not decode, so neither id is read; the scanner leaves it to msgspec.
    "a string id": ('{"Python id": "8", "Python parent id": 7}', NONE, NONE, False),
    "a float parent": ('{"Python id": 8, "Python parent id": 7.0}', NONE, NONE, False),
    "an id beyond int64": ('{"Python id": 9223372036854775808}', NONE, NONE, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_python_ids_read_the_same_both_ways(case: str) -> None:
    args, want_id, want_parent, scanned = CASES[case]
    body = ",".join([_python(args), _python('{"Python id": 99}')]).encode()
    chunk = python_chunk(body)
    assert chunk is not None
    assert chunk.cols["python_id"].tolist() == [want_id, 99]
    assert chunk.cols["python_parent_id"].tolist() == [want_parent, NONE]
    assert disagreement(body) is None
    if native_chunk._scan is not None:
        assert isinstance(native_chunk.scan_text(body), dict) == scanned


def test_an_escaped_key_is_the_same_key() -> None:
    chunk = python_chunk(_python('{"Pyth\\u006fn id": 4}').encode())
    assert chunk is not None and chunk.cols["python_id"].tolist() == [4]


def test_rows_without_python_args_hold_none(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    events = [_python('{"Python id": 3}'), '{"ph": "X", "name": "op", "ts": 2, "args": {}}']
    path.write_text(json.dumps({"traceEvents": [json.loads(e) for e in events]}))
    model = build_model(str(path))
    assert model.full_column("python_id").tolist() == [3, NONE]
    assert model.full_column("python_parent_id").tolist() == [NONE, NONE]


@pytest.mark.corpus
def test_the_columns_hold_the_raw_ids_of_a_real_trace() -> None:
    path = "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz"
    model = corpus_model(path)
    ev = model.events
    rows = np.flatnonzero(ev["cat"] == model.categories.index("python_function"))
    got = sorted(
        zip(
            model.names_of(rows),
            ev["ts"][rows].tolist(),
            model.column_at("python_id", rows).tolist(),
            model.column_at("python_parent_id", rows).tolist(),
        )
    )
    want = sorted(
        (
            e["name"],
            float(e["ts"]),
            e["args"]["Python id"],
            NONE if e["args"].get("Python parent id") is None else e["args"]["Python parent id"],
        )
        for e in read_raw(corpus_path(path)).events
        if e.get("cat") == "python_function"
    )
    assert len(want) > 1000 and got == want
