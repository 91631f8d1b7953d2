"""CUDA/HIP graph replays attributed to the launches that captured them
(analysis/core/graph_replay.py, graph_capture.py, replay_ops.py): small built traces with
known answers (graph node ids, kernel sequences, no capture, repeated and look-alike
graphs, two devices), the real H100 capture + replay traces, the corpus vLLM pair against
an independent sequence match, and the `kernels group_by=op` contract end to end."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kinetoscope as ks
import pytest
from builders import CPU_TID, TraceBuilder
from conftest import PluginClient
from corpus import corpus_path
from kinetoscope.analysis.core.graph_replay import graph_replay
from kinetoscope.analysis.flamegraph.view import flamegraph
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.analysis.overview.view import overview
from kinetoscope.analysis.serving.view import serving
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import capture_files, scan_logdir
from kinetoscope.model.trace_model import TraceModel

H100 = Path(__file__).parent / "data" / "h100"
VLLM = "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise"


def capture(
    t: TraceBuilder, start: float, ops: list[tuple[str, dict[str, Any]]], tid: int = CPU_TID
) -> float:
    """A graph captured at `start`: per (op name, launch args) an op whose launch call
    runs nothing (captured). Returns the end time."""
    t.runtime("cudaStreamBeginCapture", start, tid=tid)
    ts = start + 2
    for name, args in ops:
        ext = t.op(name, ts, 8, tid=tid)
        t.runtime("cudaLaunchKernel", ts + 2, tid=tid, **{"External id": ext, **args})
        ts += 10
    t.runtime("cudaStreamEndCapture", ts, tid=tid)
    return ts + 2


def replay(
    t: TraceBuilder,
    ts: float,
    kernels_: list[tuple[str, dict[str, Any]]],
    device: int = 0,
    launch: str = "cudaGraphLaunch",
) -> float:
    """One graph launch and its kernels (all with the launch's correlation id)."""
    corr = t.runtime(launch, ts, 5.0)
    gpu_ts = ts + 10
    for name, args in kernels_:
        t.events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": device,
                "tid": 7,
                "ts": gpu_ts,
                "dur": 4.0,
                "args": {"correlation": corr, "device": device, "stream": 7, **args},
            }
        )
        gpu_ts += 5
    return gpu_ts + 5


def with_captures(model: TraceModel, *captures: TraceModel) -> TraceModel:
    model.attach_captures(lambda: list(captures))
    return model


def op_names(view: dict[str, Any]) -> dict[str, list[str | None]]:
    out: dict[str, list[str | None]] = defaultdict(list)
    for row in view["rows"]:
        out[row["name"]].append(row["op_name"])
    return out


def hip(name: str, grid: int = 1) -> dict[str, Any]:
    return {"kernel": name, "grid": [grid, 1, 1], "block": [64, 1, 1]}


def test_sequence_match_in_a_separate_capture_trace(tmp_path: Path) -> None:
    cap = TraceBuilder()
    capture(cap, 0, [("aten::mm", hip("gemm")), ("aten::relu", hip("relu"))])
    run = TraceBuilder()
    run.op("execute_32", 0, 100, cat="user_annotation")
    replay(run, 10, [("gemm", {}), ("relu", {})])
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    view = kernels(model, "op")
    assert op_names(view) == {"gemm": ["aten::mm"], "relu": ["aten::relu"]}
    assert all(row["replayed"] for row in view["rows"])
    assert view["graph_replay"] == {
        "kernels": 2,
        "matched": 2,
        "annotated": 0,
        "matched_pct": 100.0,
        "captures": 1,
        "note": "graph replay: 2 kernels, 2 matched to their capture",
        "unmatched": [],
    }
    ops = {r["name"]: r for r in operators(model)["rows"]}
    # The kernels' time moves from the annotation around the launch to the capturing ops
    # (calls 0: the ops were called in the capture trace, not in this one).
    assert ops["aten::mm"]["device_self_us"] == 4.0 and ops["aten::mm"]["calls"] == 0
    assert ops["aten::relu"]["device_self_us"] == 4.0
    assert ops["execute_32"]["device_self_us"] == 0.0
    assert ops["execute_32"]["device_total_us"] == 8.0


