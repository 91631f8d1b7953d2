"""The model's columns grow in place as chunks merge (ingest/column_sink.py): every row
kept in order, cast to the column's type, in the heap and past it in maps, and the same
where maps cannot be remapped."""

from __future__ import annotations

import mmap

import numpy as np
import pytest
from kinetoscope.ingest import column_sink
from kinetoscope.ingest.column_sink import ColumnSink

SPEC = {"ts": "f8", "name": "i4", "flag": "?"}


def _parts(sizes: list[int]) -> list[dict[str, np.ndarray]]:
    out, start = [], 0
    for n in sizes:
        rows = np.arange(start, start + n)
        out.append({"ts": rows * 0.5, "name": rows.astype(np.int64), "flag": rows % 3 == 0})
        start += n
    return out


def _check(sink: ColumnSink, total: int) -> None:
    columns = sink.finish()
    rows = np.arange(total)
    assert columns["ts"].dtype == np.float64 and np.array_equal(columns["ts"], rows * 0.5)
    assert columns["name"].dtype == np.int32 and np.array_equal(columns["name"], rows)
    assert columns["flag"].dtype == np.bool_ and np.array_equal(columns["flag"], rows % 3 == 0)


@pytest.fixture(params=["heap", "maps"])
def heap_rows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The heap's bound as built, or small: the columns move into maps at once."""
    if request.param == "maps":
        monkeypatch.setattr(column_sink, "HEAP_ROWS", 1)
    return int(column_sink.HEAP_ROWS)


def test_rows_past_the_first_room_are_kept_in_order(heap_rows: int) -> None:
    sink = ColumnSink(SPEC, rows=4)
    sizes = [3, 0, 5, 100, 1, 1000]
    for part in _parts(sizes):
        sink.append(part)
    assert sink.rows == sum(sizes) and sink.room >= sink.rows
    assert bool(sink.maps) == (sink.room > heap_rows)
    assert sink.nbytes() == sink.rows * (8 + 4 + 1)
    _check(sink, sum(sizes))


def test_an_empty_sink_gives_empty_columns() -> None:
    columns = ColumnSink(SPEC).finish()
    assert {k: (v.size, v.dtype.str) for k, v in columns.items()} == {
        "ts": (0, "<f8"),
        "name": (0, "<i4"),
        "flag": (0, "|b1"),
    }


def test_where_a_map_cannot_be_remapped_it_is_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(column_sink, "HEAP_ROWS", 1)

    class Fixed(mmap.mmap):
        def resize(self, newsize: int) -> None:
            raise SystemError("mremap() is not available")

    def fixed_map(size: int) -> mmap.mmap:
        return Fixed(-1, size)

    monkeypatch.setattr(column_sink, "_new_map", fixed_map)
    sink = ColumnSink(SPEC, rows=2)
    for part in _parts([5, 7, 30]):
        sink.append(part)
    _check(sink, 42)


def test_narrow_columns_are_int32_until_a_value_does_not_fit(heap_rows: int) -> None:
    spec = {"ts": "f8", "flow_id": "i8", "stream": "i8"}
    sink = ColumnSink(spec, rows=2, narrow={"flow_id": "i4", "stream": "i4"})
    small = np.array([-1, 5, 2**31 - 1])
    sink.append({"ts": np.zeros(3), "flow_id": small, "stream": small})
    sink.append({"ts": np.ones(2), "flow_id": np.array([-(2**31), 2**40]), "stream": small[:2]})
    assert bool(sink.maps) == (sink.room > heap_rows)
    columns = sink.finish()
    assert columns["stream"].dtype == np.int32
    assert columns["stream"].tolist() == [-1, 5, 2**31 - 1, -1, 5]
    assert columns["flow_id"].dtype == np.int64
    assert columns["flow_id"].tolist() == [-1, 5, 2**31 - 1, -(2**31), 2**40]


