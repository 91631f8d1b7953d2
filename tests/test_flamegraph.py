"""Flame graphs (analysis/flamegraph/view.py) and `kinetoscope flamegraph`: hand-computed small
traces, and real traces whose GPU paths add up to the Kernel view's kernel time and whose
CPU paths add up to the op tree's host time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import GPU_PID, TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.optree import op_tree
from kinetoscope.analysis.flamegraph.view import NO_LAUNCHER, flamegraph
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.api.endpoints import VIEWS, ViewParamError, span_pages, supported_views
from kinetoscope.cli.flamegraph import folded, speedscope
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel

H100 = Path(__file__).resolve().parent / "data" / "h100"
T = 1000.0  # events at ts 0 are untrusted (trace health): the small traces start later


def _lines(view: Any) -> dict[str, float]:
    out = {}
    for line in folded(view):
        path, value = line.rsplit(" ", 1)
        out[path] = float(value)
    return out


def _two_threads(t: TraceBuilder) -> None:
    t.python("train.py(10): <module>", T, 1000)
    t.step(1, T + 5, 895)
    t.python("train.py(5): step", T + 10, 490)
    t.op("aten::linear", T + 20, 100)
    addmm = t.op("aten::addmm", T + 30, 60)
    t.launch(T + 40, 5, addmm, gpu_ts=T + 50, gpu_dur=50, name="gemm")
    relu = t.op("aten::relu", T + 600, 50)
    t.launch(T + 610, 4, relu, gpu_ts=T + 620, gpu_dur=20, name="relu_k")
    t.python("bwd.py(3): f", T, 40, tid=200)
    t.op("aten::mul", T + 1, 30, tid=200)
    # A kernel whose correlation names no runtime call: no launcher known.
    t.events.append(
        {
            "ph": "X",
            "cat": "kernel",
            "name": "orphan",
            "pid": GPU_PID,
            "tid": 7,
            "ts": T + 700,
            "dur": 7,
            "args": {"correlation": 99999, "device": 0, "stream": 7},
        }
    )


def test_cpu_flame_by_hand(tmp_path: Path) -> None:
    t = TraceBuilder()
    _two_threads(t)
    view = flamegraph(t.model(tmp_path), "cpu")
    top = "thread 100;<module> (train.py:10);ProfilerStep#*"
    # Self times: step 895 - linear 100 - relu 50; linear 100 - addmm 60; addmm 60 - its
    # launch 5; relu 50 - its launch 4. Each thread adds up to its op tree roots' time.
    assert _lines(view) == {
        top: 745,
        f"{top};aten::relu": 46,
        f"{top};aten::relu;cudaLaunchKernel": 4,
        f"{top};step (train.py:5);aten::linear": 40,
        f"{top};step (train.py:5);aten::linear;aten::addmm": 55,
        f"{top};step (train.py:5);aten::linear;aten::addmm;cudaLaunchKernel": 5,
        "thread 200;f (bwd.py:3);aten::mul": 30,
    }
    assert view["total_us"] == 895 + 30 and view["stacks"] == "python_function"
    assert view["no_launcher_us"] is None
    frames = {f["name"]: f for f in view["frames"]}
    assert frames["step"] == {"name": "step", "kind": "python", "file": "train.py", "line": 5}
    assert frames["aten::addmm"]["kind"] == "op" and frames["aten::addmm"]["file"] is None
    assert frames["thread 100"]["kind"] == "thread"
    # Pre-order: each node's parent comes before it; a node's total is its subtree's.
    parent, total, own = view["node_parent"], view["node_total_us"], view["node_self_us"]
    assert all(p < i for i, p in enumerate(parent))
    for i in range(len(parent)):
        kids = sum(total[c] for c, p in enumerate(parent) if p == i)
        assert total[i] == pytest.approx(own[i] + kids)


def test_gpu_flame_by_hand(tmp_path: Path) -> None:
    t = TraceBuilder()
    _two_threads(t)
    model = t.model(tmp_path)
    view = flamegraph(model, "gpu")
    top = "<module> (train.py:10);ProfilerStep#*"
    assert _lines(view) == {
        f"{top};aten::relu;cudaLaunchKernel;relu_k": 20,
        f"{top};step (train.py:5);aten::linear;aten::addmm;cudaLaunchKernel;gemm": 50,
        f"{NO_LAUNCHER};orphan": 7,
    }
    assert view["total_us"] == 77 == kernels(model)["total_us"]
    assert view["no_launcher_us"] == 7
    assert [f["kind"] for f in view["frames"] if f["name"] == NO_LAUNCHER] == ["root"]


def test_launch_outside_every_op(tmp_path: Path) -> None:
    """A launch call no op contains sits under the Python frames around it."""
    t = TraceBuilder()
    t.python("run.py(4): go", T, 100)
    t.python("<built-in method float of Tensor object at 0x7f93109bdf90>", T + 10, 50)
    t.launch(T + 20, 3, 0, gpu_ts=T + 30, gpu_dur=9, name="k")
    t.op("aten::zero_", T + 200, 5)  # an op elsewhere: the trace has an op tree
    view = flamegraph(t.model(tmp_path), "gpu")
    path = "go (run.py:4);<built-in method float of Tensor object>;cudaLaunchKernel;k"
    assert _lines(view) == {path: 9}


def test_call_stack_arg(tmp_path: Path) -> None:
    """2021-22 traces: an op's `Call stack` arg (innermost first) goes above the outermost
    op that has one; its children (the same Python line) add no frames."""
    t = TraceBuilder()
    stack = "model.py(7): forward;train.py(2): <module>"
    t.op("aten::conv2d", T, 50, **{"Call stack": stack})
    t.op("aten::convolution", T + 5, 40, **{"Call stack": stack})
    view = flamegraph(t.model(tmp_path), "cpu")
    top = "thread 100;<module> (train.py:2);forward (model.py:7);aten::conv2d"
    assert _lines(view) == {top: 10, f"{top};aten::convolution": 40}
    assert view["stacks"] == "call_stack_arg"


def test_no_ops_and_bad_metric(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": GPU_PID, "tid": 7,
                     "ts": T, "dur": 4, "args": {"device": 0, "stream": 7}})  # fmt: skip
    t.op("aten::empty", T, 0)  # zero time: left out
    model = t.model(tmp_path)
    assert flamegraph(model, "cpu")["node_parent"] == []
    assert _lines(flamegraph(model, "gpu")) == {f"{NO_LAUNCHER};k": 4}
    with pytest.raises(ViewParamError):
        VIEWS["flamegraph"].decode({"metric": "wall"})
    with pytest.raises(ViewParamError):
        flamegraph(model, "wall")


def _check_real(model: TraceModel, label: str) -> None:
    """GPU paths add up to the Kernel view's kernel time (±0.5 %, here exact up to
    rounding) with Python source frames in them; CPU paths to the op tree's host time."""
    gpu = flamegraph(model, "gpu")
    kernel_us = kernels(model)["total_us"]
    summed = sum(float(line.rsplit(" ", 1)[1]) for line in folded(gpu))
    assert summed == pytest.approx(kernel_us, rel=0.005), label
    assert gpu["total_us"] == pytest.approx(kernel_us, rel=1e-6, abs=0.01), label
    assert any(f["kind"] == "python" and f["file"] and f["line"] for f in gpu["frames"]), label
    cpu = flamegraph(model, "cpu")
    tree = op_tree(model)
    roots = (tree.parent < 0) & ~tree.folded
    cpu_sum = sum(float(line.rsplit(" ", 1)[1]) for line in folded(cpu))
    assert cpu_sum == pytest.approx(float(tree.host_total[roots].sum()), rel=1e-6), label
    # Every thread's frames: its roots' host time.
    thread_totals = {
        cpu["frames"][cpu["node_frame"][i]]["name"]: cpu["node_total_us"][i]
        for i, p in enumerate(cpu["node_parent"])
        if p < 0
    }
    assert len(thread_totals) == np.unique(tree.thread[roots]).size, label


