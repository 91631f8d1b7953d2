"""The notebook API (`kinetoscope.open`, docs/python_api.md): runs found as the plugin finds
them, frames with hand-computed numbers on a small trace, every frame equal to its route's
JSON (here on small traces, on the corpus in test_python_api_corpus.py), the events frame
(categoricals, exact nanoseconds, no copies), the disk cache shared with the plugin, and
pandas never imported by `import kinetoscope` or by `open`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kinetoscope as ks
import numpy as np
import pandas as pd
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.model.errors import ViewParamError
from kinetoscope.store import trace_store
from python_api_compare import (
    assert_attrs,
    assert_rows,
    assert_span_frames_match_routes,
    route,
)

BASE_NS = 1_700_000_000_123_456_789  # a 2024+ trace's baseTimeNanoseconds


def worker_trace(rank: int = 0) -> TraceBuilder:
    """Two 100 µs steps; in each, aten::mm (50 µs) launches one 40 µs kernel, and one
    allocation of 1 KiB on GPU 0 (freed in step 2)."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"rank": rank, "world_size": 2, "backend": "nccl"}
    for i in range(2):
        t.step(i + 1, i * 100, 100)
        op = t.op("aten::mm", i * 100 + 10, 50, **{"Input Dims": [[4, 4], [4, 4]]})
        t.launch(i * 100 + 20, 5, op, gpu_ts=i * 100 + 30, gpu_dur=40, name="gemm_k")
    t.memory(12, 1024, 4096, total_allocated=1024, total_reserved=2048)
    t.memory(112, -1024, 4096, total_allocated=0, total_reserved=2048)
    return t


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    job = tmp_path / "logs" / "job"
    job.mkdir(parents=True)
    for rank in range(2):
        worker_trace(rank).write(job / f"worker{rank}.100.pt.trace.json")
    worker_trace().write(tmp_path / "logs" / "other.pt.trace.json")  # a second run: "."
    return tmp_path / "logs"


@pytest.fixture
def run(logdir: Path) -> Any:
    with ks.open(logdir, run="job") as opened:
        yield opened


# --- opening ------------------------------------------------------------------------------


def test_open_a_logdir_run_a_run_folder_or_one_file(logdir: Path) -> None:
    with ks.open(logdir, run="job") as by_name, ks.open(logdir / "job") as folder:
        for run in (by_name, folder):
            assert run.workers == ("worker0", "worker1")
            assert run.spans == {"worker0": ("1",), "worker1": ("1",)}
    with ks.open(logdir / "job" / "worker1.100.pt.trace.json") as one:
        assert one.workers == ("worker1",)
        assert one.trace().path == str(logdir / "job" / "worker1.100.pt.trace.json")
    with ks.open(logdir) as top:  # the logdir holds a trace itself: it is run "."
        assert top.name == "." and top.workers == ("other",)