def test_filled_columns_are_written_in_place_and_fits_are_not_checked_again(
    heap_rows: int,
) -> None:
    spec = {"ts": "f8", "name": "i4", "flow_id": "i8", "args_end": "i8"}
    sink = ColumnSink(spec, rows=2, narrow={"flow_id": "i4", "args_end": "i4"})
    table = np.array([10, 20, 30], dtype=np.int32)
    total, names = 0, []
    for n in (3, 50, 200):
        codes = np.arange(n, dtype=np.int32) % 3
        ends = np.arange(1, n + 1, dtype=np.int64)
        fills: dict[str, column_sink.Fill] = {
            "name": lambda out, codes=codes: table.take(codes, out=out),
            "args_end": lambda out, ends=ends, start=total: np.add(ends, start, out=out),
        }
        part = {"ts": np.zeros(n), "flow_id": np.full(n, -1, dtype=np.int64)}
        sink.append(part, fits={"args_end"}, fills=fills)
        total += n
        names += [(10, 20, 30)[i % 3] for i in range(n)]
    columns = sink.finish()
    assert columns["name"].tolist() == names
    assert columns["args_end"].dtype == np.int32
    assert columns["args_end"].tolist() == list(range(1, total + 1))
    assert columns["flow_id"].dtype == np.int32  # checked: every value fits


def test_a_filled_narrow_column_not_known_to_fit_is_made_wide() -> None:
    sink = ColumnSink({"ts": "f8", "args_end": "i8"}, narrow={"args_end": "i4"})
    big = np.array([2**31, 2**32])
    sink.append({"ts": np.zeros(2)}, fills={"args_end": lambda out: np.copyto(out, big)})
    columns = sink.finish()
    assert columns["args_end"].dtype == np.int64 and columns["args_end"].tolist() == big.tolist()


def test_rows_are_kept_where_pages_cannot_be_made_present_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A system without MADV_POPULATE_WRITE refuses the advice: the pages fault in as the
    # rows are written, and the sink stops asking. (The numpy path's advice: where the
    # scanner is built, `_scan.place` asks for the pages of the columns it writes.)
    monkeypatch.setattr(column_sink, "_place", None)
    monkeypatch.setattr(column_sink, "HEAP_ROWS", 1)
    monkeypatch.setattr(column_sink, "_MADV_POPULATE_WRITE", 0x7FFF)  # no such advice
    sink = ColumnSink(SPEC, rows=2)
    for part in _parts([5, 7, 30, 3000]):
        sink.append(part)
    assert set(sink.present.values()) == {-1}
    _check(sink, 3042)


