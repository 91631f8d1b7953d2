"""Trace view backend: tracks, depths, level of detail, event details, flows, search,
range summaries, multi-rank alignment, and the routes through TensorBoard's WSGI app."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from builders import CPU_PID, CPU_TID, TraceBuilder
from conftest import PluginClient
from corpus import corpus_path
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.ingest.build import build_model
from kinetoscope.model.errors import ViewParamError
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.trace_view.index import build_index, index_of, nesting_depth, stack_depth
from kinetoscope.trace_view.window_query import FLAG_ENDS_AFTER, FLAG_LINKED, FLAG_STARTS_BEFORE
from kinetoscope.trace_view.workers import TimelineNotFound, WorkerTrace

Make = Callable[[Path], PluginClient]
OTHER_TID = 101


def answer(route: str, workers: list[WorkerTrace], params: dict[str, str]) -> Any:
    """A trace-view route's compute function as the plugin's handler calls it: the query
    decoded by the request type first."""
    endpoint = ENDPOINTS[route]
    return endpoint.of_traces(workers, endpoint.decode(params))


def call(model: TraceModel, route: str, **params: Any) -> Any:
    return answer(route, [WorkerTrace(None, model)], {k: str(v) for k, v in params.items()})


def by_label(tracks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["label"]: t for t in tracks}


def flow(b: TraceBuilder, ph: str, cat: str, ident: int, ts: float, tid: Any, pid: Any) -> None:
    event = {"ph": ph, "cat": cat, "name": cat, "id": ident, "pid": pid, "tid": tid, "ts": ts}
    if ph == "f":
        event["bp"] = "e"
    b.events.append(event)


def nested_trace() -> TraceBuilder:
    """Main thread:  A [0,100) > B [10,40) > C [15,20);  A > D [50,90) > launch [60,65)
                     E [200,210) with a Python frame stack above it
                     G [300,310) > H [305,310.0004) (ends a rounding error late);  I [310,320)
    Thread 101:      F [0,50) (fwdbwd flow from A), bwd [120,150) (the backward of A)
    GPU 0 stream 7:  kernel k1 [70,80) launched from D."""
    b = TraceBuilder()
    a = b.op("A", 0, 100)
    b.op("B", 10, 30)
    b.op("aten::C", 15, 5, **{"Call stack": "model.py(3): f;train.py(10): <module>"})
    d = b.op("aten::D", 50, 40, **{"Input Dims": [[2, 3], [3]]})
    b.launch(60, 5, d, gpu_ts=70, gpu_dur=10, name="k1")
    b.op("python_outer", 195, 20, cat="python_function")
    b.op("python_inner", 198, 14, cat="python_function")
    b.op("E", 200, 10)
    b.op("G", 300, 10)
    b.op("H", 305, 5.0004)
    b.op("I", 310, 10)
    b.op("F", 0, 50, tid=OTHER_TID)
    b.op("autograd::engine::evaluate_function: ABackward0", 120, 30, tid=OTHER_TID)
    flow(b, "s", "fwdbwd", 1, 0, CPU_TID, CPU_PID)
    flow(b, "f", "fwdbwd", 1, 120, OTHER_TID, CPU_PID)
    b.events.append(
        {"ph": "i", "s": "t", "cat": "instant", "name": "mark", "pid": CPU_PID, "tid": CPU_TID,
         "ts": 205}
    )  # fmt: skip
    assert a
    return b


@pytest.fixture
def nested(tmp_path: Path) -> TraceModel:
    return nested_trace().model(tmp_path)


def rows_named(model: TraceModel, name: str) -> list[int]:
    code = model.name_code(name)
    return np.flatnonzero(model.events["name"] == code).tolist()


def row_of(model: TraceModel, name: str) -> int:
    found = rows_named(model, name)
    assert len(found) == 1, (name, found)
    return found[0]


# --- depth and tracks -------------------------------------------------------------------


def test_depths_follow_nesting(nested: TraceModel) -> None:
    index = index_of(nested)
    depth = {nested.names[index.name[p]]: int(index.depth[p]) for p in range(len(index))}
    assert depth["A"] == 0 and depth["B"] == 1 and depth["aten::C"] == 2
    assert depth["aten::D"] == 1 and depth["cudaLaunchKernel"] == 2
    assert depth["E"] == 0 and depth["mark"] == 1
    # H ends 0.4 ns after G: still its child; I starts where G ends: back at the top.
    assert depth["G"] == 0 and depth["H"] == 1 and depth["I"] == 0
    assert depth["python_outer"] == 0 and depth["python_inner"] == 1
    assert depth["F"] == 0 and depth["k1"] == 0
    assert not index.fallback_tracks


def test_improper_overlap_falls_back_to_the_stack_sweep(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("J", 400, 20)
    b.op("K", 410, 20)  # overlaps J without nesting
    b.op("L", 425, 15)
    model = b.model(tmp_path)
    index = build_index(model)
    assert index.fallback_tracks == [0]
    depth = {model.names[index.name[p]]: int(index.depth[p]) for p in range(len(index))}
    assert depth == {"J": 0, "K": 1, "L": 2}


def test_vectorised_depth_equals_the_stack_sweep_on_random_nesting() -> None:
    rng = np.random.default_rng(7)
    starts: list[float] = []
    ends: list[float] = []

    def fill(lo: float, hi: float, level: int) -> None:
        t = lo
        while level < 6 and t < hi:
            s = t + rng.integers(0, 4)
            e = min(hi, s + rng.integers(0, 40))
            if s >= hi:
                break
            starts.append(float(s))
            ends.append(float(e))
            fill(s, e, level + 1)
            t = e
        return None

    fill(0, 5000, 0)
    s, e = np.array(starts), np.array(ends)
    order = np.lexsort((-e, s))
    depth, valid = nesting_depth(s[order], e[order])
    assert valid
    assert np.array_equal(depth, stack_depth(s[order], e[order]))


def test_tracks_labels_kinds_order_and_counts(nested: TraceModel) -> None:
    view = call(nested, "tracks")
    assert view["time_base"] == "file"
    tracks = by_label(view["tracks"])
    main = tracks[f"thread {CPU_TID}"]
    python = tracks[f"thread {CPU_TID} · Python"]
    gpu = tracks["GPU 0 stream 7"]
    assert main["kind"] == "cpu" and python["kind"] == "python" and gpu["kind"] == "gpu"
    assert main["max_depth"] == 2 and python["max_depth"] == 1
    assert main["event_count"] == 10 and python["event_count"] == 2 and gpu["event_count"] == 1
    assert (gpu["device"], gpu["stream"]) == (0, 7)
    order = [t["label"] for t in view["tracks"]]
    # Counters first, then host threads (Python frames above operators), then GPU streams.
    assert order.index(python["label"]) < order.index(main["label"]) < order.index(gpu["label"])
    assert tracks["GPU 0 utilization"]["kind"] == "counter"
    assert [t["sort"] for t in view["tracks"]] == list(range(len(view["tracks"])))


def test_metadata_names_and_sort_indexes(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("x", 0, 10)
    b.op("y", 0, 10, tid=7)
    b.events += [
        {"ph": "M", "name": "thread_name", "pid": CPU_PID, "tid": 7, "args": {"name": "loader"}},
        {"ph": "M", "name": "thread_sort_index", "pid": CPU_PID, "tid": 7,
         "args": {"sort_index": 0}},
        {"ph": "M", "name": "thread_sort_index", "pid": CPU_PID, "tid": CPU_TID,
         "args": {"sort_index": 5}},
    ]  # fmt: skip
    view = call(b.model(tmp_path), "tracks")
    assert [t["label"] for t in view["tracks"]] == ["loader", f"thread {CPU_TID}"]


def test_a_host_thread_written_on_a_device_pid_is_drawn_in_the_host_process(
    tmp_path: Path,
) -> None:
    """The Python tracer writes a thread it met before the profiler started (tqdm's
    monitor, in a recorded H100 trace) as pid 0, tid 0: the pid of GPU 0's process. Its
    frames are host work: drawn in the host process, after its threads, saying the pid."""
    b = TraceBuilder()
    op = b.op("aten::mm", 0, 100)
    b.launch(10, 5, op, gpu_ts=20, gpu_dur=30, name="gemm")
    b.events += [
        {"ph": "M", "name": "process_name", "pid": CPU_PID, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": CPU_PID, "tid": 0, "args": {"labels": "CPU"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "X", "cat": "python_function", "name": "tqdm/_monitor.py(60): run", "pid": 0,
         "tid": 0, "ts": 0, "dur": 90, "args": {"Python id": 3}},
    ]  # fmt: skip
    view = call(b.model(tmp_path), "tracks")
    tracks = by_label(view["tracks"])
    stray = tracks["thread 0 · Python (written as pid 0)"]
    host = tracks[f"thread {CPU_TID}"]
    gpu = tracks["GPU 0 stream 7"]
    assert stray["kind"] == "python" and stray["process"] == host["process"]
    assert host["process"].startswith("CPU python3") and gpu["process"].startswith("GPU 0")
    order = [t["label"] for t in view["tracks"]]
    assert order.index(host["label"]) < order.index(stray["label"]) < order.index(gpu["label"])


# --- level of detail ----------------------------------------------------------------


def dense_gpu_trace() -> TraceBuilder:
    """1000 kernels of 1 µs every 2 µs, then one of 500 µs; a CPU op over all of it."""
    b = TraceBuilder()
    op = b.op("aten::many", 0, 3000)
    for i in range(1000):
        b.launch(i * 2, 0.5, op, gpu_ts=i * 2, gpu_dur=1, name=f"tiny{i % 3}")
    b.launch(2100, 1, op, gpu_ts=2100, gpu_dur=500, name="big")
    return b


def test_coarse_resolution_merges_short_events_and_loses_nothing(tmp_path: Path) -> None:
    model = dense_gpu_trace().model(tmp_path)
    view = call(model, "trace", width=100)  # 30 µs per pixel
    gpu = next(t for t in view["tracks"] if t["id"] == "t1")
    names = view["names"]
    assert [names[c] for c in gpu["events"]["name"]] == ["big"]
    blocks = gpu["blocks"]
    assert sum(blocks["count"]) == 1000
    assert len(blocks["count"]) == 1  # gaps of 1 µs are far below a pixel: one block
    assert blocks["start"][0] == 0 and blocks["end"][0] == pytest.approx(1999, abs=0.01)
    assert blocks["busy"][0] == pytest.approx(1000)
    assert names[blocks["name"][0]] in ("tiny0", "tiny1", "tiny2")
    # Every event of every track is exact or counted in a block.
    index = index_of(model)
    total = sum(len(t["events"]["row"]) + sum(t["blocks"]["count"])
                for t in view["tracks"] if t["events"] is not None)  # fmt: skip
    assert total == len(index)
    assert not view["truncated"]
    assert view["us_per_px"] == pytest.approx(view["exact_min_us"])


def test_fine_resolution_returns_every_event_exactly(tmp_path: Path) -> None:
    model = dense_gpu_trace().model(tmp_path)
    view = call(model, "trace", t0=100, t1=200, width=1000, tracks="t1")  # 0.1 µs per pixel
    (gpu,) = view["tracks"]
    assert len(gpu["events"]["row"]) == 50 and gpu["blocks"]["count"] == []
    assert gpu["events"]["start"] == [100.0 + 2 * i for i in range(50)]
    assert all(f & FLAG_LINKED for f in gpu["events"]["flags"])


def test_min_px_moves_events_into_blocks(tmp_path: Path) -> None:
    model = dense_gpu_trace().model(tmp_path)
    one = call(model, "trace", t0=100, t1=200, width=1000, tracks="t1", min_px=1)
    twenty = call(model, "trace", t0=100, t1=200, width=1000, tracks="t1", min_px=20)
    assert len(twenty["tracks"][0]["events"]["row"]) == 0
    assert sum(twenty["tracks"][0]["blocks"]["count"]) == len(one["tracks"][0]["events"]["row"])


def test_window_cuts_events_and_flags_them(nested: TraceModel) -> None:
    view = call(nested, "trace", t0=25, t1=60, width=35000 // 100, tracks="t1")
    (main,) = view["tracks"]
    names = [view["names"][c] for c in main["events"]["name"]]
    assert names == ["A", "B", "aten::D"]  # C ended before 25; launch starts at 60
    flags = dict(zip(names, main["events"]["flags"]))
    assert flags["A"] == FLAG_STARTS_BEFORE | FLAG_ENDS_AFTER
    assert flags["B"] == FLAG_STARTS_BEFORE
    assert flags["aten::D"] == FLAG_ENDS_AFTER
    assert main["events"]["depth"] == [0, 1, 1]
    # An instant is never wide enough to be exact: a block of one, which names its row.
    near = call(nested, "trace", t0=204, t1=206, tracks="t1")["tracks"][0]
    assert near["blocks"]["row"] == [row_of(nested, "mark")] and near["blocks"]["depth"] == [1]
    assert near["blocks"]["count"] == [1]
    assert near["blocks"]["start"] == near["blocks"]["end"] == [205.0]


def random_model(tmp_path: Path, seed: int) -> TraceModel:
    rng = np.random.default_rng(seed)
    b = TraceBuilder()

    def fill(lo: float, hi: float, level: int, tid: int) -> None:
        t = lo
        while level < 5 and t < hi:
            s = t + float(rng.exponential(5.0))
            e = min(hi, s + float(rng.exponential(30.0 / (level + 1))))
            if s >= hi:
                break
            b.op(f"op{rng.integers(0, 6)}", s, e - s, tid=tid)
            fill(s, e, level + 1, tid)
            t = e

    for tid in (1, 2):
        fill(0, 20_000, 0, tid)
    return b.model(tmp_path)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_windows_keep_every_event_visible(tmp_path: Path, seed: int) -> None:
    model = random_model(tmp_path, seed)
    index = index_of(model)
    rng = np.random.default_rng(seed)
    start, end = index.start, index.end
    for _ in range(60):
        width_us = float(10 ** rng.uniform(0, 4.5))
        t0 = float(rng.uniform(-100, 20_000))
        t1 = t0 + width_us
        px = int(rng.integers(50, 2000))
        view = call(model, "trace", t0=t0, t1=t1, width=px)
        d = view["exact_min_us"]
        visible = (start < t1) & ((end > t0) | (start >= t0))
        got_exact = {r for t in view["tracks"] if t["events"] for r in t["events"]["row"]}
        want_exact = set(index.row[visible & (end - start >= d)].tolist())
        assert got_exact == want_exact
        short = np.flatnonzero(visible & (end - start < d))
        counted = sum(sum(t["blocks"]["count"]) for t in view["tracks"] if t["blocks"])
        assert counted >= short.size
        lone = {r for t in view["tracks"] if t["blocks"] for r in t["blocks"]["row"] if r >= 0}
        assert lone <= set(index.row[short].tolist())
        # Each short event lies inside a block of its track and depth.
        for track in view["tracks"]:
            if not track["blocks"]:
                continue
            t = int(track["id"][1:])
            mine = short[index.group_track[index.group[short]] == t]
            blocks = track["blocks"]
            for p in mine.tolist():
                inside = [
                    bs <= start[p] and index.end_s[p] <= be + 1e-9
                    for bd, bs, be in zip(blocks["depth"], blocks["start"], blocks["end"])
                    if bd == index.depth[p]
                ]
                assert any(inside), (p, start[p], end[p])


def test_item_cap_keeps_the_top_rows(tmp_path: Path) -> None:
    model = random_model(tmp_path, 3)
    full = call(model, "trace", width=20000)
    capped = call(model, "trace", width=20000, max_items=50)
    assert capped["truncated"] and not full["truncated"]
    assert capped["item_count"] == 50 < full["item_count"]
    depths = [d for t in capped["tracks"] if t["events"] for d in t["events"]["depth"]]
    assert max(depths) <= 1


# --- counters -------------------------------------------------------------------------


def test_gpu_utilization_and_memory_counters(tmp_path: Path) -> None:
    b = TraceBuilder()
    op = b.op("aten::mm", 0, 100)
    b.launch(1, 1, op, gpu_ts=0, gpu_dur=25)
    b.launch(2, 1, op, gpu_ts=25, gpu_dur=25)
    b.memory(10, 100, 0xA, total_allocated=100, total_reserved=1024)
    b.memory(60, 50, 0xB, total_allocated=150, total_reserved=1024)
    b.memory(70, -150, 0xA, total_allocated=0, total_reserved=1024)
    model = b.model(tmp_path)
    tracks = by_label(call(model, "tracks")["tracks"])
    assert tracks["GPU 0 memory allocated"]["counter"]["max"] == 150
    assert tracks["GPU 0 memory reserved"]["counter"]["unit"] == "bytes"
    view = call(model, "trace", t0=0, t1=100, width=4, tracks="gpu0.util,mem.1.0.allocated")
    util, mem = (t["counter"] for t in view["tracks"])
    assert util == {"start": [0.0, 50.0], "value": [1.0, 0.0]}
    # Buckets of 25 µs: 0 before the first sample, then the highest value in each bucket.
    assert mem == {"start": [0.0, 50.0, 75.0], "value": [100.0, 150.0, 0.0]}


def test_memory_counter_from_deltas_when_totals_are_missing(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.op("x", 0, 100)
    for ts, nbytes in ((10, 64), (20, 32), (30, -64)):
        b.events.append(
            {"ph": "i", "s": "t", "name": "[memory]", "pid": CPU_PID, "tid": CPU_TID, "ts": ts,
             "args": {"Device Type": 0, "Device Id": -1, "Bytes": nbytes}}
        )  # fmt: skip
    view = call(b.model(tmp_path), "trace", t0=0, t1=40, width=4, tracks="mem.0.allocated")
    assert view["tracks"][0]["counter"]["value"] == [0.0, 64.0, 96.0, 32.0]


# --- event details and flows ----------------------------------------------------------


def links_of(view: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for link in view["flows"]:
        out.setdefault(link["relation"], []).append(link["name"])
    return out


def test_event_details(nested: TraceModel) -> None:
    view = call(nested, "event", row=row_of(nested, "aten::D"))
    assert view["name"] == "aten::D" and view["category"] == "cpu_op"
    assert (view["ts"], view["dur"]) == (50.0, 40.0)
    assert view["input_shapes"] == [[2, 3], [3]]
    assert view["args"]["Input Dims"] == [[2, 3], [3]]
    assert [f["name"] for f in view["ancestors"]] == ["A"]
    assert view["track"] == "t1" and view["depth"] == 1
    assert links_of(view) == {"gpu_activity": ["k1"]}
    c = call(nested, "event", row=row_of(nested, "aten::C"))
    assert c["call_stack_source"] == "args"
    assert [f["name"] for f in c["call_stack"]] == ["model.py(3): f", "train.py(10): <module>"]
    assert [f["name"] for f in c["ancestors"]] == ["A", "B"]


def test_python_frames_are_the_call_stack_without_the_arg(nested: TraceModel) -> None:
    view = call(nested, "event", row=row_of(nested, "E"))
    assert view["call_stack_source"] == "python"
    assert [f["name"] for f in view["call_stack"]] == ["python_inner", "python_outer"]
    assert view["call_stack"][0]["row"] == row_of(nested, "python_inner")


def test_launch_links_both_ways(nested: TraceModel) -> None:
    runtime = call(nested, "event", row=row_of(nested, "cudaLaunchKernel"))
    assert links_of(runtime) == {"gpu_activity": ["k1"]}
    kernel = call(nested, "event", row=row_of(nested, "k1"))
    assert links_of(kernel) == {"launcher": ["cudaLaunchKernel"], "cpu_op": ["aten::D"]}
    assert kernel["track"] == "t3"


def test_forward_backward_flows_both_ways(nested: TraceModel) -> None:
    fwd = call(nested, "event", row=row_of(nested, "A"))
    assert links_of(fwd)["backward"] == ["autograd::engine::evaluate_function: ABackward0"]
    bwd = call(
        nested,
        "event",
        row=rows_named(nested, "autograd::engine::evaluate_function: ABackward0")[0],
    )
    assert links_of(bwd) == {"forward": ["A"]}
    assert bwd["flows"][0]["category"] == "fwdbwd"


def test_sequence_numbers_link_forward_and_backward_without_flows(tmp_path: Path) -> None:
    b = TraceBuilder()
    for k in range(2):  # two iterations reuse the numbers: the nearest one wins
        base = k * 1000
        b.op("aten::mul", base + 0, 10, **{"Sequence number": 7})
        b.op("aten::add", base + 20, 10, **{"Sequence number": 8})
        b.op("autograd::engine::evaluate_function: AddBackward0", base + 100, 10,
             tid=OTHER_TID, **{"Sequence number": 8, "Fwd thread id": 1})  # fmt: skip
        b.op("autograd::engine::evaluate_function: MulBackward0", base + 120, 10,
             tid=OTHER_TID, **{"Sequence number": 7, "Fwd thread id": 1})  # fmt: skip
    model = b.model(tmp_path)
    mul = rows_named(model, "aten::mul")
    view = call(model, "event", row=mul[1])
    (link,) = view["flows"]
    assert link["relation"] == "backward" and link["category"] == "Sequence number"
    assert link["row"] == rows_named(model, "autograd::engine::evaluate_function: MulBackward0")[1]
    back = call(model, "event", row=link["row"])
    assert [(f["relation"], f["row"]) for f in back["flows"]] == [("forward", mul[1])]


def test_flows_in_a_window(nested: TraceModel) -> None:
    view = call(nested, "flows", t0=100, t1=130)
    cols = view["flows"]
    assert cols["category"] == ["fwdbwd"] and view["count"] == 1
    assert (cols["src_track"], cols["dst_track"]) == (["t1"], ["t2"])
    assert cols["src_row"] == [row_of(nested, "A")] and cols["src_depth"] == [0]
    assert cols["dst_ts"] == [120.0]
    assert call(nested, "flows", t0=160, t1=170)["count"] == 0
    assert call(nested, "flows", t0=100, t1=130, tracks="t2")["count"] == 1  # its end
    assert call(nested, "flows", t0=100, t1=130, tracks="t3")["count"] == 0


# --- search and range summary -----------------------------------------------------------


def test_search(nested: TraceModel) -> None:
    view = call(nested, "search", q="ATEN::")
    assert view["names"] == [{"name": "aten::C", "count": 1}, {"name": "aten::D", "count": 1}]
    hits = view["hits"]
    assert hits["ts"] == [15.0, 50.0] and hits["depth"] == [2, 1] and hits["track"] == ["t1", "t1"]
    assert [view["names"][i]["name"] for i in hits["name"]] == ["aten::C", "aten::D"]
    assert hits["row"] == [row_of(nested, "aten::C"), row_of(nested, "aten::D")]
    later = call(nested, "search", q="aten", t0=40, t1=100, limit=5)
    assert later["hits"]["ts"] == [50.0] and later["total"] == 1
    limited = call(nested, "search", q="e", limit=2)
    assert len(limited["hits"]["row"]) == 2 and limited["truncated"]
    assert call(nested, "search", q="nothing-like-this")["total"] == 0


def test_range_summary_clips_and_subtracts_children(nested: TraceModel) -> None:
    view = call(nested, "range_summary", t0=25, t1=60, tracks="t1")
    rows = {r["name"]: r for r in view["rows"]}
    assert rows["A"] == {"name": "A", "count": 1, "total_us": 35.0, "self_us": 10.0}
    assert rows["B"]["total_us"] == 15.0 and rows["B"]["self_us"] == 15.0
    assert rows["aten::D"]["total_us"] == 10.0
    assert "aten::C" not in rows and view["event_count"] == 3
    whole = {r["name"]: r for r in call(nested, "range_summary", t0=0, t1=100)["rows"]}
    assert whole["A"]["self_us"] == 100.0 - 30.0 - 40.0
    assert whole["k1"]["total_us"] == 10.0


def route_json(model: TraceModel, route: str, **params: Any) -> bytes:
    """A trace-view route's JSON as the plugin's handler answers it (its kept JSON)."""
    endpoint = ENDPOINTS[route]
    decoded = endpoint.decode({k: str(v) for k, v in params.items()})
    return endpoint.traces_json([WorkerTrace(None, model)], decoded)


def test_a_window_asked_again_is_the_answer_kept(nested: TraceModel, tmp_path: Path) -> None:
    """trace, flows and range_summary keep the JSON of their last answers per model: the
    same resolved request (defaults filled in) gets the same JSON, any other request its
    own; the compute function's answer, made anew, encodes to it."""
    for route, params, other in (
        ("trace", {"t0": 0, "t1": 100}, {"t0": 0, "t1": 100, "width": 40}),
        ("flows", {"t0": 100, "t1": 130}, {"t0": 160, "t1": 170}),
        ("range_summary", {"t0": 25, "t1": 60, "tracks": "t1"}, {"t0": 0, "t1": 100}),
    ):
        first = route_json(nested, route, **params)
        assert route_json(nested, route, **params) is first
        assert first == msgspec.json.encode(call(nested, route, **params))
        assert route_json(nested, route, **other) != first
        fresh = build_model(str(nested_trace().write(tmp_path / f"{route}.pt.trace.json")))
        assert route_json(fresh, route, **params) == first  # the same trace: equal, not kept
    whole = route_json(nested, "trace")
    assert route_json(nested, "trace", width=1500, min_px=1, max_items=20000) is whole


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "params", "error"),
    [
        ("trace", {"t0": "abc"}, ViewParamError),
        ("trace", {"t0": "10", "t1": "5"}, ViewParamError),
        ("trace", {"width": "0"}, ViewParamError),
        ("trace", {"t0": "nan"}, ViewParamError),
        ("trace", {"tracks": "t99"}, TimelineNotFound),
        ("event", {}, ViewParamError),
        ("event", {"row": "x"}, ViewParamError),
        ("event", {"row": "100000"}, TimelineNotFound),
        ("search", {}, ViewParamError),
    ],
)
def test_bad_requests(nested: TraceModel, route: str, params: dict[str, str], error: type) -> None:
    with pytest.raises(error):
        answer(route, [WorkerTrace(None, nested)], params)


