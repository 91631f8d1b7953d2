"""The compiled Perfetto reader's chunks made into the column builder's Chunks
(`perfetto.chunks.chunk_of`): the row columns made by the JSON scanner's `_scan.rows`
equal those numpy makes by the same rules (the path taken where `_scan` is not built);
the bound on chunks in flight between the reading thread and the merging one."""

from __future__ import annotations

import threading
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from corpus import corpus_path
from kinetoscope.ingest import native_chunk
from kinetoscope.ingest.perfetto import chunks, native
from kinetoscope.ingest.perfetto.rules import native_module
from perfetto_compare import load
from perfetto_writer import write_perfetto_file
from test_perfetto_corpus import TRACES

pytestmark = pytest.mark.skipif(
    native_module() is None or not native_chunk.scanner_enabled(),
    reason="the compiled Perfetto reader or the JSON scanner is not built",
)
# resnet50 (memory events, flows) and the AMD trace (other categories and phases)
SOURCES = [TRACES[0], TRACES[2]]


def raws_of(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The compiled reader's raw chunks of `source` written as a Perfetto trace."""
    path = tmp_path / "trace.pftrace"
    write_perfetto_file(str(source), str(path))
    raws: list[Any] = []

    def kept(raw: dict[str, Any]) -> Any:
        raws.append(raw)
        return chunks.chunk_of(raw)

    monkeypatch.setattr(native, "chunk_of", kept)
    load(str(path), "native")
    return raws


def same_chunk(c: Any, numpy: Any) -> None:
    assert sorted(c.cols) == sorted(numpy.cols)
    for key, column in numpy.cols.items():
        assert c.cols[key].dtype == column.dtype, key
        assert np.array_equal(c.cols[key], column, equal_nan=column.dtype.kind == "f"), key
    assert (c.negative_durations, c.events, c.tables) == (
        numpy.negative_durations,
        numpy.events,
        numpy.tables,
    )
    assert (c.memory is None) == (numpy.memory is None)
    for key, column in (numpy.memory or {}).items():
        assert np.array_equal(c.memory[key], column, equal_nan=True), key


@pytest.mark.parametrize("rel", SOURCES, ids=lambda rel: rel.split("/")[0])
def test_row_columns_in_c_equal_numpys(
    rel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raws = raws_of(corpus_path(rel), tmp_path, monkeypatch)
    assert raws
    made_in_c = [chunks.chunk_of(raw) for raw in raws]
    monkeypatch.setattr(chunks, "native_chunk", types.SimpleNamespace(scanner_enabled=bool))
    made_by_numpy = [chunks.chunk_of(raw) for raw in raws]
    for c, numpy in zip(made_in_c, made_by_numpy):
        same_chunk(c, numpy)
    kinds = np.concatenate([c.cols["kind"] for c in made_in_c])
    assert len(np.unique(kinds)) > 2  # more than one kind of event was looked up


@pytest.mark.parametrize("in_c", [True, False], ids=["c", "numpy"])
def test_negative_and_odd_durations_are_counted_and_cleaned(
    in_c: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raw chunk made by hand: durations negative, NaN and infinite read as 0, only the
    negative ones counted; a `[memory]` instant is a memory row with its table."""
    if not in_c:
        monkeypatch.setattr(chunks, "native_chunk", types.SimpleNamespace(scanner_enabled=bool))
    rows = 4
    wide = {k: np.zeros(rows) for k in ("ts", "dur", "nbytes", "total_allocated")}
    wide["dur"] = np.array([-1.0, np.nan, np.inf, 5.0])
    ints = {k: np.arange(rows, dtype=np.int64) for k in chunks._INT_COLUMNS}
    ints["args_len"] = np.zeros(rows, dtype=np.int64)
    columns = {k: v.tobytes() for k, v in {**wide, **ints}.items()}
    for key in ("blocks_per_sm", "occupancy", "total_reserved"):
        columns[key] = np.zeros(rows).tobytes()
    columns["has_stack"] = np.zeros(rows, dtype=np.bool_).tobytes()
    codes = {"ph": [0, 0, 1, 0], "cat": [0, 1, 0, 0], "name": [0, 0, 1, 0]}
    codes.update({k: [0] * rows for k in ("pid", "tid")})
    raw = {
        "tables": {"ph": ["X", "i"], "cat": ["cpu_op", "ac2g"], "name": ["op", "[memory]"]}
        | {"pid": [1], "tid": [2]},
        "codes": {k: np.array(v, dtype=np.int32).tobytes() for k, v in codes.items()},
        "columns": columns,
        "args": b"",
        "python_core": False,
        "events": rows,
    }
    made = chunks.chunk_of(raw)
    assert made.negative_durations == 1
    assert made.cols["dur"].tolist() == [0.0, 0.0, 0.0, 5.0]
    assert made.memory is not None and made.memory["row"].tolist() == [2]


def test_only_chunks_wait_for_room_in_flight() -> None:
    """The reading thread's markers (a run's status, its end) never wait; a chunk waits
    while `CHUNKS_IN_FLIGHT` are cut and not yet merged, and goes once one is merged."""
    cut = native._Cut()
    chunks_cut = [{"events": k} for k in range(native.CHUNKS_IN_FLIGHT + 1)]
    for chunk in chunks_cut[:-1]:
        cut.put(chunk)
    for marker in (0, None, 1, None):  # more markers than room
        cut.put(marker)
    third = threading.Thread(target=cut.put, args=(chunks_cut[-1],))
    third.start()
    third.join(0.2)
    assert third.is_alive()  # no room
    assert cut.get() == chunks_cut[0]
    cut.merged()
    third.join(5)
    assert not third.is_alive()
    taken = [cut.get() for _ in range(native.CHUNKS_IN_FLIGHT + 4)]
    assert taken == [*chunks_cut[1:-1], 0, None, 1, None, chunks_cut[-1]]