def test_pages_are_made_present_a_step_ahead_of_the_rows(
    heap_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(column_sink, "_place", None)  # the numpy path's advice
    sink = ColumnSink(SPEC, rows=2)
    for part in _parts([5000, 70000, 3]):
        sink.append(part)
    if sink.maps:  # Linux 5.14+: made present up to a step past the rows, within the map
        for key, dtype in sink.dtypes.items():
            present = sink.present[key]
            assert present == -1 or sink.rows * dtype.itemsize <= present <= len(sink.maps[key])
    _check(sink, 75003)


def test_narrow_code_columns_are_int16_until_a_value_does_not_fit(heap_rows: int) -> None:
    spec = {"ts": "f8", "name": "i4", "pid": "i4", "stream": "i8"}
    sink = ColumnSink(spec, rows=2, narrow={"name": "i2", "pid": "i2", "stream": "i2"})
    small = np.array([-1, 5, 2**15 - 1], dtype=np.int32)
    sink.append({"ts": np.zeros(3), "name": small, "pid": small, "stream": small})
    big = np.array([-(2**15), 2**15])
    sink.append({"ts": np.ones(2), "name": big, "pid": small[:2], "stream": big * 2**30})
    assert bool(sink.maps) == (sink.room > heap_rows)
    columns = sink.finish()
    # Widened to the declared type, past the types between.
    assert columns["stream"].dtype == np.int64
    assert columns["stream"].tolist() == [-1, 5, 2**15 - 1, -(2**45), 2**45]
    assert columns["pid"].dtype == np.int16
    assert columns["pid"].tolist() == [-1, 5, 2**15 - 1, -1, 5]
    assert columns["name"].dtype == np.int32
    assert columns["name"].tolist() == [-1, 5, 2**15 - 1, -(2**15), 2**15]


def _narrow_parts() -> list[dict[str, np.ndarray]]:
    """Parts whose int16 and int32 columns fit until the third part (a device past int16,
    an id past int32), as the scanner's chunks give them (int32 and int64 values)."""
    parts = []
    for i, n in enumerate((3, 70, 5000, 40)):
        rows = np.arange(n, dtype=np.int64)
        device = rows.astype(np.int32) % 8
        flow = rows - 1
        if i == 2:
            device[-1], flow[1] = 40_000, -(2**40)
        parts.append({"ts": rows * 0.25, "device": device, "flow_id": flow, "flag": rows % 2 == 0})
    return parts


def _narrow_columns(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    spec = {"ts": "f8", "device": "i4", "flow_id": "i8", "flag": "?"}
    sink = ColumnSink(spec, rows=2, narrow={"device": "i2", "flow_id": "i4"})
    for part in parts:
        sink.append(part, fits={"flow_id"} if part["flow_id"].min() >= -1 else ())
    return sink.finish()


@pytest.mark.skipif(column_sink._place is None, reason="built without the compiled scanner")
def test_columns_placed_in_one_call_are_those_numpy_copies(
    heap_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The compiled copy writes every column of a part at once and says which values do
    # not fit their narrow type: those columns widen at that part, as numpy's copies
    # (each narrow column checked first) widen them.
    parts = _narrow_parts()
    placed = _narrow_columns(parts)
    monkeypatch.setattr(column_sink, "_place", None)
    copied = _narrow_columns(parts)
    assert {k: v.dtype.str for k, v in placed.items()} == {
        "ts": "<f8",
        "device": "<i4",
        "flow_id": "<i8",
        "flag": "|b1",
    }
    for key, column in copied.items():
        assert placed[key].dtype == column.dtype and np.array_equal(placed[key], column), key
    expected = np.concatenate([p["device"] for p in parts])
    assert placed["device"].tolist() == expected.tolist() and 40_000 in placed["device"]


@pytest.mark.skipif(column_sink._place is None, reason="built without the compiled scanner")
def test_place_writes_its_rows_only_and_names_the_columns_that_do_not_fit() -> None:
    place = column_sink._place
    wide = np.array([1, -(2**15) - 1, 3], dtype=np.int64)
    dst16, dst64 = np.full(6, 9, dtype=np.int16), np.full(6, 9, dtype=np.int64)
    floats = np.zeros(6, dtype=np.float32)
    src = [wide, wide, np.array([0.5, -1, np.inf], dtype=np.float32)]
    assert place([dst16, dst64, floats], src, b"lhllff", 2) == [0]
    assert dst64.tolist() == [9, 9, 1, -(2**15) - 1, 3, 9]
    assert dst16[:2].tolist() == [9, 9] and dst16[-1] == 9
    assert floats.tolist() == [0, 0, 0.5, -1, np.inf, 0]
    small = np.array([-(2**15), 2**15 - 1], dtype=np.int32)
    assert place([dst16], [small], b"ih", 0) == [] and dst16[:2].tolist() == small.tolist()


@pytest.mark.skipif(column_sink._place is None, reason="built without the compiled scanner")
@pytest.mark.parametrize(
    ("dst", "src", "types", "lo", "error"),
    [
        (np.zeros(4, "i2"), np.zeros(3, "i8"), b"lh", 2, ValueError),  # past the room
        (np.zeros(4, "i2"), np.zeros(3, "i8"), b"lh", -1, ValueError),
        (np.zeros(4, "f4"), np.zeros(3, "f8"), b"df", 0, ValueError),  # floats not converted
        (np.zeros(4, "i4"), np.zeros(3, "f8"), b"di", 0, ValueError),
        (np.zeros(4, "i4"), np.zeros(3, "i8"), b"lx", 0, ValueError),  # no such type
        (np.zeros(4, "i8"), np.zeros(6, "i8")[::2], b"ll", 0, ValueError),  # not contiguous
        (np.zeros(4, "i8"), np.zeros(3, "i8"), b"l", 0, ValueError),  # one type, not two
        (b"\0" * 32, np.zeros(3, "i8"), b"ll", 0, BufferError),  # read-only
    ],
)
def test_place_refuses_what_it_cannot_write(
    dst: object, src: np.ndarray, types: bytes, lo: int, error: type[Exception]
) -> None:
    with pytest.raises(error):
        column_sink._place([dst], [src], types, lo)


def _filled_columns(heap_rows: int) -> dict[str, np.ndarray]:
    """A load's filled columns: interned codes through each part's table into the file's
    (`Remap`) and args offsets (`Offset`), one part's past int32 and not known to fit."""
    spec = {"ts": "f8", "name": "i4", "args_end": "i8"}
    sink = ColumnSink(spec, rows=2, narrow={"name": "i2", "args_end": "i4"})
    start = 0
    for i, n in enumerate((3, 70, 5000, 40)):
        codes = (np.arange(n, dtype=np.int32) * 7) % 5
        table = np.array([4, 0, 2**15 - 1, 3, 1], dtype=np.int32) + i
        ends = np.arange(1, n + 1, dtype=np.int64) * 3
        fills: dict[str, column_sink.Fill] = {
            "name": column_sink.Remap(codes, table),
            "args_end": column_sink.Offset(ends, start),
        }
        fits = {"args_end"} if i < 3 else set()
        sink.append({"ts": np.full(n, float(i))}, fits=fits, fills=fills)
        start += int(ends[-1]) + (2**31 if i == 2 else 0)
    return sink.finish()


@pytest.mark.skipif(column_sink._place is None, reason="built without the compiled scanner")
def test_remapped_and_offset_columns_placed_in_one_call_are_numpys(
    heap_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `_scan.place` looks the codes up and adds the offsets itself (one call, the GIL let
    # go once): the same values and types as numpy's `take` and `add` into the columns.
    placed = _filled_columns(heap_rows)
    monkeypatch.setattr(column_sink, "_place", None)
    filled = _filled_columns(heap_rows)
    for key, column in filled.items():
        assert placed[key].dtype == column.dtype and np.array_equal(placed[key], column), key
    # A code past int16 widens the names; args offsets not known to fit are made wide.
    assert placed["name"].dtype == np.int32 and 2**15 + 1 in placed["name"]
    assert placed["args_end"].dtype == np.int64 and placed["args_end"][-1] > 2**31


@pytest.mark.skipif(column_sink._place is None, reason="built without the compiled scanner")
def test_place_looks_codes_up_and_adds_offsets() -> None:
    place = column_sink._place
    codes, table = np.array([0, 1, 2, -1, 5], dtype=np.int32), np.array([7, 8, 9], dtype="i4")
    ends = np.array([1, 2, 3, 4, 2**40], dtype=np.int64)
    names, offsets = np.zeros(8, np.int16), np.zeros(8, np.int32)
    assert place([names, offsets], [codes, ends], b"ihli", 1, [table, 10], True) == [1]
    assert names.tolist() == [0, *table.take(codes, mode="wrap").tolist(), 0, 0]
    assert offsets[1:5].tolist() == [11, 12, 13, 14]  # the last does not fit int32
    with pytest.raises(ValueError):  # a table of another type
        place([names], [codes], b"ih", 0, [table.astype(np.int64)])
    with pytest.raises(ValueError):  # floats are not offset
        place([np.zeros(5)], [np.zeros(5)], b"dd", 0, [1])
    with pytest.raises(ValueError):  # an empty table cannot be looked in
        place([names], [codes], b"ih", 0, [np.zeros(0, np.int32)])