def test_no_capture_keeps_the_launching_op_and_says_so(tmp_path: Path) -> None:
    run = TraceBuilder()
    run.op("execute_32", 0, 100, cat="user_annotation")
    replay(run, 10, [("gemm", {}), ("relu", {})])
    replay(run, 50, [("gemm", {}), ("relu", {})])
    view = kernels(run.model(tmp_path), "op")
    assert op_names(view) == {"gemm": ["execute_32"], "relu": ["execute_32"]}
    assert view["graph_replay"]["note"] == "graph replay: 4 kernels, capture not profiled"
    assert view["graph_replay"]["matched"] == 0


def test_a_trace_without_replays_has_no_replay_summary(tmp_path: Path) -> None:
    run = TraceBuilder()
    ext = run.op("aten::mm", 0, 10)
    run.launch(2, 1, ext, gpu_ts=5, gpu_dur=3, name="gemm")
    view = kernels(run.model(tmp_path), "op")
    assert view["graph_replay"] is None
    assert view["rows"][0]["replayed"] is False and view["rows"][0]["op_name"] == "aten::mm"


def test_graph_node_ids_match_whatever_the_order(tmp_path: Path) -> None:
    """With `graph node id` on both sides the kernels match by id, even when the replay
    runs them in another order than the capture (a multi-stream graph)."""
    cap = TraceBuilder()
    capture(
        cap,
        0,
        [("aten::mm", {"graph node id": 11}), ("aten::relu", {"graph node id": 12})],
    )
    run = TraceBuilder()
    replay(run, 10, [("relu", {"graph node id": 12}), ("gemm", {"graph node id": 11})])
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    assert op_names(kernels(model, "op")) == {"gemm": ["aten::mm"], "relu": ["aten::relu"]}


def test_repeated_replays_and_the_capture_in_the_same_trace(tmp_path: Path) -> None:
    t = TraceBuilder()
    end = capture(t, 0, [("aten::mm", {}), ("aten::add", {})])
    for i in range(3):
        end = replay(t, end + 10 * i, [("gemm", {}), ("add_kernel", {})])
    model = t.model(tmp_path)
    view = kernels(model, "op")
    assert op_names(view) == {"gemm": ["aten::mm"], "add_kernel": ["aten::add"]}
    assert {r["calls"] for r in view["rows"]} == {3}
    assert graph_replay(model).matched.all()


def test_look_alike_graphs(tmp_path: Path) -> None:
    """Two captures with the same kernels: when they name the same ops the replays are
    theirs in turn; when the ops differ (CUDA: no kernel name on the launch call) the
    replay stays with its launch, an op would be a guess."""
    same = TraceBuilder()
    capture(same, 0, [("aten::mm", {}), ("aten::add", {})])
    capture(same, 100, [("aten::mm", {}), ("aten::add", {})])
    end = replay(same, 200, [("gemm", {}), ("add_kernel", {})])
    replay(same, end, [("gemm", {}), ("add_kernel", {})])
    matched = graph_replay(same.model(tmp_path, "same.json"))
    assert matched.matched.all() and sorted(set(matched.capture.tolist())) == [0, 1]

    differ = TraceBuilder()
    capture(differ, 0, [("aten::mm", {}), ("aten::add", {})])
    capture(differ, 100, [("aten::bmm", {}), ("aten::mul", {})])
    differ.op("execute", 150, 200, cat="user_annotation")
    replay(differ, 200, [("gemm", {}), ("add_kernel", {})])
    view = kernels(differ.model(tmp_path, "differ.json"), "op")
    assert op_names(view) == {"gemm": ["execute"], "add_kernel": ["execute"]}
    assert view["graph_replay"]["matched"] == 0 and view["graph_replay"]["captures"] == 2