# --- several ranks ----------------------------------------------------------------------


def rank_trace(base_ns: int, rank: int) -> TraceBuilder:
    b = TraceBuilder()
    b.header["baseTimeNanoseconds"] = base_ns
    b.header["distributedInfo"] = {"rank": rank}
    op = b.op(f"op_rank{rank}", 100, 50)
    b.launch(110, 5, op, gpu_ts=120, gpu_dur=20, name=f"nccl_rank{rank}")
    return b


def test_ranks_align_on_absolute_time(tmp_path: Path) -> None:
    r0 = rank_trace(1_700_000_000_000_000_000, 0).model(tmp_path, "a.json")
    r1 = rank_trace(1_700_000_000_000_500_000, 1).model(tmp_path, "b.json")  # base 500 µs later
    workers = [WorkerTrace("worker0", r0), WorkerTrace("worker1", r1)]
    tracks = answer("tracks", workers, {})
    assert tracks["time_base"] == "epoch"
    labels = [t["label"] for t in tracks["tracks"]]
    assert "rank 0 · GPU 0 stream 7" in labels and "rank 1 · GPU 0 stream 7" in labels
    assert tracks["workers"][1]["offset_us"] - tracks["workers"][0]["offset_us"] == 500.0
    base = 1_700_000_000_000_000.0  # µs
    view = answer("trace", workers, {"t0": str(base), "t1": str(base + 1000)})
    starts = {
        view["names"][n]: s
        for t in view["tracks"]
        if t["events"]
        for n, s in zip(t["events"]["name"], t["events"]["start"])
    }
    assert starts["op_rank0"] == base + 100 and starts["op_rank1"] == base + 600
    assert starts["nccl_rank1"] - starts["nccl_rank0"] == 500.0
    only = answer("trace", workers, {"t0": str(base + 550), "t1": str(base + 700),
                                     "tracks": "worker1:t0,worker0:t0"})  # fmt: skip
    assert [t["id"] for t in only["tracks"]] == ["worker0:t0", "worker1:t0"]
    assert [len(t["events"]["row"]) for t in only["tracks"]] == [0, 2]
    with pytest.raises(TimelineNotFound):
        answer("trace", workers, {"tracks": "t0"})


