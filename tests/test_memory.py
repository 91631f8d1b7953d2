"""Memory view: levels, peaks, pairing, op attribution, per-op stats, curves, routes."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import CPU_PID, CPU_TID, TraceBuilder
from corpus import corpus_path, corpus_trace_model
from kinetoscope.analysis.memory import view as mem
from kinetoscope.analysis.memory.index import device_label, memory_index
from kinetoscope.api.endpoints import VIEWS, ViewParamError, supported_views
from kinetoscope.cli.main import main as cli_main
from kinetoscope.model.trace_model import TraceModel

MB = 1 << 20


def raw_memory(
    b: TraceBuilder,
    ts: float,
    nbytes: int,
    device_type: int = 0,
    device_id: int = -1,
    addr: int | None = None,
    tid: Any = CPU_TID,
) -> None:
    """A 2021-style memory event: no Total Allocated / Total Reserved (maybe no Addr)."""
    args: dict[str, Any] = {"Device Type": device_type, "Device Id": device_id, "Bytes": nbytes}
    if addr is not None:
        args["Addr"] = addr
    b.events.append(
        {
            "ph": "i",
            "s": "t",
            "name": "[memory]",
            "pid": CPU_PID,
            "tid": tid,
            "ts": ts,
            "args": args,
        }
    )


def known_trace() -> TraceBuilder:
    """GPU0 events with totals; 30 bytes were allocated before the recording started.

    ops (one thread):  outer [0,100) > aten::empty [10,20), child [30,60) > aten::empty [40,45)
                       later [200,300)
    """
    b = TraceBuilder()
    b.step(1, 0, 400)  # ProfilerStep ranges never own memory events
    b.op("outer", 0, 100)
    b.op("aten::empty", 10, 10)
    b.op("child", 30, 30)
    b.op("aten::empty", 40, 5)
    b.op("later", 200, 100)
    A, B, C, D, E = 0xA00, 0xB00, 0xC00, 0xD00, 0xE00
    b.memory(12, 100, A, 130, 512)  # outer > aten::empty
    b.memory(41, 50, B, 180, 512)  # child > aten::empty; never freed
    b.memory(50, -100, A, 80, 512)  # child (self)
    b.memory(70, 300, C, 380, 1024)  # outer (self): the peak
    b.memory(150, -30, D, 350, 1024)  # no op; frees memory allocated before the recording
    b.memory(210, 20, E, 370, 1024)  # later; never freed
    b.memory(250, -300, C, 70, 1024)  # later
    return b


def view(model: TraceModel, name: str = "memory", **params: Any) -> Any:
    endpoint = VIEWS[name]  # as the plugin's handler calls it: the query decoded first
    return endpoint.of_span(model, endpoint.decode({k: str(v) for k, v in params.items()}))


def by_name(rows: list[dict[str, Any]], device: str = "GPU0") -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in rows if r["device"] == device}


@pytest.fixture()
def known(tmp_path: Path) -> TraceModel:
    return known_trace().model(tmp_path)


def test_devices_and_peaks(known: TraceModel) -> None:
    v = view(known)
    (gpu,) = v["devices"]
    assert gpu["device"] == "GPU0" and gpu["device_type"] == 1 and gpu["device_id"] == 0
    assert gpu["peak_allocated_bytes"] == 380 and gpu["peak_allocated_us"] == 70
    assert gpu["peak_reserved_bytes"] == 1024 and gpu["peak_reserved_us"] == 70
    assert gpu["allocated_source"] == "trace" and gpu["reserved_known"]
    assert gpu["events"] == 7
    assert gpu["end_allocated_bytes"] == 70
    op = gpu["peak_op"]
    assert op["name"] == "outer" and op["ops"] == ["outer"] and op["start_us"] == 0
    assert v["default_device"] == "GPU0" and v["notes"] == []


def test_pairing(known: TraceModel) -> None:
    v = view(known)
    assert (v["allocations"], v["never_freed"], v["freed_unseen"]) == (2, 2, 1)
    table = v["allocation_table"]
    assert table["total_rows"] == 5 and not table["truncated"]
    rows = table["rows"]
    assert [r["size_bytes"] for r in rows] == [300, 100, 50, 30, 20]  # largest first
    c, a, b, d, e = rows
    assert c["state"] == "paired" and (c["alloc_us"], c["free_us"], c["duration_us"]) == (
        70,
        250,
        180,
    )
    assert c["op"] == "outer" and c["free_op"] == "later" and c["parent_op"] is None
    assert a["op"] == "aten::empty" and a["parent_op"] == "outer" and a["free_op"] == "child"
    assert b["state"] == "never_freed" and b["free_us"] is None and b["duration_us"] is None
    assert b["op"] == "aten::empty" and b["parent_op"] == "child"
    assert d["state"] == "freed_unseen" and d["alloc_us"] is None and d["free_us"] == 150
    assert d["op"] is None  # freed outside every op
    assert e["state"] == "never_freed" and e["op"] == "later"
    assert v["unattributed_events"] == 1


def test_operator_stats_self_and_total(known: TraceModel) -> None:
    stats = by_name(view(known)["operator_stats"])
    assert set(stats) == {"outer", "child", "aten::empty", "later"}  # no ProfilerStep row
    outer, child, empty, later = (
        stats["outer"],
        stats["child"],
        stats["aten::empty"],
        stats["later"],
    )
    assert outer["calls"] == 1 and empty["calls"] == 2
    # self: only the events of the op itself
    assert (outer["self_allocation_count"], outer["self_allocation_bytes"]) == (1, 300)
    assert outer["self_release_count"] == 0 and outer["self_increase_bytes"] == 300
    # total: with the events of aten::empty (twice) and child
    assert (outer["allocation_count"], outer["allocation_bytes"]) == (3, 450)
    assert (outer["release_count"], outer["release_bytes"]) == (1, 100)
    assert outer["increase_bytes"] == 350
    assert (child["self_release_count"], child["self_release_bytes"]) == (1, 100)
    assert child["self_increase_bytes"] == -100 and child["increase_bytes"] == -50
    assert (empty["allocation_count"], empty["allocation_bytes"]) == (2, 150)
    assert empty["self_increase_bytes"] == empty["increase_bytes"] == 150
    assert (later["allocation_bytes"], later["release_bytes"], later["increase_bytes"]) == (
        20,
        300,
        -280,
    )
    # stats only count events that belong to ops: the free at t=150 is in none
    assert sum(r["self_increase_bytes"] for r in stats.values()) == 100 + 50 - 100 + 300 + 20 - 300


def test_nested_same_name_ops_count_an_event_once(tmp_path: Path) -> None:
    """`aten::div` calling `aten::div`: an event inside both is one event of the name, and
    calls are counted as the Operator view counts them."""
    b = TraceBuilder()
    b.op("aten::div", 0, 100)
    b.op("aten::div", 10, 40)  # single same-named child: one call with its parent
    b.op("aten::copy_", 200, 100)
    b.op("aten::copy_", 210, 20)  # two same-named children: three calls
    b.op("aten::copy_", 240, 20)
    b.memory(20, 100, 0xA00, 100)  # inner aten::div
    b.memory(60, 50, 0xB00, 150)  # outer aten::div itself
    b.memory(215, 10, 0xC00, 160)  # first inner aten::copy_
    b.memory(245, 20, 0xD00, 180)  # second inner aten::copy_
    b.memory(280, -10, 0xC00, 170)  # outer aten::copy_ itself
    model = b.model(tmp_path)
    stats = by_name(view(model)["operator_stats"])
    div, copy = stats["aten::div"], stats["aten::copy_"]
    assert (div["allocation_count"], div["allocation_bytes"]) == (2, 150)  # not 3, 250
    assert (div["self_allocation_count"], div["self_allocation_bytes"]) == (2, 150)
    assert (copy["allocation_count"], copy["allocation_bytes"]) == (2, 30)  # not 4, 60
    assert (copy["release_count"], copy["increase_bytes"]) == (1, 20)
    assert copy["self_increase_bytes"] == copy["increase_bytes"]
    ops = {r["name"]: r["calls"] for r in VIEWS["operators"].compute(model, {})["rows"]}
    assert (div["calls"], copy["calls"]) == (ops["aten::div"], ops["aten::copy_"]) == (1, 3)
    # a range counts the calls that overlap it
    part = by_name(view(model, start_us=205, end_us=235)["operator_stats"])
    assert part["aten::copy_"]["calls"] == 2 and part["aten::copy_"]["allocation_count"] == 1


def test_range_changes_peak_and_tables(known: TraceModel) -> None:
    v = view(known, start_us=40, end_us=160)
    gpu = v["devices"][0]
    assert gpu["events"] == 4 and gpu["peak_allocated_bytes"] == 380
    assert gpu["start_allocated_bytes"] == 130 and gpu["end_allocated_bytes"] == 350
    # pairing is over the whole trace: A (freed at 50) keeps its allocation time 12
    rows = {r["size_bytes"]: r for r in v["allocation_table"]["rows"]}
    assert set(rows) == {300, 100, 50, 30} and rows[100]["alloc_us"] == 12
    assert (v["allocations"], v["never_freed"], v["freed_unseen"]) == (2, 1, 1)

    later = view(known, start_us=200, end_us=300)
    gpu = later["devices"][0]
    assert gpu["peak_allocated_bytes"] == 370 and gpu["peak_allocated_us"] == 210
    assert gpu["peak_op"]["name"] == "later"
    assert {r["size_bytes"] for r in later["allocation_table"]["rows"]} == {300, 20}
    assert set(by_name(later["operator_stats"])) == {"later"}

    # nothing happens inside: the level the range starts at is its peak, set at t=250
    quiet = view(known, start_us=260, end_us=300)["devices"][0]
    assert quiet["events"] == 0 and quiet["peak_allocated_bytes"] == 70
    assert quiet["peak_allocated_us"] == 250

    inner = by_name(view(known, start_us=40, end_us=60)["operator_stats"])
    assert set(inner) == {"outer", "child", "aten::empty"}
    assert (
        inner["aten::empty"]["calls"] == 1 and inner["aten::empty"]["self_allocation_bytes"] == 50
    )
    assert inner["outer"]["self_allocation_count"] == 0 and inner["outer"]["increase_bytes"] == -50


def test_memory_events_pages(known: TraceModel) -> None:
    first = view(known, "memory_events", limit=2)
    assert first["total_rows"] == 5 and [r["size_bytes"] for r in first["rows"]] == [300, 100]
    rest = view(known, "memory_events", limit=2, offset=2)
    assert [r["size_bytes"] for r in rest["rows"]] == [50, 30]
    by_alloc = view(known, "memory_events", sort="alloc")["rows"]
    assert [r["alloc_us"] for r in by_alloc] == [12, 41, 70, 210, None]
    by_duration = view(known, "memory_events", sort="duration")["rows"]
    assert [r["duration_us"] for r in by_duration][:2] == [180, 38]
    assert view(known, "memory_events", device="GPU0", start_us=200)["total_rows"] == 2
    for bad in ({"sort": "nope"}, {"limit": "0"}, {"offset": "x"}, {"device": "GPU7"}):
        with pytest.raises(ViewParamError):
            view(known, "memory_events", **bad)
    with pytest.raises(ViewParamError):
        view(known, start_us=10, end_us=5)


def test_attribution_edges(tmp_path: Path) -> None:
    """Same start as the parent → the child; at an op's end → not that op; other threads,
    and a thread written as "300" for ops and 300 for memory events (2021 traces)."""
    b = TraceBuilder()
    b.op("p2", 400, 100)
    b.op("aten::zeros", 400, 50)
    b.op("aten::empty", 400, 10)
    b.memory(400, 64, 1, 64, device_type=0, device_id=-1)  # aten::empty (innermost, same start)
    b.memory(410, 16, 2, 80, device_type=0, device_id=-1)  # aten::zeros: empty ended at 410
    b.memory(420, 8, 3, 88, device_type=0, device_id=-1, tid=999)  # a thread with no ops
    b.memory(500, 8, 4, 96, device_type=0, device_id=-1)  # p2 ended at 500
    b.events.append(
        {"ph": "X", "cat": "cpu_op", "name": "strop", "pid": CPU_PID, "tid": "300", "ts": 600,
         "dur": 10, "args": {}}
    )  # fmt: skip
    b.memory(605, 8, 5, 104, device_type=0, device_id=-1, tid=300)
    model = b.model(tmp_path)
    index = memory_index(model)
    names = [model.names[model.events["name"][r]] if r >= 0 else None for r in index.op]
    parents = [model.names[model.events["name"][r]] if r >= 0 else None for r in index.parent]
    assert names == ["aten::empty", "aten::zeros", None, None, "strop"]
    assert parents == ["aten::zeros", "p2", None, None, None]
    v = view(model)
    assert v["devices"][0]["device"] == "CPU" and v["devices"][0]["peak_op"]["name"] == "strop"
    assert v["unattributed_events"] == 2


def test_overlapping_ops_still_attributed(tmp_path: Path) -> None:
    """Rounded timestamps: a child ending 1 µs after its parent, siblings overlapping."""
    b = TraceBuilder()
    b.op("a", 0, 10)
    b.op("a_child", 5, 6)  # ends at 11, after a
    b.op("b", 9, 11)  # starts before a ends
    b.op("b_child", 12, 2)
    for i, t in enumerate((6, 9.5, 13, 19)):
        b.memory(t, 1, i + 1, i + 1, device_type=0, device_id=-1)
    model = b.model(tmp_path)
    index = memory_index(model)
    names = [model.names[model.events["name"][r]] for r in index.op]
    assert names == ["a_child", "b", "b_child", "b"]


def test_computed_levels_without_totals(tmp_path: Path) -> None:
    """2021 traces: no Total Allocated/Reserved, no Addr: allocated is the running sum,
    lifted so it never goes below zero; reserved is unknown; nothing can be paired."""
    b = TraceBuilder()
    b.op("op", 0, 100)
    for t, n in ((1, -40), (2, 100), (3, 50), (4, -100)):
        raw_memory(b, t, n, device_type=1, device_id=0)
    raw_memory(b, 5, 8, addr=77)  # CPU, with an address but no totals
    raw_memory(b, 6, -8, addr=77)
    model = b.model(tmp_path)
    v = view(model)
    cpu, gpu = v["devices"]
    assert gpu["device"] == "GPU0" and gpu["allocated_source"] == "computed"
    assert gpu["peak_allocated_bytes"] == 40 + (-40 + 100 + 50)  # baseline 40
    assert gpu["peak_reserved_bytes"] is None and not gpu["reserved_known"]
    assert cpu["device"] == "CPU" and cpu["peak_allocated_bytes"] == 8
    assert v["allocations"] == 1 and v["no_address_events"] == 4
    assert any("no Total Allocated" in n for n in v["notes"])
    curve = view(model, "memory_curve")
    assert curve["device"] == "GPU0" and curve["reserved_bytes"] is None
    assert curve["allocated_bytes"] == [0, 100, 150, 50]


def test_device_names(tmp_path: Path) -> None:
    assert device_label(0, -1) == "CPU" and device_label(1, 3) == "GPU3"
    assert device_label(6, 0) == "GPU0" and device_label(19, 1) == "MTIA1"
    assert device_label(42, 2) == "device type 42 #2"
    b = TraceBuilder()
    b.memory(1, 8, 1, 8, device_type=42, device_id=2)
    b.memory(2, 8, 2, 8, device_type=19, device_id=0)
    b.memory(3, 8, 3, 8, device_type=1, device_id=1)
    b.memory(4, 8, 4, 8, device_type=0, device_id=-1)
    v = view(b.model(tmp_path))
    assert [d["device"] for d in v["devices"]] == ["CPU", "GPU1", "MTIA0", "device type 42 #2"]
    assert v["default_device"] == "GPU1"


def test_supports_only_traces_with_memory(tmp_path: Path, known: TraceModel) -> None:
    b = TraceBuilder()
    b.op("x", 0, 10)
    plain = b.model(tmp_path, "plain.pt.trace.json")
    assert "memory" not in supported_views(plain)
    assert "memory" in supported_views(known)
    assert "memory_curve" not in supported_views(known)  # detail routes, not in the report


# --- curves ------------------------------------------------------------------------


def bucket_extremes(t: np.ndarray, v: np.ndarray, t0: float, t1: float, width: int) -> dict:
    b = np.minimum(((t - t0) * (width / (t1 - t0))).astype(np.int64), width - 1)
    return {int(k): (v[b == k].min(), v[b == k].max()) for k in np.unique(b)}


def test_downsample_keeps_bucket_extremes() -> None:
    rng = np.random.default_rng(7)
    n = 200_000
    t = np.cumsum(rng.exponential(1.0, n))
    a = np.cumsum(rng.normal(0, 1, n))
    r = np.maximum.accumulate(a) + 5
    keep = mem.downsample(t, [a, r], 500)
    assert keep.size <= 6 * 500 and keep[0] == 0 and keep[-1] == n - 1
    assert np.all(np.diff(keep) > 0)
    full_a = bucket_extremes(t, a, t[0], t[-1], 500)
    kept_a = bucket_extremes(t[keep], a[keep], t[0], t[-1], 500)
    assert full_a == kept_a
    assert bucket_extremes(t, r, t[0], t[-1], 500) == bucket_extremes(
        t[keep], r[keep], t[0], t[-1], 500
    )
    small = mem.downsample(t[:100], [a[:100]], 500)
    assert small.tolist() == list(range(100))


def test_curve_view_many_events(tmp_path: Path) -> None:
    b = TraceBuilder()
    rng = np.random.default_rng(3)
    total = 0
    live: list[tuple[int, int]] = []
    for i in range(20_000):
        if live and rng.random() < 0.45:
            addr, size = live.pop(int(rng.integers(len(live))))
            total -= size
            b.memory(i, -size, addr, total, 1 << 30)
        else:
            size = int(rng.integers(1, 1000)) * 512
            total += size
            live.append((i + 1, size))
            b.memory(i, size, i + 1, total, 1 << 30)
    model = b.model(tmp_path)
    curve = view(model, "memory_curve", width=100)
    assert curve["downsampled"] and curve["points"] == 20_000
    assert len(curve["t_us"]) <= 500
    index = memory_index(model)
    d = index.devices[0]
    assert curve["peak_allocated_bytes"] == d.allocated.max() == max(curve["allocated_bytes"])
    assert min(curve["allocated_bytes"]) == d.allocated.min()
    # a range: starts with the level carried in, ends with the level held at its end
    part = view(model, "memory_curve", start_us=5000.5, end_us=6000.5, width=1000)
    assert not part["downsampled"] and part["t_us"][0] == 5000.5 and part["t_us"][-1] == 6000.5
    assert part["allocated_bytes"][0] == d.allocated[5000]
    assert part["allocated_bytes"][-1] == d.allocated[6000]
    assert part["points"] == 1000 + 2
    v = view(model)
    assert v["allocation_table"]["truncated"] and len(v["allocation_table"]["rows"]) == 5000
    assert v["allocation_table"]["total_rows"] == v["allocations"] + v["never_freed"]
    sizes = [r["size_bytes"] for r in v["allocation_table"]["rows"]]
    assert sizes == sorted(sizes, reverse=True)
    with pytest.raises(ViewParamError):
        view(model, "memory_curve", width=0)


# --- corpus ------------------------------------------------------------------------

CORPUS_MEMORY = [
    "hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
]
RESNET = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


def raw_memory_events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if e.get("name") == "[memory]" and e.get("ph") == "i"]


def label(args: dict[str, Any]) -> str:
    return device_label(int(args["Device Type"]), int(args["Device Id"]))


@pytest.mark.corpus
@pytest.mark.parametrize("rel", CORPUS_MEMORY)
def test_corpus_traces_with_totals(rel: str) -> None:
    path = corpus_path(rel)
    model = corpus_trace_model(path)
    raw = raw_memory_events(path)
    v = view(model)
    devices = {d["device"]: d for d in v["devices"]}
    expect_peak: dict[str, float] = {}
    for e in raw:
        name = label(e["args"])
        expect_peak[name] = max(expect_peak.get(name, 0), e["args"]["Total Allocated"])
    assert {n: d["peak_allocated_bytes"] for n, d in devices.items()} == expect_peak
    for d in devices.values():
        assert d["allocated_source"] == "trace"
        # The CPU allocator reserves nothing: its all-zero "Total Reserved" means unknown.
        assert d["reserved_known"] == (d["device"] != "CPU")
        assert d["peak_reserved_bytes"] is None or d["peak_reserved_bytes"] >= 0
    gpu = devices[v["default_device"]]
    assert v["default_device"].startswith("GPU") and gpu["peak_op"] is not None
    assert gpu["peak_reserved_bytes"] >= gpu["peak_allocated_bytes"]
    assert gpu["total_memory_bytes"] and gpu["peak_reserved_bytes"] <= gpu["total_memory_bytes"]
    paired = v["allocations"]
    assert paired > 0 and v["allocation_table"]["total_rows"] == (
        paired + v["never_freed"] + v["freed_unseen"]
    )
    # every event with an address is in exactly one row (a pair counts twice)
    with_addr = sum(1 for e in raw if "Addr" in e["args"] and e["args"]["Bytes"] != 0)
    assert 2 * paired + v["never_freed"] + v["freed_unseen"] == with_addr

    # a range: the peak bounds every Total Allocated inside it, and equals one of them or
    # the level carried in
    ts = sorted(e["ts"] for e in raw)
    lo, hi = ts[len(ts) // 3], ts[2 * len(ts) // 3]
    part = view(model, device=v["default_device"], start_us=lo, end_us=hi)
    gpu_part = {d["device"]: d for d in part["devices"]}[v["default_device"]]
    inside = [
        e["args"]["Total Allocated"]
        for e in raw
        if lo <= e["ts"] <= hi and label(e["args"]) == v["default_device"]
    ]
    assert gpu_part["peak_allocated_bytes"] >= max(inside)
    assert gpu_part["peak_allocated_bytes"] in inside or (
        gpu_part["peak_allocated_bytes"] == gpu_part["start_allocated_bytes"]
    )
    assert gpu_part["events"] == len(inside)
    assert part["allocation_table"]["total_rows"] < v["allocation_table"]["total_rows"]
    assert {r["device"] for r in part["operator_stats"]} <= {v["default_device"]}
    for row in part["operator_stats"]:
        assert row["allocation_count"] >= row["self_allocation_count"]
        assert row["allocation_bytes"] >= row["self_allocation_bytes"]
    # calls agree with the Operator view; a name never counts an event twice
    op_calls = {r["name"]: r["calls"] for r in VIEWS["operators"].compute(model, {})["rows"]}
    for row in v["operator_stats"]:
        assert row["calls"] == op_calls[row["name"]], row["name"]
        events_on_device = sum(1 for e in raw if label(e["args"]) == row["device"])
        assert row["allocation_count"] + row["release_count"] <= events_on_device

    curve = view(model, "memory_curve", width=50)
    assert curve["peak_allocated_bytes"] == gpu["peak_allocated_bytes"]
    assert max(curve["allocated_bytes"]) == gpu["peak_allocated_bytes"]


@pytest.mark.corpus
def test_corpus_2021_sample() -> None:
    """PyTorch 1.9: Bytes only. The old plugin showed no curve and no events for it (its
    goldens file has no memory answers); we give computed levels and per-op stats."""
    path = corpus_path(RESNET)
    model = corpus_trace_model(path)
    v = view(model)
    devices = {d["device"]: d for d in v["devices"]}
    assert set(devices) == {"CPU", "GPU0"}
    gpu = devices["GPU0"]
    assert gpu["allocated_source"] == "computed" and gpu["peak_reserved_bytes"] is None
    assert 0 < gpu["peak_allocated_bytes"] < gpu["total_memory_bytes"]
    assert gpu["peak_op"]["stack_source"] is None or gpu["peak_op"]["stack"]
    assert devices["CPU"]["peak_op"]["stack_source"] == "call_stack"
    assert v["allocations"] == 0 and v["no_address_events"] == 12838
    # The running sum of every event is what the trace says was allocated at its end.
    raw = raw_memory_events(path)
    net = sum(e["args"]["Bytes"] for e in raw if label(e["args"]) == "GPU0")
    assert gpu["end_allocated_bytes"] - gpu["start_allocated_bytes"] == net
    stats = by_name(v["operator_stats"])
    assert stats["aten::empty"]["self_allocation_count"] > 0
    total_self = sum(r["self_allocation_count"] for r in stats.values())
    attributed = sum(1 for e in raw if label(e["args"]) == "GPU0" and e["args"]["Bytes"] > 0)
    assert 0.9 * attributed <= total_self <= attributed
    # aten::div dispatches to aten::div: its 6 allocations are counted once, not twice,
    # and its calls are the Operator view's
    div = stats["aten::div"]
    assert (div["allocation_count"], div["allocation_bytes"]) == (6, 77070336)
    op_calls = {r["name"]: r["calls"] for r in VIEWS["operators"].compute(model, {})["rows"]}
    assert div["calls"] == op_calls["aten::div"] == 198
    golden = corpus_path("goldens/tb_plugin_result_check_file.txt").read_text()
    # its answers: overview, operation, kernel; no memory view (its curve, stats, events)
    assert "Size Increase" not in golden and "Peak Memory Usage" not in golden


# --- a real torch trace and the CLI --------------------------------------------------


@pytest.mark.slow
def test_torch_cpu_trace_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    from kinetoscope.handlers import tensorboard_trace_handler

    logdir = tmp_path / "run"
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        profile_memory=True,
        with_stack=True,
        on_trace_ready=tensorboard_trace_handler(str(logdir), worker_name="worker0"),
    ):
        keep = [torch.ones(256, 1024) for _ in range(4)]  # 4 MiB held to the end
        for _ in range(3):
            x = torch.randn(512, 512)
            y = (x @ x).relu()
            del x, y
        del keep[0]
    assert cli_main(["report", str(logdir), "--format", "json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "overview" in out
    report = out["memory"]
    cpu = {d["device"]: d for d in report["devices"]}["CPU"]
    assert cpu["peak_allocated_bytes"] >= 4 * MB + 2 * MB
    assert cpu["peak_reserved_bytes"] is None and not cpu["reserved_known"]
    assert isinstance(report["allocations"], int) and report["allocations"] >= 6
    assert report["never_freed"] >= 3  # three of the four `keep` tensors outlive the trace
    assert cpu["peak_op"] is not None and cpu["peak_op"]["name"].startswith("aten::")
    stats = by_name(report["operator_stats"], "CPU")
    assert stats["aten::ones"]["allocation_bytes"] >= 4 * MB
    assert stats["aten::ones"]["self_allocation_bytes"] == 0  # aten::empty inside it allocated
    assert stats["aten::mm"]["allocation_count"] >= 3
    raw = raw_memory_events(next(logdir.glob("*.pt.trace.json.gz")))
    totals = [e["args"]["Total Allocated"] for e in raw if e["args"]["Device Type"] == 0]
    assert cpu["peak_allocated_bytes"] == max(totals)
    assert not math.isnan(cpu["end_allocated_bytes"])


def test_cli_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    known_trace().write(tmp_path / "worker0.pt.trace.json")
    assert cli_main(["report", str(tmp_path), "--format", "text", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "Memory (peaks" in text and "allocations: 2 paired, 2 never freed, 1 freed" in text
    assert "GPU 0" in text and "outer" in text


def test_routes(tmp_path: Path, plugin_client: Any) -> None:
    root = tmp_path / "logs"
    (root / "run").mkdir(parents=True)
    known_trace().write(root / "run" / "worker0.100.pt.trace.json")
    plain = TraceBuilder()
    plain.op("x", 0, 10)
    plain.write(root / "run" / "worker1.100.pt.trace.json")
    client = plugin_client(root)
    assert "memory" in client.wait_ready("run", "worker0")["views"]
    assert "memory" not in client.wait_ready("run", "worker1")["views"]
    where = {"run": "run", "worker": "worker0", "span": "1"}
    got = client.json("memory", **where, start_us=200, end_us=300)
    assert got["devices"][0]["peak_allocated_bytes"] == 370
    curve = client.json("memory_curve", **where, device="GPU0", width=10)
    assert curve["allocated_bytes"] == [130, 180, 80, 380, 350, 370, 70]
    page = client.json("memory_events", **where, sort="alloc", limit=1, offset=1)
    assert page["total_rows"] == 5 and page["rows"][0]["alloc_us"] == 41
    assert client.get("memory", **where, device="GPU9").status_code == 400
    assert client.get("memory_curve", **where, width="wide").status_code == 400
    assert client.get("memory_events", **where, start_us=5, end_us=1).status_code == 400