def test_kernel_names_pick_the_capture_on_two_devices(tmp_path: Path) -> None:
    """HIP names the kernel (and grid) on the launch call: each device's replay finds its
    own graph among captures of the same length, and a batch size by its grid."""
    cap = TraceBuilder()
    capture(cap, 0, [("aten::mm", hip("gemm", 4)), ("aten::add", hip("add", 4))], tid=1)
    capture(cap, 100, [("aten::mm", hip("gemm", 8)), ("aten::add", hip("add", 8))], tid=1)
    capture(cap, 0, [("aten::conv", hip("conv")), ("aten::relu", hip("relu"))], tid=2)
    run = TraceBuilder()
    end = replay(run, 0, [("conv", {}), ("relu", {})], device=1, launch="hipGraphLaunch")
    end = replay(run, end, [("gemm", {"grid": [8, 1, 1]}), ("add", {})], launch="hipGraphLaunch")
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    names = op_names(kernels(model, "op"))
    assert names == {
        "conv": ["aten::conv"],
        "relu": ["aten::relu"],
        "gemm": ["aten::mm"],
        "add": ["aten::add"],
    }
    replayed = graph_replay(model)
    by_kernel = {
        model.names[int(model.events["name"][r])]: i for i, r in enumerate(replayed.kernels)
    }
    assert int(replayed.capture[by_kernel["gemm"]]) == 1  # the batch-8 graph, by its grid
    assert kernels(model, "op", device=1)["graph_replay"]["kernels"] == 2


# --- real traces -----------------------------------------------------------------------


def test_h100_capture_folder_belongs_to_its_run() -> None:
    runs = {run.name: run for run in scan_logdir(str(H100))}
    assert "cudagraph_replay" in runs and "cudagraph_replay/capture_traces" not in runs
    run = runs["cudagraph_replay"]
    assert [len(w.spans) for w in run.workers] == [1]
    files = capture_files(run.workers[0].spans[0].path)
    assert [Path(f).parent.name for f in files] == ["capture_traces"]


def _h100_replay() -> TraceModel:
    path = next((H100 / "cudagraph_replay").glob("*.pt.trace.json.gz"))
    captures = [build_model(p) for p in capture_files(str(path))]
    return with_captures(build_model(str(path)), *captures)


def test_h100_replays_get_the_ops_and_shapes_of_their_capture() -> None:
    """Two graphs (batch 4 and 8) captured while profiled, replayed (graph 0 twice a step):
    CUDA's launch calls name no kernel, so each captured launch's kernel comes from the
    warm-up before its capture; the batch-8 replay's attention kernel (grid 64) then
    belongs to the batch-8 capture and its op's input shape says 8."""
    model = _h100_replay()
    view = kernels(model, "op")
    assert view["graph_replay"]["kernels"] == 72 and view["graph_replay"]["matched"] == 72
    attention = [r for r in view["rows"] if r["name"].startswith("cudnn_generated_fort_native")]
    assert {r["op_name"] for r in attention} == {"aten::_cudnn_attention_forward"}
    gemms = [r for r in view["rows"] if r["name"].startswith("nvjet")]
    assert gemms and {r["op_name"] for r in gemms} == {"aten::addmm"}
    shapes = operators(model, "shape")["rows"]
    sdpa = {
        json.dumps(r["input_shape"][0]): r["calls"]
        for r in shapes
        if r["name"] == "aten::_cudnn_attention_forward"
    }
    assert set(sdpa) == {"[4, 8, 64, 64]", "[8, 8, 64, 64]"}
    by_batch = {
        r["input_shape"][0][0]: r["device_self_us"]
        for r in shapes
        if r["name"] == "aten::_cudnn_attention_forward"
    }
    assert by_batch[4] > by_batch[8]  # graph 0 (batch 4) replays twice as often


