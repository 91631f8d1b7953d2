"""Counter tracks of the series a trace records (issue 71): CUPTI PM sampling as Kineto
writes it (libkineto `ChromeTraceLogger::handleCounterEvent`, 2026: one `ph: "C"` event a
metric and sample, `pid` "GPU <n> Counters", the value under the empty key) and any other
counter event (`args` of named numeric values), each a step function with its unit, on
the Trace page's tracks and windows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.trace_view import track_list
from kinetoscope.trace_view.counters import counter_series
from kinetoscope.trace_view.recorded_counters import recorded_counters
from kinetoscope.trace_view.workers import WorkerTrace

SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM = "dram__bytes_read.sum"


def _counter(name: str, pid: Any, ts: float, args: dict[str, Any], cat: str) -> dict[str, Any]:
    return {"ph": "C", "cat": cat, "name": name, "pid": pid, "tid": 0, "ts": ts, "args": args}


def _trace() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0.0, 400)
    op = t.op("aten::mm", 10.0, 300)
    t.launch(20.0, 5, op, gpu_ts=40.0, gpu_dur=300, name="gemm")
    for at, sm, dram in ((0.0, 10.0, 1000), (100.0, 80.0, 5000), (200.0, 40.0, 2000)):
        t.events.append(_counter(SM, "GPU 0 Counters", at, {"": sm}, "hardware_counters"))
        t.events.append(_counter(DRAM, "GPU 0 Counters", at, {"": dram}, "hardware_counters"))
    t.events.append(
        _counter("power", 100, 50.0, {"watts": 300.5, "note": "x"}, "cpu_instant_event")
    )
    return t


def test_each_recorded_series_is_a_counter_with_its_unit(tmp_path: Path) -> None:
    model = _trace().model(tmp_path)
    recorded = recorded_counters(model)
    assert [(c.label, c.unit, c.device, c.max_value) for c in recorded] == [
        (f"GPU 0 {SM}", "percent", 0, 80.0),
        (f"GPU 0 {DRAM}", "bytes", 0, 5000.0),
        ("100 power watts", "value", None, 300.5),
    ]
    starts, values = counter_series(recorded[0], 0.0, 300.0, 3)
    assert starts.tolist() == [0.0, 100.0, 200.0] and values.tolist() == [10.0, 80.0, 40.0]
    view = track_list.tracks([WorkerTrace(None, model)], {})
    labels = [t["label"] for t in view["tracks"]]
    assert labels[-3:] == [f"GPU 0 {SM}", f"GPU 0 {DRAM}", "100 power watts"]  # after the rest


def test_the_trace_page_routes_draw_them(tmp_path: Path) -> None:
    root = tmp_path / "logs" / "run"
    root.mkdir(parents=True)
    _trace().write(root / "worker0.1.pt.trace.json")
    client = PluginClient(tmp_path / "logs")
    client.wait_ready("run", "worker0")
    tracks = client.built("tracks", run="run", worker="worker0").get_json()["tracks"]
    (sm,) = [t for t in tracks if t["label"] == f"GPU 0 {SM}"]
    assert sm["counter"] == {"metric": SM, "unit": "percent", "max": 80.0}
    window = client.built(
        "trace", run="run", worker="worker0", t0=0, t1=300, width=3, tracks=sm["id"]
    ).get_json()
    assert window["tracks"][0]["counter"] == {
        "start": [0.0, 100.0, 200.0],
        "value": [10.0, 80.0, 40.0],
    }
