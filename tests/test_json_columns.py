"""The `trace` route's numeric columns written by orjson straight from numpy
(`json_columns.column_parts`, `msgspec.Raw` fragments): the bytes msgspec writes for the
same columns made lists, for any values and cuts, and for whole answers of real traces
(the route's JSON against the encoding of `trace`'s answer)."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pytest
from corpus import corpus_model
from hypothesis import given, settings
from hypothesis import strategies as st
from kinetoscope.trace_view.flow_window import flows, flows_kept
from kinetoscope.trace_view.json_columns import FIXED_BELOW, column_parts, list_parts
from kinetoscope.trace_view.window_query import trace, trace_kept
from kinetoscope.trace_view.workers import WorkerTrace

V100 = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)
H100 = "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz"
MTIA = "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz"
DDP = (
    "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
    "worker{}_span1.pt.trace.json.gz"
)


def encoded_parts(values: np.ndarray, cuts: list[tuple[int, int]]) -> bytes:
    return msgspec.json.encode(column_parts(values, cuts))


def encoded_lists(values: np.ndarray, cuts: list[tuple[int, int]]) -> bytes:
    return msgspec.json.encode(list_parts(values, cuts))


def cuts_of(n: int, draw_points: list[int]) -> list[tuple[int, int]]:
    points = sorted({0, n, *(p % (n + 1) for p in draw_points)})
    return list(zip(points[:-1], points[1:])) or [(0, 0)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=60),
    st.lists(st.integers(0, 1000), max_size=5),
)
def test_float_columns_are_written_as_msgspec_writes_their_lists(
    values: list[float], points: list[int]
) -> None:
    column = np.array(values, dtype=np.float64)
    cuts = cuts_of(column.size, points)
    assert encoded_parts(column, cuts) == encoded_lists(column, cuts)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60),
    st.sampled_from([np.int64, np.int32, np.int16, np.int8, np.uint8]),
)
def test_integer_columns_are_written_as_msgspec_writes_their_lists(
    values: list[int], dtype: type
) -> None:
    info = np.iinfo(dtype)
    column: np.ndarray = np.array([min(max(v, info.min), info.max) for v in values], dtype=dtype)
    assert encoded_parts(column, [(0, column.size)]) == encoded_lists(column, [(0, column.size)])


@pytest.mark.parametrize(
    "values",
    [
        [FIXED_BELOW, 1.5],  # msgspec "1e16", orjson "1e+16": made a list
        [-FIXED_BELOW * 3, 0.25],
        [np.inf, 1.0],
        [np.nan, -0.0, 0.0, 5e-324, 1e-7, 9_999_999_999_999_998.0],
        [1_700_000_000_000_123.25, 2.5],  # epoch µs: several workers' times
    ],
)
def test_edge_values(values: list[float]) -> None:
    column = np.array(values)
    assert encoded_parts(column, [(0, 1), (1, column.size)]) == encoded_lists(
        column, [(0, 1), (1, column.size)]
    )


def test_float32_is_made_a_list() -> None:
    column = np.array([0.1, 1 / 3], dtype=np.float32)  # its own shortest digits in orjson
    assert column_parts(column, [(0, 2)]) == [column.tolist()]


# (width, t0 and t1 as fractions of the first worker's extent); None: the route's default
WINDOWS = ((None, None), (97, None), (None, (0.3, 0.31)), (700, (0.5, 0.9)))


def ask(workers: list[WorkerTrace], width: int | None, at: tuple[float, float] | None) -> Any:
    """The decoded params of a window (`TraceParams`)."""
    params: dict[str, Any] = {} if width is None else {"width": width}
    if at is not None:
        index = workers[0].index
        base, span = index.t_min + workers[0].offset, index.t_max - index.t_min
        params.update(t0=base + span * at[0], t1=base + span * at[1])
    return params


# Per route: its JSON, its answer, and what the answer counts.
ROUTES = {"trace": (trace_kept, trace, "item_count"), "flows": (flows_kept, flows, "count")}


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("paths", [(V100,), (H100,), (MTIA,), (DDP.format(0), DDP.format(1))])
def test_the_routes_json_is_the_encoding_of_its_answer(route: str, paths: tuple[str, ...]) -> None:
    kept, answer, counted = ROUTES[route]
    named = len(paths) > 1  # several workers: epoch µs
    workers = [
        WorkerTrace(f"worker{i}" if named else None, corpus_model(p)) for i, p in enumerate(paths)
    ]
    counts = []
    for width, at in WINDOWS:
        params = ask(workers, width if route == "trace" else None, at)
        body = kept(workers, params)
        assert body == msgspec.json.encode(answer(workers, params))
        counts.append(msgspec.json.decode(body)[counted])
    assert counts[0] > 0  # the whole trace