def test_h100_self_capture_and_no_capture() -> None:
    self_path = next((H100 / "cudagraph_self").glob("*.gz"))
    view = kernels(build_model(str(self_path)), "op")
    assert view["graph_replay"]["matched"] == view["graph_replay"]["kernels"] == 36
    compiled = next((H100 / "compiled_cudagraphs").glob("*.gz"))
    summary = kernels(build_model(str(compiled)), "op")["graph_replay"]
    assert summary["note"] == "graph replay: 20 kernels, capture not profiled"


def _independent_vllm_match(execution: Path, capture_file: Path) -> dict[int, str]:
    """Written apart from the code under test, on the raw JSON: the capture's launch calls
    between hipStreamBeginCapture/EndCapture, each with the op of its External id, as
    kernel-name sequences; a replay's kernels (by the hipGraphLaunch's correlation, in
    time order) take the ops of the first capture with the same kernel names. Returns
    the kernel's start (ns, as in the file) -> op name."""
    cap = json.loads(gzip.decompress(capture_file.read_bytes()))["traceEvents"]
    ops = {
        e["args"]["External id"]: e["name"]
        for e in cap
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})
    }
    sequences: dict[tuple[str, ...], list[list[str]]] = defaultdict(list)
    inside: list[dict[str, Any]] | None = None
    for e in sorted((e for e in cap if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"]):
        if e["name"] == "hipStreamBeginCapture":
            inside = []
        elif e["name"] == "hipStreamEndCapture" and inside is not None:
            names = tuple(x["args"]["kernel"] for x in inside)
            sequences[names].append([ops.get(x["args"].get("External id"), "?") for x in inside])
            inside = None
        elif inside is not None and "kernel" in e.get("args", {}):
            inside.append(e)
    run = json.loads(gzip.decompress(execution.read_bytes()))["traceEvents"]
    graph_corr = {
        e["args"]["correlation"]
        for e in run
        if e.get("cat") == "cuda_runtime" and e["name"] == "hipGraphLaunch"
    }
    replays: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in run:
        if e.get("cat") == "kernel" and e["args"].get("correlation") in graph_corr:
            replays[e["args"]["correlation"]].append(e)
    out: dict[int, str] = {}
    for group in replays.values():
        group.sort(key=lambda e: e["ts"])
        candidates = sequences.get(tuple(e["name"] for e in group), [])
        if candidates:
            for e, op in zip(group, candidates[0]):
                out[round(e["ts"] * 1000)] = op
    return out


def test_vllm_pair_replayed_time_carries_the_capture_time_op() -> None:
    execution = corpus_path(f"{VLLM}/graph_execution.json.gz")
    capture_file = next(corpus_path(f"{VLLM}/capture_traces").glob("*.json.gz"))
    expected = _independent_vllm_match(execution, capture_file)
    model = with_captures(build_model(str(execution)), build_model(str(capture_file)))
    replayed = graph_replay(model)
    ev = model.events
    total = agree = 0.0
    for i, row in enumerate(replayed.kernels.tolist()):
        dur = float(ev["dur"][row])
        total += dur
        key = round(float(ev["ts"][row]) * 1000)
        got = replayed.op_name(i)
        if got is not None and expected.get(key) == got:
            agree += dur
    assert replayed.kernels.size == 361 and len(expected) == 361
    assert agree / total >= 0.95
    view = kernels(model, "op")
    assert view["graph_replay"]["matched_pct"] >= 95.0
    moe = [r for r in view["rows"] if r["name"].startswith("_matmul_ogs")]
    assert moe and {r["op_name"] for r in moe} == {"vllm::moe_forward"}
    # The serving view and the GPU flame graph name the same replayed kernels so.
    (iteration,) = serving(model)["iterations"]
    top = {k["name"]: k["captured_as"] for k in iteration["top_kernels"]}
    assert {top[name] for name in top if name.startswith("_matmul_ogs")} == {"vllm::moe_forward"}
    gpu = flamegraph(model, "gpu")
    frames = [gpu["frames"][f] for f in gpu["node_frame"]]
    assert any(f["kind"] == "captured" and f["name"] == "vllm::moe_forward" for f in frames)


# --- the contract end to end ------------------------------------------------------------


def _run_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs" / "serve"
    (folder / "capture_traces").mkdir(parents=True)
    cap = TraceBuilder()
    capture(cap, 0, [("aten::mm", hip("gemm")), ("aten::relu", hip("relu"))])
    cap.write(folder / "capture_traces" / "graph_capture_rank_0.1.pt.trace.json")
    run = TraceBuilder()
    run.op("execute_32", 0, 100, cat="user_annotation")
    replay(run, 10, [("gemm", {}), ("relu", {})])
    run.write(folder / "worker0.2.pt.trace.json")
    return folder.parent


def test_kernels_by_op_through_the_notebook_and_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = _run_folder(tmp_path)
    with ks.open(logdir, run="serve") as opened:
        assert opened.workers == ("worker0",)
        frame = opened.trace().kernels(group_by="op")
    assert dict(zip(frame["name"], frame["op_name"])) == {"gemm": "aten::mm", "relu": "aten::relu"}
    assert list(frame["total_us"]) == [4.0, 4.0]
    argv = ["report", str(logdir), "--run", "serve", "--format", "json", "--no-cache"]
    assert main([*argv, "--view", "kernels", "--param", "group_by=op"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["kernels"]["rows"]
    assert {(r["name"], r["op_name"], r["total_us"]) for r in rows} == {
        ("gemm", "aten::mm", 4.0),
        ("relu", "aten::relu", 4.0),
    }
    assert main(argv) == 0  # every view; the default kernels form is group_by=name
    text = capsys.readouterr().out
    assert "capture_traces" not in text  # not a run, worker or span of its own
    assert "op_name" not in json.loads(text)["kernels"]["rows"][0]
    assert main([*argv, "--view", "kernels", "--param", "group_by=module"]) != 0
    assert "group_by must be one of" in capsys.readouterr().err


def test_text_report_says_the_replay_line_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = TraceBuilder()
    run.op("execute_32", 0, 100, cat="user_annotation")
    replay(run, 10, [("gemm", {}), ("relu", {})])
    path = run.write(tmp_path / "worker0.1.pt.trace.json")
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("graph replay: 2 kernels, capture not profiled") == 1


def test_kernels_route_through_the_plugin(
    plugin_client: Callable[[Path], PluginClient], tmp_path: Path
) -> None:
    logdir = _run_folder(tmp_path)
    client = plugin_client(logdir)
    runs = client.json("runs")["runs"]
    assert [r["name"] for r in runs] == ["serve"]
    assert [w["name"] for w in runs[0]["workers"]] == ["worker0"]
    client.wait_ready("serve", "worker0", "1")
    view = client.json("kernels", run="serve", worker="worker0", group_by="op")
    assert {(r["name"], r["op_name"], r["replayed"]) for r in view["rows"]} == {
        ("gemm", "aten::mm", True),
        ("relu", "aten::relu", True),
    }
    assert view["graph_replay"]["matched"] == 2


def test_tensor_core_advice_sees_the_capturing_op(tmp_path: Path) -> None:
    """An fp32 GEMM replayed in a graph: the op around the launch is an annotation, the op
    that captured it is aten::mm, so the Overview's tensor-core advice counts it."""
    t = TraceBuilder()
    t.header["deviceProperties"] = [
        {"id": 0, "name": "GPU", "totalGlobalMem": 2**34, "computeMajor": 8, "computeMinor": 0}
    ]
    end = capture(t, 0, [("aten::mm", {})])
    t.step(1, end, 1000)
    t.op("decode", end + 10, 100, cat="user_annotation")
    replay(t, end + 20, [("volta_sgemm_128x64_nn", {})])
    advice = {r["id"]: r for r in overview(t.model(tmp_path))["recommendations"]}
    assert advice["tensor_cores"]["evidence"]["value"] == 100.0