# --- routes through TensorBoard ----------------------------------------------------------


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    run = tmp_path / "logs" / "job"
    run.mkdir(parents=True)
    nested_trace().write(run / "worker0.100.pt.trace.json.gz", gz=True)
    rank_trace(1_000_000_000, 1).write(run / "worker1.100.pt.trace.json")
    return tmp_path / "logs"


def test_routes_in_process(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    assert client.wait_ready("job", "worker0")["state"] == "ready"
    assert client.wait_ready("job", "worker1")["state"] == "ready"
    q = {"run": "job", "worker": "worker0", "span": "1"}
    tracks = client.json("tracks", **q)
    assert "GPU 0 stream 7" in by_label(tracks["tracks"])
    view = client.json("trace", **q, t0=0, t1=400, width=800)
    assert sum(len(t["events"]["row"]) for t in view["tracks"] if t["events"]) == 14
    row = view["tracks"][1]["events"]["row"][0]
    assert client.json("event", **q, row=row)["row"] == row
    assert client.json("flows", **q)["count"] == 1  # fwdbwd; the launch has no flow event
    assert client.json("search", **q, q="aten")["total"] == 2
    assert client.json("range_summary", **q, t0=0, t1=50)["event_count"] > 0
    both = client.json("trace", run="job", workers="worker0,worker1")
    assert {t["worker"] for t in both["tracks"]} == {"worker0", "worker1"}
    assert both["time_base"] == "epoch"
    assert client.get("event", **q, row=10**6).status_code == 404
    assert client.get("trace", **q, tracks="nope").status_code == 404
    assert client.get("trace", **q, t0="x").status_code == 400
    assert client.get("trace", run="job", workers="worker0,ghost").status_code == 404
    assert client.get("search", **q).status_code == 400


def test_download_streams_the_original_file(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    response = client.get("download", run="job", worker="worker0", span="1")
    assert response.status_code == 200
    path = logdir / "job" / "worker0.100.pt.trace.json.gz"
    assert response.get_data() == path.read_bytes()
    assert response.headers["Content-Type"] == "application/gzip"
    assert "attachment" in response.headers["Content-Disposition"]
    assert "worker0.100.pt.trace.json.gz" in response.headers["Content-Disposition"]
    assert gzip.decompress(response.get_data()).startswith(b"{")
    plain = client.get("download", run="job", worker="worker1", span="1")
    assert plain.headers["Content-Type"].startswith("application/json")


# --- a real GPU trace ---------------------------------------------------------------------


def test_corpus_gpu_trace() -> None:
    path = corpus_path(
        "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
    )
    model = build_model(str(path))
    index = index_of(model)
    tracks = call(model, "tracks")
    kinds = {t["label"]: t["kind"] for t in tracks["tracks"]}
    # Counters name the device as the Overview does (one identity per device).
    gpu = "GPU 0 · Tesla V100-DGXS-32GB"
    assert kinds["GPU 0 stream 7"] == "gpu" and kinds[f"{gpu} utilization"] == "counter"
    assert f"{gpu} memory allocated" in kinds
    assert len(tracks["steps"]) >= 5
    view = call(model, "trace")
    total = sum(len(t["events"]["row"]) + sum(t["blocks"]["count"])
                for t in view["tracks"] if t["events"] is not None)  # fmt: skip
    assert total == len(index)
    assert len(view["names"]) > 5 and view["item_count"] < 20_000
    util = next(t for t in view["tracks"] if t["id"] == "gpu0.util")["counter"]
    assert 0 < max(util["value"]) <= 1
    kernel = int(np.flatnonzero(model.events["kind"] == 4)[100])  # Kind.KERNEL
    details = call(model, "event", row=kernel)
    assert {"launcher", "cpu_op"} <= set(links_of(details))
    launcher = next(f for f in details["flows"] if f["relation"] == "launcher")
    back = call(model, "event", row=launcher["row"])
    assert any(f["row"] == kernel for f in back["flows"])
    op = call(model, "event", row=rows_named(model, "aten::zeros")[0])
    assert op["call_stack_source"] == "args" and op["call_stack"]
    flows = call(model, "flows", t0=index.t_min, t1=index.t_min + 200_000)
    assert flows["count"] > 0 and set(flows["flows"]["category"]) == {"async"}
    assert all(r >= 0 for r in flows["flows"]["dst_row"])
    conv = call(model, "event", row=rows_named(model, "aten::conv2d")[0])
    (backward,) = [f for f in conv["flows"] if f["relation"] == "backward"]
    assert backward["category"] == "Sequence number" and backward["name"].endswith("Backward")


def test_corpus_python_frames_and_counters() -> None:
    path = corpus_path("tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    model = build_model(str(path))
    tracks = by_label(call(model, "tracks")["tracks"])
    assert tracks["thread 25286 (python3) · Python"]["kind"] == "python"
    assert tracks["thread 25286 (python3) · Python"]["max_depth"] > 10
    gpu = "GPU 0 · NVIDIA H100 80GB HBM3"
    assert {f"{gpu} memory allocated", f"{gpu} memory reserved"} <= set(tracks)
    op = call(model, "event", row=rows_named(model, "aten::linear")[0])
    assert op["call_stack_source"] == "python"
    assert any(f["name"].startswith("nn.Module: Linear") for f in op["call_stack"])
    ev = model.events
    kernels = np.flatnonzero(ev["kind"] == 4)  # Kind.KERNEL
    runtimes = np.flatnonzero(ev["kind"] == 7)  # Kind.RUNTIME
    launched = np.isin(
        model.column_at("correlation", runtimes), model.column_at("correlation", kernels)
    )
    launch = int(runtimes[launched][5])
    details = call(model, "event", row=launch)
    (gpu,) = [f for f in details["flows"] if f["relation"] == "gpu_activity"]
    back = call(model, "event", row=gpu["row"])
    assert [f["row"] for f in back["flows"] if f["relation"] == "launcher"] == [launch]


def test_a_loading_file_answers_202(
    plugin_client: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kinetoscope.store.trace_store import NotReady

    client = plugin_client(logdir)
    client.wait_ready("job", "worker0")

    def not_ready(path: str) -> TraceModel:
        raise NotReady()

    monkeypatch.setattr(client.plugin.store, "model", not_ready)
    response = client.get("trace", run="job", workers="worker0,worker1")
    assert response.status_code == 202
    assert response.get_json()["worker"] == "worker0"