@pytest.mark.parametrize("run", ["attention", "gemm_bf16", "compiled", "cudagraph_replay"])
def test_h100_traces(run: str) -> None:
    (path,) = (H100 / run).glob("*.pt.trace.json*")
    model = build_model(str(path))
    _check_real(model, run)
    # A page of its own, not part of the default `kinetoscope report` (an export).
    assert "flamegraph" in span_pages(model) and "flamegraph" not in supported_views(model)


@pytest.mark.corpus
@pytest.mark.parametrize(
    "rel",
    [
        "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
        "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    ],
)
def test_corpus_traces(rel: str) -> None:
    _check_real(corpus_model(rel), rel)


def test_cli_folded_and_speedscope(capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = (H100 / "attention").glob("*.pt.trace.json*")
    kernel_us = kernels(build_model(str(path)))["total_us"]
    args = ["flamegraph", str(H100), "--run", "attention", "--metric", "gpu", "--no-cache"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(float(x.rsplit(" ", 1)[1]) for x in lines) == pytest.approx(kernel_us, rel=0.005)
    assert any("(record_gpu.py:" in x for x in lines)
    assert main([*args, "--format", "speedscope"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    (profile,) = doc["profiles"]
    assert profile["type"] == "sampled" and profile["unit"] == "microseconds"
    assert len(profile["samples"]) == len(profile["weights"]) == len(lines)
    n_frames = len(doc["shared"]["frames"])
    assert all(0 <= f < n_frames for s in profile["samples"] for f in s)
    assert sum(profile["weights"]) == pytest.approx(profile["endValue"])
    assert profile["endValue"] == pytest.approx(kernel_us, rel=0.005)
    assert any("file" in f and "line" in f for f in doc["shared"]["frames"])
    # Several runs and no --run: said, not guessed.
    assert main(["flamegraph", str(H100), "--no-cache"]) != 0
    assert "--run" in capsys.readouterr().err


def test_speedscope_of_empty_view() -> None:
    empty = {"frames": [], "node_parent": [], "node_frame": [], "node_self_us": []}
    doc = speedscope(empty, "x")
    assert doc["profiles"][0]["samples"] == [] and doc["profiles"][0]["endValue"] == 0


def test_notebook_frame_same_numbers() -> None:
    import kinetoscope

    pytest.importorskip("pandas")
    with kinetoscope.open(str(H100), run="attention", cache=False) as run:
        trace = run.trace()
        frame = trace.flamegraph(metric="gpu")
        view = flamegraph(trace.model, "gpu")
    assert frame.attrs["total_us"] == view["total_us"]
    assert frame["self_us"].sum() == pytest.approx(view["total_us"], rel=1e-6)
    roots = frame[frame["parent"] < 0]
    assert roots["total_us"].sum() == pytest.approx(view["total_us"], rel=1e-6)
    assert (frame["depth"] == 0).sum() == len(roots)
    assert frame["line"].notna().any() and frame["stack"].str.contains(";").any()


def test_folded_escapes_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CR, TAB, NUL, LF (any control character) in a frame name are written `\\xHH`, `;`
    as `,`: each call path stays one line of `frame;frame value` (issue 44)."""
    t = TraceBuilder()
    t.step(1, T, 500)
    outer = "aten::a\rb\tc"
    t.op(outer, T + 10, 100)
    t.op("x\x00y;z\nw\x7f", T + 20, 40)
    t.write(tmp_path / "w.1.pt.trace.json")
    assert main(["flamegraph", str(tmp_path), "--no-cache", "--format", "folded"]) == 0
    out = capsys.readouterr().out
    lines = out.split("\n")[:-1]
    assert out.endswith("\n") and all(line.count(" ") >= 1 for line in lines)
    assert not any(ch in out.replace("\n", "") for ch in "\r\t\x00\x7f")
    paths = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in lines}
    outer_label = "thread 100;ProfilerStep#*;aten::a\\x0db\\x09c"
    assert paths[outer_label] == 60.0
    assert paths[outer_label + ";x\\x00y,z\\x0aw\\x7f"] == 40.0  # the inner op, under it


def test_replayed_kernels_sit_under_what_they_were_captured_as() -> None:
    """A graph whose capture is in the same trace: each replayed kernel under its graph
    launch call and the op that captured it; the totals still the Kernel view's."""
    (path,) = (H100 / "cudagraph_self").glob("*.pt.trace.json*")
    model = build_model(str(path))
    gpu = flamegraph(model, "gpu")
    names = [gpu["frames"][f]["name"] for f in gpu["node_frame"]]
    kinds = [gpu["frames"][f]["kind"] for f in gpu["node_frame"]]
    captured = [i for i, k in enumerate(kinds) if k == "captured"]
    assert {names[i] for i in captured} >= {"aten::addmm", "aten::native_layer_norm"}
    for i in captured:
        assert names[gpu["node_parent"][i]] == "cudaGraphLaunch"
        children = [j for j, p in enumerate(gpu["node_parent"]) if p == i]
        assert children and all(kinds[j] == "kernel" for j in children)
    assert gpu["total_us"] == pytest.approx(kernels(model)["total_us"], rel=1e-6)
