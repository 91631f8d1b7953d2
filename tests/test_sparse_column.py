"""Sparse event columns (kernels' `blocks per SM` and `est. achieved occupancy %`): held as
the rows that have a value and those values, read back as the dense column would be.

Checked on a real trace against the values read from its raw JSON (each event's args, no
part of the product's decoder), and on built columns against numpy's own indexing."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from corpus import corpus_model, corpus_path
from kinetoscope.ingest.build import build_model
from kinetoscope.model import sparse_column
from kinetoscope.model.sparse_column import SPARSE_COLUMNS, SparseParts, sparse_from_dense
from perfetto_writer import write_perfetto_file
from scan_compare import assert_work_sigs

# A real HTA test trace with kernels of both args and CPU ops, runtime calls without them.
TRACE = "hta/tests/data/trace_filter/sampled_rank-0.json.gz"
ARG_OF = {"blocks_per_sm": "blocks per SM", "occupancy": "est. achieved occupancy %"}


def _raw_events(rel: str) -> list[dict]:
    with gzip.open(corpus_path(rel), "rt", encoding="utf-8") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") != "M"]


def test_real_trace_columns_are_sparse_and_read_as_its_args() -> None:
    model = corpus_model(TRACE)
    raw = _raw_events(TRACE)
    assert len(raw) == len(model)  # a row per event, in file order
    for name, arg in ARG_OF.items():
        assert name not in model.events and name in model.sparse
        want = np.array([float(e.get("args", {}).get(arg, np.nan)) for e in raw], np.float32)
        dense = model.full_column(name)
        assert dense.dtype == np.float32
        np.testing.assert_array_equal(dense, want)
        sparse = model.sparse[name]
        assert 0 < sparse.rows.size < len(model) // 4  # kernels only: few of the rows
        assert np.all(np.diff(sparse.rows) > 0)
        # Any rows, any order, repeated: as the dense column's fancy indexing.
        rows = np.random.default_rng(0).integers(0, len(model), 5000)
        rows = np.concatenate([rows, sparse.rows[::-1], [0, len(model) - 1]])
        np.testing.assert_array_equal(model.column_at(name, rows), want[rows])


@pytest.mark.parametrize("fill", [np.nan, 0.0])
def test_parts_joined_equal_one_dense_column(fill: float) -> None:
    rng = np.random.default_rng(1)
    dense = np.where(rng.random(10_000) < 0.05, rng.random(10_000), fill).astype(np.float32)
    dense[-1] = 3.5  # the last row has a value: the searches' edge
    parts = SparseParts("f4", fill)
    for lo in range(0, dense.size, 777):  # chunks of a load, merged in file order
        parts.append(dense[lo : lo + 777], lo)
    column = parts.finish(dense.size)
    assert column.rows.dtype == np.int32
    assert parts.held == column.nbytes
    np.testing.assert_array_equal(column.dense(), dense)
    np.testing.assert_array_equal(sparse_from_dense(dense, fill).dense(), dense)
    rows = rng.integers(0, dense.size, (30, 40))  # any shape of rows, as numpy's take
    np.testing.assert_array_equal(column.take(rows), dense[rows])
    assert column.take(np.empty(0, np.int64)).size == 0


@pytest.mark.parametrize("dtype", ["f4", "f8", "i2", "i4", "i8", "u8", "u1"])
def test_compiled_take_gives_numpys_bytes(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """The compiled read of a column (`_sparse.take`) and numpy's steps: the same bytes
    (NaN payloads too) for rows of int32, int64 and other types, masks, any shape, one
    row, rows past the last value, and rows outside the column (numpy's answer or error:
    the compiled one declines them)."""
    if sparse_column._sparse is None:
        pytest.skip("built without a C compiler")
    rng = np.random.default_rng(7)
    size = 5000 + int(dtype[1:]) * 37
    fill = SPARSE_COLUMNS["occupancy"] if dtype[0] == "f" else 0 if dtype[0] == "u" else -1
    dense = np.full(size, fill, dtype=dtype)
    has = rng.random(size) < 0.2
    dense[has] = rng.integers(1, 100, int(has.sum())).astype(dtype)
    if dtype[0] == "f":
        dense[np.flatnonzero(has)[:3]] = np.frombuffer(b"\x01\x00\xc0\x7f" * 6, dtype)[:3]
    dense[size - 70 :] = fill  # the last words without a value
    column = sparse_from_dense(dense, fill)
    asks = [
        rng.integers(0, size, 3000).astype(np.int32),
        rng.integers(0, size, (20, 30)),
        np.arange(size),
        rng.integers(0, size, 500).astype(np.uint32),
        rng.random(size) < 0.5,
        np.int64(size - 1),
        np.array([3, -1, size - 2]),
    ]
    for rows in asks:
        got = column.take(rows)
        with monkeypatch.context() as m:
            m.setattr(sparse_column, "_sparse", None)
            want = column.take(rows)
        assert got.dtype == want.dtype == dense.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    outside = np.array([size + 64])
    assert column._take_compiled(outside) is None
    with monkeypatch.context() as m:
        m.setattr(sparse_column, "_sparse", None)
        with pytest.raises(IndexError):
            column.take(outside)
    with pytest.raises(IndexError):
        column.take(outside)


def test_a_column_with_no_value_reads_as_its_fill() -> None:
    column = SparseParts("f4", SPARSE_COLUMNS["occupancy"]).finish(5)
    assert column.rows.size == 0 and column.dense().dtype == np.float32
    assert np.isnan(column.take(np.arange(5))).all() and np.isnan(column.dense()).all()


def test_work_hashes_are_sparse_where_the_scanner_wrote_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed = build_model(str(corpus_path(TRACE)))
    assert "work_sig" in hashed.sparse and "work_sig" not in hashed.events
    work_sig = hashed.full_column("work_sig")
    assert 0 < hashed.sparse["work_sig"].rows.size < len(hashed) // 2  # the ops' rows
    assert_work_sigs(work_sig, hashed.events["args_end"], hashed.args_blob)
    assert (work_sig != -1).all()
    # The msgspec path writes -1 (unknown) into every row: a value per row is smaller.
    monkeypatch.setenv("KINETOSCOPE_SCANNER", "python")
    read = build_model(str(corpus_path(TRACE)))
    assert "work_sig" in read.events and "work_sig" not in read.sparse
    assert read.events["work_sig"].dtype == np.int64 and (read.events["work_sig"] == -1).all()
    rows = np.arange(0, len(read), 7)
    np.testing.assert_array_equal(read.column_at("work_sig", rows), read.events["work_sig"][rows])


def test_parts_turn_dense_once_rows_and_values_would_hold_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sparse_column, "DENSE_AFTER_ROWS", 500)  # not for the first chunks
    parts = SparseParts("i8", 0)
    parts.append(np.zeros(100, np.int64), 0)
    parts.append(np.r_[np.zeros(50), np.full(50, 7)].astype(np.int64), 100)
    parts.append(np.full(200, -1, np.int64), 200)  # 250 values of 400 rows: more than dense
    parts.append(np.full(100, -1, np.int64), 400)  # but only 400 rows merged: still sparse
    assert parts.dense is None and parts.held == 350 * (8 + 4)
    assert isinstance(parts.finish_smaller(500), np.ndarray)  # more than 500 * 8 B
    parts.append(np.full(10, -1, np.int64), 500)  # so from here a value per row
    assert parts.dense is not None and parts.held == 510 * 8
    column = parts.finish_smaller(510)
    assert isinstance(column, np.ndarray) and column.dtype == np.int64
    want = np.r_[np.zeros(150), np.full(50, 7), np.full(310, -1)].astype(np.int64)
    np.testing.assert_array_equal(column, want)


def test_values_keep_the_narrow_type_until_one_does_not_fit() -> None:
    parts = SparseParts("i8", -1, "i2")  # a stream column: int16 while every value fits
    parts.append(np.array([-1, 7, -1, 300], np.int64), 0)
    assert parts.dtype == np.int16 and parts.held == 2 * (2 + 4)
    narrow = parts.finish(4)
    assert narrow.values.dtype == np.int16 and narrow.dense().tolist() == [-1, 7, -1, 300]
    parts.append(np.array([1 << 40, -1], np.int64), 4)  # past int16: int64 from here
    column = parts.finish(6)
    assert column.values.dtype == np.int64 and parts.held == column.nbytes
    assert column.dense().tolist() == [-1, 7, -1, 300, 1 << 40, -1]
    assert column.take(np.array([4, 1])).tolist() == [1 << 40, 7]
    assert int(column.take(4)) == 1 << 40  # one row, as column[4]
    assert column.take(np.array([True, True, False, False, False, True])).tolist() == [-1, 7, -1]


def test_bit_counts_without_numpys_bitwise_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The byte-table count (numpy before 2.0) gives numpy's bitwise_count, and a sparse
    column reads the same values through it."""
    rng = np.random.default_rng(9)
    words = rng.integers(0, 2**63, 4096, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    words[:3] = [0, 2**64 - 1, 2**63]
    want = sparse_column.bit_count(words)
    assert want.tolist() == [bin(int(w)).count("1") for w in words]
    dense = np.full(5000, -1, dtype=np.int64)
    dense[rng.choice(5000, 300, replace=False)] = rng.integers(0, 10**9, 300)
    asked = rng.integers(0, 5000, 2000)
    with monkeypatch.context() as patched:
        patched.delattr(np, "bitwise_count")
        assert sparse_column.bit_count(words).tolist() == want.tolist()
        column = sparse_from_dense(dense, -1)
        assert column.take(asked).tolist() == dense[asked].tolist()


@pytest.mark.parametrize("batch_rows", [1, 200, 1 << 14])
@pytest.mark.parametrize("form", ["json", "perfetto"])
def test_chunks_taken_in_batches_give_the_same_columns(
    batch_rows: int, form: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every merge (a JSON trace's, a Perfetto trace's) takes the sparse columns of its
    chunks in batches of rows: any batch size (1: each chunk at once) gives the columns
    each chunk's own append gives."""
    from kinetoscope.ingest import decode

    # Slices of 16 KiB, scanned in threads as a big file's are: ~100 chunks.
    monkeypatch.setattr(decode, "CHUNK_TARGET", 16 << 10)
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", "2")
    path = str(corpus_path(TRACE))
    if form == "perfetto":
        path = str(tmp_path / "t.pftrace")
        write_perfetto_file(str(corpus_path(TRACE)), path)
    monkeypatch.setattr(sparse_column, "SPARSE_BATCH_ROWS", 1)
    want = build_model(path)
    monkeypatch.setattr(sparse_column, "SPARSE_BATCH_ROWS", batch_rows)
    model = build_model(path)
    assert len(model) == len(want) > 4_000
    for name in SPARSE_COLUMNS:
        assert (name in model.sparse) == (name in want.sparse)
        np.testing.assert_array_equal(model.full_column(name), want.full_column(name))
        assert model.full_column(name).dtype == want.full_column(name).dtype
    for name, column in want.events.items():
        np.testing.assert_array_equal(model.events[name], column)


def test_builder_batches_rows_as_one_append_per_chunk() -> None:
    """Chunks of any sizes (one past a batch, one of another dtype) give the columns that
    one `SparseParts` append per chunk gives, in file order."""
    rng = np.random.default_rng(7)
    specs = {"stream": ("i8", -1, "i2"), "occupancy": ("f4", np.nan, None)}
    builder = sparse_column.SparseColumnsBuilder(specs)
    want = {key: SparseParts(*spec) for key, spec in specs.items()}
    first = 0
    for size in [3, 5000, 20000, 0, 1, 9000, 17000, 4]:
        stream = np.where(rng.random(size) < 0.3, rng.integers(0, 99, size), -1)
        occupancy = np.where(rng.random(size) < 0.1, rng.random(size), np.nan)
        cols = {"stream": stream, "occupancy": occupancy.astype("f4" if size < 9000 else "f8")}
        if size:
            builder.append(cols)
            for key, parts in want.items():
                parts.append(cols[key], first)
        first += size
    got = builder.finish_smaller()
    for key, parts in want.items():
        column, expected = got[key], parts.finish_smaller(first)
        assert type(column) is type(expected)
        if isinstance(column, np.ndarray):
            np.testing.assert_array_equal(column, expected)
            assert column.dtype == expected.dtype
        else:
            np.testing.assert_array_equal(column.dense(), expected.dense())
            assert column.values.dtype == expected.values.dtype
            assert column.rows.dtype == expected.rows.dtype


def test_a_small_loads_buffers_hold_its_rows_not_a_whole_batch() -> None:
    """The rows waiting to be taken in sit in buffers grown as rows come (up to a batch):
    a small rank's load of 200 rows makes no 16,384-row buffers."""
    specs = {"stream": ("i8", -1, "i2"), "occupancy": ("f4", np.nan, None)}
    builder = sparse_column.SparseColumnsBuilder(specs)
    stream = np.where(np.arange(200) % 3 == 0, 7, -1)
    builder.append({"stream": stream, "occupancy": np.full(200, np.nan, "f4")})
    assert {b.size for b in builder.buffers.values()} == {1024}
    builder.append({"stream": np.tile(stream, 10), "occupancy": np.full(2000, np.nan, "f4")})
    assert {b.size for b in builder.buffers.values()} == {2200}
    column = builder.finish_smaller()["stream"]
    dense = column if isinstance(column, np.ndarray) else column.dense()
    np.testing.assert_array_equal(dense, np.concatenate([stream, np.tile(stream, 10)]))