def test_open_says_what_it_could_not_find(logdir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no run named 'nope'.*known: ., job"):
        ks.open(logdir, run="nope")
    (tmp_path / "two" / "a").mkdir(parents=True)
    (tmp_path / "two" / "b").mkdir()
    for name in ("a", "b"):
        worker_trace().write(tmp_path / "two" / name / "w.pt.trace.json")
    with pytest.raises(ValueError, match="several runs; pass run= one of: a, b"):
        ks.open(tmp_path / "two")
    with pytest.raises(FileNotFoundError, match="no trace files found"):
        ks.open(tmp_path / "nothing_here")
    with ks.open(logdir, run="job") as run, pytest.raises(ValueError, match="no span '9'"):
        run.trace("worker0", span=9)


def test_view_serves_the_trace_view_s_routes_as_the_docs_say(run: Any, logdir: Path) -> None:
    """docs/python_api.md: `trace.view(route)` is "any span route's JSON": the views and the
    trace view's routes, each the HTTP route's own answer."""
    trace = run.trace("worker0")
    client = PluginClient(logdir)
    try:
        client.wait_ready("job", "worker0")
        names = {"run": "job", "worker": "worker0", "span": "1"}
        for route, params in (
            ("tracks", {}),
            ("search", {"q": "mm"}),
            ("event", {"row": 1}),
            ("flows", {}),
            ("range_summary", {"t0": 0, "t1": 200}),
            ("source_paths", {}),
            ("modules", {}),
        ):
            mine, served = trace.view(route, **params), client.json(route, **names, **params)
            for body in (mine, served):  # how long the index took to build: a timing
                for worker in body.get("workers", []) if route == "tracks" else []:
                    worker.pop("index_seconds")
            assert mine == served, route
    finally:
        client.close()
    assert trace.view("search", q="mm")["total"] == 4  # aten::mm and gemm_k, twice each
    with pytest.raises(ValueError, match="no span route named 'runs'"):
        trace.view("runs")


# --- frames with known numbers --------------------------------------------------------------


def test_overview_and_breakdown_of_a_small_trace(run: Any) -> None:
    steps = run.trace().overview()
    assert steps["name"].tolist() == ["ProfilerStep#1", "ProfilerStep#2"]
    assert steps["duration_us"].tolist() == [100.0, 100.0]
    # Per step: kernel 30-70; launch 20-25; the op 10-60 less those: 10-20 and 25-30.
    assert steps["breakdown_us.kernel"].tolist() == [40.0, 40.0]
    assert steps["breakdown_us.runtime"].tolist() == [5.0, 5.0]
    assert steps["breakdown_us.cpu_exec"].tolist() == [15.0, 15.0]
    assert steps["breakdown_us.other"].tolist() == [40.0, 40.0]
    assert steps.attrs["step_count"] == 2 and steps.attrs["average_step_us"] == 100.0
    parts = run.trace().breakdown()
    assert parts.loc["kernel", "total_us"] == 80.0 and parts.loc["kernel", "average_us"] == 40.0
    assert parts.loc["other", "total_us"] == 80.0
    assert parts["total_us"].sum() == 200.0  # the parts add up to the steps


def test_operators_kernels_memory_of_a_small_trace(run: Any) -> None:
    trace = run.trace("worker1")
    ops = trace.operators().set_index("name")
    assert ops.loc["aten::mm", "calls"] == 2
    assert ops.loc["aten::mm", "host_total_us"] == 100.0
    assert ops.loc["aten::mm", "device_total_us"] == 80.0
    shapes = trace.operators(group_by="shape")
    assert shapes["input_shape"].tolist() == [[[4, 4], [4, 4]]]
    kernels = trace.kernels()
    assert kernels[["name", "calls", "total_us", "mean_us"]].values.tolist() == [
        ["gemm_k", 2, 80.0, 40.0]
    ]
    assert kernels.attrs["kernel_count"] == 2 and kernels.attrs["devices"] == [0]
    by_op = trace.kernels(group_by="op")
    assert by_op["op_name"].tolist() == ["aten::mm"]
    memory = trace.memory().set_index("device")
    assert memory.loc["GPU0", "peak_allocated_bytes"] == 1024.0
    assert memory.loc["GPU0", "peak_op.name"] == "aten::mm"
    allocations = trace.memory_allocations()
    picked = allocations[["device", "state", "size_bytes", "alloc_us", "free_us"]]
    assert picked.values.tolist() == [["GPU0", "paired", 1024.0, 12.0, 112.0]]


def test_distributed_has_a_row_per_rank(run: Any) -> None:
    ranks = run.distributed()
    assert ranks["rank"].tolist() == [0, 1]
    assert ranks["worker"].tolist() == ["worker0", "worker1"]
    assert ranks["step_count"].tolist() == [2, 2]
    assert ranks.attrs["world_size"] == 2 and ranks.attrs["backend"] == "nccl"


def test_a_bad_parameter_is_the_routes_error(run: Any) -> None:
    with pytest.raises(ViewParamError, match="group_by must be one of name, shape, not 'stack'"):
        run.trace().operators(group_by="stack")
    with pytest.raises(ValueError, match="no span route named 'nope'"):
        run.trace().view("nope")


# --- frames equal the routes ------------------------------------------------------------------


def test_every_frame_equals_its_route(logdir: Path, plugin_client: Any) -> None:
    client: PluginClient = plugin_client(logdir)
    with ks.open(logdir, run="job", cache=False) as run:  # computed apart from the plugin
        for worker in run.workers:
            assert_span_frames_match_routes(run.trace(worker), client)
        view = route(client, "distributed", run="job")
        ranks = run.distributed()
    assert_rows(ranks, view["ranks"])
    assert_attrs(ranks, view, "ranks")


# --- the events frame -------------------------------------------------------------------------


def test_events_frame_is_the_model(run: Any) -> None:
    trace = run.trace()
    model = trace.model
    events = trace.events()
    assert len(events) == len(model) and events.index.name == "row"
    for column in ("name", "cat", "pid", "tid", "ph", "kind"):
        assert isinstance(events[column].dtype, pd.CategoricalDtype), column
    assert events["name"].cat.categories.tolist() == model.names
    assert events["name"].tolist() == model.names_of(np.arange(len(model)))
    assert events["kind"].cat.categories.tolist()[:2] == ["other", "cpu_op"]
    for column in ("ts", "dur", *(c for c in ("external_id", "correlation") if c in model.events)):
        # The model's own arrays, not copies.
        assert np.shares_memory(events[column].to_numpy(), model.events[column]), column
    # A sparse column (kernels' launch figures) made a value per row, in the model's order.
    assert events["occupancy"].dtype == np.float32 and events["stream"].dtype == np.int16
    np.testing.assert_array_equal(events["occupancy"], model.full_column("occupancy"))
    np.testing.assert_array_equal(events["stream"], model.full_column("stream"))
    assert list(events.columns).index("occupancy") < list(events.columns).index("work_sig")
    assert "args_end" not in events.columns


def test_timestamps_in_nanoseconds_are_exact(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.header["baseTimeNanoseconds"] = BASE_NS
    t.op("aten::add", 1234.567, 0.001)
    t.op("aten::mul", 86_400_000_000.999, 2.5)  # a day later, still to the nanosecond
    t.write(tmp_path / "w.pt.trace.json")
    with ks.open(tmp_path) as run:
        events = run.trace().events()
    assert events["ts_ns"].dtype == np.int64 and events["dur_ns"].dtype == np.int64
    assert events["ts_ns"].tolist() == [1_234_567, 86_400_000_000_999]
    assert events["dur_ns"].tolist() == [1, 2_500]
    assert events.attrs["time_origin_ns"] == BASE_NS


def test_missing_times_stay_missing() -> None:
    from kinetoscope.notebook.frames import nanoseconds

    ns = nanoseconds(np.array([1.5, np.nan]))
    assert isinstance(ns, pd.arrays.IntegerArray)
    assert ns[0] == 1500 and pd.isna(ns[1])


# --- the cache is the plugin's ----------------------------------------------------------------


def test_a_second_open_reads_the_cache(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ks.open(logdir, run="job") as run:
        first = run.trace().events()
        operators = run.trace().operators()

    def no_parsing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed again although the cache holds this file")

    monkeypatch.setattr(trace_store, "build_model", no_parsing)
    with ks.open(logdir, run="job") as again:
        pd.testing.assert_frame_equal(again.trace().events(), first)
        pd.testing.assert_frame_equal(again.trace().operators(), operators)
    client = PluginClient(logdir)  # and TensorBoard reads the notebook's cache too
    try:
        assert client.wait_ready("job", "worker0")["state"] == "ready"
    finally:
        client.close()


# --- staying light ----------------------------------------------------------------------------


def test_import_and_open_do_not_import_pandas(logdir: Path) -> None:
    code = (
        "import sys, kinetoscope, kinetoscope.serve.plugin\n"
        "assert 'pandas' not in sys.modules, 'imported by the plugin'\n"
        f"run = kinetoscope.open({str(logdir)!r}, run='job')\n"
        "run.trace().model\n"
        "assert 'pandas' not in sys.modules, 'imported by open'\n"
        "run.trace().kernels()\n"
        "assert 'pandas' in sys.modules\n"
        "run.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# --- docs/python_api.md ----------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "python_api.md"


def test_the_walk_through_runs(
    logdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's python blocks, in order, in one namespace, next to the logdir they name."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(logdir.parent)
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "ProfilerStep#1" in printed and "gemm_k" in printed and "aten::mm" in printed


def _documented_columns(method: str) -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    bullet = re.search(rf"^- `{method}\(\)` — (.*?)(?=^- |^## )", text, re.M | re.S)
    assert bullet, method
    return set(re.findall(r"`([\w.<>]+)`", bullet.group(1)))


def test_the_docs_name_every_column(run: Any) -> None:
    trace = run.trace()
    frames = {
        "events": [trace.events()],
        "overview": [trace.overview()],
        "breakdown": [trace.breakdown()],
        "devices": [trace.devices()],
        "operators": [trace.operators(), trace.operators(group_by="shape")],
        "kernels": [trace.kernels(), trace.kernels(group_by="op")],
        "memory": [trace.memory()],
        "memory_operators": [trace.memory_operators()],
        "memory_allocations": [trace.memory_allocations()],
        "distributed": [run.distributed()],
        "idle": [trace.idle()],
        "idle_intervals": [trace.idle_intervals()],
        "launch_delays": [trace.launch_delays()],
        "launch_outliers": [trace.launch_outliers()],
        "queue_length": [trace.queue_length()],
        "iterations": [trace.iterations()],
        "serving_phases": [trace.serving_phases()],
    }
    for method, made in frames.items():
        named = _documented_columns(method)
        for frame in made:
            columns = [*frame.columns, frame.index.name] if frame.index.name else frame.columns
            for column in columns:
                parent = column.split(".")[0]
                assert column in named or f"{parent}.<part>" in named, (method, column)


def test_every_public_name_is_documented() -> None:
    from kinetoscope.notebook import Run, Trace

    text = DOC.read_text(encoding="utf-8")
    for prefix, cls in (("run", Run), ("trace", Trace)):
        for name in vars(cls):
            if not name.startswith("_"):
                assert re.search(rf"`{prefix}\.{name}\b", text), f"{prefix}.{name}"


# --- why the GPU is idle ------------------------------------------------------------------


def test_gpu_idle_frames_by_hand(tmp_path: Path) -> None:
    """The trace of tests/test_gpu_idle.py's hand-worked example (one step 0-1000 µs,
    five kernels on stream 7): the frames hold its numbers, in integer nanoseconds."""
    from test_gpu_idle import one_step_trace

    one_step_trace().write(tmp_path / "w.pt.trace.json")
    with ks.open(tmp_path / "w.pt.trace.json") as run:
        trace = run.trace()
        idle = trace.idle()
        queue = trace.queue_length()
        delays = trace.launch_delays().set_index("name")
        intervals = trace.idle_intervals()
    # The device's lane (stream NA), then its one stream.
    assert idle["stream"].isna().tolist() == [True, False] and idle["stream"][1] == 7
    for _, lane in idle.iterrows():
        assert (lane["host_wait_ns"], lane["kernel_wait_ns"], lane["other_ns"]) == (
            130_000, 5_000, 420_000,
        )  # fmt: skip
        assert (lane["step"], lane["idle_share"]) == (0, 0.555)
    assert idle.attrs["kernel_wait_threshold_ns"] == 30_000
    assert delays.loc["A", "p90_ns"] == 100_000 and delays.loc["B", "p50_ns"] == 15_000
    assert intervals["duration_ns"].max() == 200_000
    assert set(intervals["step_name"]) == {"ProfilerStep#1"} and set(intervals["step"]) == {0}
    assert (queue["time_ns"] // 1000).tolist() == [10, 15, 120, 200, 300, 320, 400, 600, 705, 800]
    assert queue["length"].tolist() == [1, 2, 1, 0, 1, 2, 1, 0, 1, 0]
    assert set(queue["stream"]) == {7} and queue.attrs["origin_us"] == 0.0


def test_what_a_newcomer_reads_of_the_package(tmp_path: Path) -> None:
    """`dir(kinetoscope)` lists no typing helpers, `help(kinetoscope.open)` says how to use
    it (no implementation note), and a one-worker run is "1 worker"."""
    import pydoc

    assert not {"Any", "TYPE_CHECKING", "annotations"} & set(dir(ks))
    text = pydoc.render_doc(ks.open, renderer=pydoc.plaintext)
    assert "run folder" in text and "first use" not in text and "TensorBoard imports" not in text
    TraceBuilder().write(tmp_path / "w.pt.trace.json")
    with ks.open(tmp_path / "w.pt.trace.json") as run:
        assert repr(run).endswith(": 1 worker>")
