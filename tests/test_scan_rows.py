"""A scanned chunk's per-row columns made in C (`_scan.rows`, `native_chunk.row_columns`)
against the numpy rules they replace (`columns.phase_table`, `kinds`, `clean_durations`,
flow ids): the same values, bytes and types, and the same counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kinetoscope.ingest import native_chunk
from kinetoscope.ingest.columns import INTERNED, clean_durations, kinds, phase_table
from kinetoscope.model.categories import Kind, Phase

pytestmark = pytest.mark.skipif(
    native_chunk._scan is None, reason="the compiled scanner is not built here"
)

PHASES: list[Any] = ["X", "i", "I", "s", "f", "t", "C", "B", "E", "M", "zz", None, 3]
CATEGORIES: list[Any] = [
    "kernel", "cpu_op", "ac2g", "gpu_memcpy", "gpu_memset", "cuda_runtime", "python_function",
    "user_annotation", "[memory]", "fwdbwd", None, 7, "",
]  # fmt: skip
NAMES: list[Any] = ["[memory]", "aten::mm", "cudaLaunchKernel", None, "[memory] ", 2]
DURATIONS = [0.0, -0.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 1e300, -1e-300, 7.0]


def _raw(seed: int, rows: int, names: list[Any]) -> tuple[dict, dict, dict]:
    """A scanned chunk's tables, codes and wide columns, drawn at random."""
    rng = np.random.default_rng(seed)
    tables = {"ph": PHASES, "cat": CATEGORIES, "name": names, "pid": [1], "tid": [2]}
    codes = {k: rng.integers(0, len(v), rows).astype(np.int32) for k, v in tables.items()}
    wide = {
        "dur": rng.choice(np.array(DURATIONS), rows),
        "id": rng.integers(-(2**62), 2**62, rows),
    }
    return tables, codes, wide


def _numpy_columns(tables: dict, codes: dict, wide: dict) -> tuple[dict, int, int]:
    """The same columns by the numpy rules (as `_chunk` made them before `_scan.rows`)."""
    cols = {"ph": phase_table(tables["ph"])[codes["ph"]]}
    cols.update({key: codes[key] for key in INTERNED})
    cols["kind"] = kinds(tables["cat"], tables["name"], cols)
    negative = int(np.count_nonzero(wide["dur"] < 0))
    cols["dur"] = clean_durations(wide["dur"].copy())
    cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, wide["id"], -1)
    return cols, negative, int(np.count_nonzero(cols["kind"] == Kind.MEMORY))


def _assert_same(tables: dict, codes: dict, wide: dict) -> None:
    expected, negative, memory = _numpy_columns(tables, codes, wide)
    got, got_negative, got_memory = native_chunk.row_columns(tables, codes, wide)
    assert (got_negative, got_memory) == (negative, memory)
    assert got.keys() == expected.keys()
    for key, column in expected.items():
        assert got[key].dtype == column.dtype, key
        assert got[key].tobytes() == column.tobytes(), key  # -0.0 kept, as numpy keeps it


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rows", [1, 17, 5000])
def test_row_columns_are_the_numpy_rules(seed: int, rows: int) -> None:
    _assert_same(*_raw(seed, rows, NAMES))


def test_every_phase_category_and_duration_is_met() -> None:
    # The random draws above do meet each kind this relies on: flows, memory, negatives.
    tables, codes, wide = _raw(0, 5000, NAMES)
    cols, negative, memory = native_chunk.row_columns(tables, codes, wide)
    assert negative > 0 and memory > 0
    assert {Kind.FLOW, Kind.MEMORY, Kind.KERNEL} <= set(cols["kind"].tolist())
    assert (cols["flow_id"] != -1).any() and (cols["flow_id"] == -1).any()
    assert set(cols["ph"].tolist()) == {int(p) for p in Phase}


def test_without_memory_names_no_row_is_memory() -> None:
    tables, codes, wide = _raw(3, 400, ["aten::mm", None])
    _assert_same(tables, codes, wide)
    assert native_chunk.row_columns(tables, codes, wide)[2] == 0


def test_an_empty_chunk_has_empty_columns() -> None:
    tables = {"ph": [], "cat": [], "name": [], "pid": [], "tid": []}
    codes = {k: np.zeros(0, np.int32) for k in tables}
    wide = {"dur": np.zeros(0), "id": np.zeros(0, np.int64)}
    _assert_same(tables, codes, wide)


def _rows_args(rows: int) -> list[Any]:
    """`_scan.rows`'s arguments for `rows` rows, all of the right types."""
    codes = np.zeros(rows, np.int32)
    table = np.zeros(len(Phase), np.uint8)
    return [
        codes, np.zeros(1, np.uint8), codes, codes, table, np.zeros(1, np.uint8),
        np.zeros(rows), np.zeros(rows, np.int64), np.empty(rows, np.uint8),
        np.empty(rows, np.uint8), np.empty(rows), np.empty(rows, np.int64),
        len(Phase), Phase.INSTANT, Kind.MEMORY, Kind.FLOW,
    ]  # fmt: skip


def test_rows_of_the_right_buffers_are_counted() -> None:
    args = _rows_args(4)
    args[6] = np.array([-1.0, 2.0, -3.0, np.nan])
    assert native_chunk._scan.rows(*args) == (2, 0)
    assert args[10].tolist() == [0.0, 2.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("index", "wrong"),
    [
        (0, np.zeros(4, np.int64)),  # codes of another type
        (6, np.zeros(3)),  # a column of other rows
        (7, np.zeros(4, np.int32)),
        (8, np.empty(4, np.uint8)[::-1].copy().view(np.int8)),  # written, of another type
        (11, np.zeros(4, np.int64).view(np.float64)),
        (10, np.zeros(4)[:3]),
    ],
)
def test_rows_refuses_buffers_of_other_types_or_rows(index: int, wrong: np.ndarray) -> None:
    args = _rows_args(4)
    args[index] = wrong
    with pytest.raises(ValueError, match="argument"):
        native_chunk._scan.rows(*args)


def test_rows_refuses_read_only_outputs_and_tables_that_do_not_fit() -> None:
    args = _rows_args(4)
    args[9] = np.frombuffer(bytes(4), np.uint8)  # read-only
    with pytest.raises((ValueError, BufferError)):
        native_chunk._scan.rows(*args)
    args = _rows_args(4)
    args[4] = np.zeros(len(Phase) + 1, np.uint8)  # not whole rows of phases
    with pytest.raises(ValueError, match="table"):
        native_chunk._scan.rows(*args)
    with pytest.raises(TypeError):
        native_chunk._scan.rows(*args[:-1])
