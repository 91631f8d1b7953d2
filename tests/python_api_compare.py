"""Checks that a notebook frame holds what a route answered: shared by the small-trace and
the corpus tests of the Python API. Written apart from `kinetoscope.notebook.frames` (it
walks the JSON itself), so a frame built wrong cannot agree with itself."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from conftest import PluginClient
from kinetoscope.model.errors import ViewParamError
from kinetoscope.notebook import Trace


def leaves(row: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Each value of a JSON object that is not an object, with its dotted path."""
    for key, value in row.items():
        if isinstance(value, dict):
            yield from leaves(value, (*prefix, key))
        else:
            yield ".".join((*prefix, key)), value


def same(got: Any, want: Any) -> bool:
    """One frame cell against one JSON value: equal numbers (exactly), equal text, equal
    lists; null as None or NA."""
    if isinstance(want, list):
        return isinstance(got, list) and got == want
    if want is None:
        return got is None or bool(pd.isna(got))
    if isinstance(want, bool):
        return bool(got) is want
    return bool(got == want)


def assert_rows(frame: pd.DataFrame, rows: list[dict[str, Any]]) -> None:
    """Row i of the frame is JSON row i: every leaf value, under its dotted column name (a
    null object: all its columns NA)."""
    assert len(frame) == len(rows)
    for i, row in enumerate(rows):
        for column, want in leaves(row):
            if column not in frame.columns:  # an object that is null in this row
                assert want is None, column
                nested = [c for c in frame.columns if c.startswith(f"{column}.")]
                assert nested and all(pd.isna(frame[c].iloc[i]) for c in nested), column
                continue
            got = frame[column].iloc[i]
            assert same(got, want), (i, column, got, want)


def assert_attrs(frame: pd.DataFrame, view: dict[str, Any], rows_key: str) -> None:
    """The frame's attrs are fields of the view, unchanged, and hold every top-level value
    that is a number, text or boolean."""
    for key, value in frame.attrs.items():
        assert key != rows_key and view[key] == value, key
    for key, value in view.items():
        if value is not None and not isinstance(value, (dict, list)):
            assert key in frame.attrs, key


def route(client: PluginClient, name: str, **query: Any) -> Any:
    """The route's 200 answer, waiting while it answers 202."""
    for _ in range(6000):
        response = client.get(name, **query)
        if response.status_code != 202:
            break
        threading.Event().wait(0.01)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def assert_span_frames_match_routes(trace: Trace, client: PluginClient) -> None:
    """Every span frame of `trace` against the route the plugin answers for its span."""
    scope = {"run": trace.run, "worker": trace.worker, "span": trace.span}
    overview = route(client, "overview", **scope)
    frame = trace.overview()
    assert_rows(frame, overview["steps"])
    assert_attrs(frame, overview, "steps")
    assert_rows(trace.devices(), overview["devices"])
    parts = trace.breakdown()
    assert_attrs(parts, overview, "steps")
    assert parts.index.tolist() == list(overview["breakdown_us"])
    assert parts["total_us"].tolist() == list(overview["breakdown_us"].values())
    assert parts["average_us"].tolist() == list(overview["average_breakdown_us"].values())
    for group_by in ("name", "shape"):
        view = route(client, "operators", **scope, group_by=group_by)
        frame = trace.operators(group_by=group_by)
        assert_rows(frame, view["rows"])
        assert_attrs(frame, view, "rows")
    for group_by in ("name", "op"):
        view = route(client, "kernels", **scope, group_by=group_by)
        frame = trace.kernels(group_by=group_by)
        assert_rows(frame, view["rows"])
        assert_attrs(frame, view, "rows")
    if "memory" in route(client, "status", **scope)["views"]:
        assert_memory_frames_match_routes(trace, client, scope)
    else:  # the one rule of the memory routes: no memory events, 400; the frame says so too
        response = client.get("memory", **scope)
        assert response.status_code == 400
        with pytest.raises(ViewParamError, match="no memory events"):
            trace.memory()
    assert_gpu_idle_frames_match_route(trace, route(client, "gpu_idle", **scope))


def assert_memory_frames_match_routes(
    trace: Trace, client: PluginClient, scope: dict[str, Any]
) -> None:
    memory = route(client, "memory", **scope)
    frame = trace.memory()
    assert_rows(frame, memory["devices"])
    assert_attrs(frame, memory, "devices")
    assert_rows(trace.memory_operators(), memory["operator_stats"])
    events = route(client, "memory_events", **scope, sort="alloc", limit="10000")
    allocations = trace.memory_allocations()
    assert len(allocations) == events["total_rows"]
    assert_rows(allocations.iloc[: len(events["rows"])], events["rows"])


def assert_gpu_idle_frames_match_route(trace: Trace, view: dict[str, Any]) -> None:
    """The GPU-idle frames: lanes per step (device rows first, then its streams), the top
    intervals, and the launch-delay rows and outliers, against the `gpu_idle` JSON."""
    lanes = []
    for device in view["devices"]:
        lanes.append((device, None, device["per_step"]))
        lanes.extend((device, s["stream"], s["per_step"]) for s in device["streams"])
    idle = trace.idle()
    want = [
        {"device": d["device"], "stream": stream, "step": i, **numbers}
        for d, stream, per_step in lanes
        for i, numbers in enumerate(per_step)
    ]
    assert_rows(idle, want)
    assert idle.attrs["available"] is view["available"]
    assert idle.attrs["kernel_wait_threshold_ns"] == view["kernel_wait_threshold_ns"]
    assert_rows(trace.idle_intervals(), view["top_intervals"])
    delay = view["launch_delay"] or {"rows": [], "outliers": []}
    assert_rows(trace.launch_delays(), delay["rows"])
    assert_rows(trace.launch_outliers(), delay["outliers"])
