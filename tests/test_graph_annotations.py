"""CUDA-graph kernel annotations (torch 2.13+, `torch.cuda._graph_annotations`) read both
ways torch leaves them: pickled beside the traces (`kernel_annotations_rank<R>_*.pkl`, the
folder above `traces/step_N/`, as torch's merge tool looks for it) and merged into the
kernels' args by torch's own tool (`torch.cuda._annotate_cuda_graph_trace.annotate_trace`,
run here on the same trace): the same labels either way, through the CLI. A pickle that
names code is refused, never run; a trace without replays reads no args."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core.graph_annotations import label_of
from kinetoscope.analysis.kernels.text import render_kernels
from kinetoscope.cli.main import main

GRAPH = 5
ATTENTION, MLP = (GRAPH << 32) | 1, (GRAPH << 32) | 2  # toolsId = (exec graph id << 32) | node
# What `mark_kernels` scopes leave per node: the outer scope first (a text becomes "str").
ANNOTATIONS: dict[int, list[Any]] = {
    ATTENTION: [{"str": "decoder.layers.0"}, {"str": "attention"}],
    MLP: [
        {"module": "decoder.layers.0.mlp", "op": "aten::mm", "autograd_phase": "forward",
         "stream": 7},
    ],
}  # fmt: skip


def _replayed_trace() -> dict[str, Any]:
    """A step replaying one graph of two kernels (their `graph node id` their toolsId)."""
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("execute_model", 5, 20, cat="user_annotation")  # the op around the graph launch
    corr = t.runtime("cudaGraphLaunch", 10, 5.0)
    for i, (name, node) in enumerate((("flash_fwd", ATTENTION), ("gemm", MLP))):
        t.events.append(
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 20 + 10 * i,
             "dur": 6.0 + i, "args": {"correlation": corr, "device": 0, "stream": 7,
                                       "graph id": GRAPH, "graph node id": node}}
        )  # fmt: skip
    return {"traceEvents": t.events, **t.header}


def _logdir(root: Path, trace: dict[str, Any], pickled: bytes | None) -> Path:
    """`traces/step_000000000014/000000.<id>.pt.trace.json`, the pickle in `traces/`."""
    step = root / "traces" / "step_000000000014"
    step.mkdir(parents=True)
    (step / "000000.1780000000.pt.trace.json").write_text(json.dumps(trace), encoding="utf-8")
    if pickled is not None:
        (root / "traces" / "kernel_annotations_rank0_1780000000.pkl").write_bytes(pickled)
    return root / "traces"


def _kernels(logdir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    argv = ["report", str(logdir), "--view", "kernels", "--format", "json", "--no-cache"]
    assert main(argv) == 0
    view: dict[str, Any] = json.loads(capsys.readouterr().out)["kernels"]
    return view


def test_pickled_beside_and_merged_by_torch_give_the_same_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beside = _kernels(_logdir(tmp_path / "a", _replayed_trace(), pickle.dumps(ANNOTATIONS)), capsys)
    merge = pytest.importorskip("torch.cuda._annotate_cuda_graph_trace")
    trace = _replayed_trace()
    assert merge.annotate_trace(trace, ANNOTATIONS) == 2  # torch's own merge tool
    merged = _kernels(_logdir(tmp_path / "b", trace, None), capsys)
    labels = {r["name"]: r["graph_annotations"] for r in beside["rows"]}
    assert labels == {
        "flash_fwd": ["attention"],  # the inner scope wins, as torch's tool merges it
        "gemm": ["decoder.layers.0.mlp · aten::mm · forward"],
    }
    assert {r["name"]: r["graph_annotations"] for r in merged["rows"]} == labels
    assert beside["graph_annotations"] == {
        "source": "kernel_annotations_rank0_1780000000.pkl",
        "unread": None,
    }
    assert merged["graph_annotations"] == {"source": "trace args", "unread": None}
    assert render_kernels(beside).count("decoder.layers.0.mlp · aten::mm · forward") == 1


def test_a_pickle_naming_code_is_refused_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Boom:
        def __reduce__(self) -> Any:
            return (print, ("ran",))

    view = _kernels(
        _logdir(tmp_path, _replayed_trace(), pickle.dumps({ATTENTION: [Boom()]})), capsys
    )
    assert all(r["graph_annotations"] is None for r in view["rows"])
    note = view["graph_annotations"]
    assert note["source"] is None and "refused" in note["unread"]


def test_no_replays_no_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = TraceBuilder()
    op = t.op("aten::mm", 0, 50)
    t.launch(5, 2, op, gpu_ts=10, gpu_dur=20, name="gemm", **{"graph node id": 0})
    path = t.write(tmp_path / "worker0.1.pt.trace.json")
    view = _kernels(path, capsys)
    assert view["graph_annotations"] is None and view["rows"][0]["graph_annotations"] is None


def test_label_of_scopes() -> None:
    """Inner scopes win on a key, as torch's merge tool writes them; named keys first."""
    assert label_of([{"str": "outer"}, {"str": "inner"}]) == "inner"
    assert label_of([{"op": "aten::mm", "layer": 3, "stack": "x.py:1"}]) == "aten::mm · layer=3"
    assert label_of(["plain text"]) == "plain text"
    assert label_of([]) == ""


def test_an_annotated_op_names_its_kernels_in_operators_and_kernels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No capture profiled: the kernel whose annotation names an op (`op: aten::mm`) counts
    in that op's device time and is launched by it in Kernels by op ("named from
    annotations"); the other stays with the op around the graph launch."""
    logdir = _logdir(tmp_path, _replayed_trace(), pickle.dumps(ANNOTATIONS))
    argv = ["report", str(logdir), "--format", "json", "--no-cache"]
    assert main([*argv, "--view", "operators"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main([*argv, "--view", "kernels", "--param", "group_by=op"]) == 0
    doc.update(json.loads(capsys.readouterr().out))
    ops = {r["name"]: r for r in doc["operators"]["rows"]}
    assert ops["aten::mm"]["device_self_us"] == 7.0 and ops["aten::mm"]["calls"] == 0
    assert ops["execute_model"]["device_self_us"] == 6.0  # flash_fwd's only
    by_kernel = {r["name"]: r["op_name"] for r in doc["kernels"]["rows"]}
    assert by_kernel == {"gemm": "aten::mm", "flash_fwd": "execute_model"}
    replay = doc["kernels"]["graph_replay"]
    assert (replay["kernels"], replay["matched"], replay["annotated"]) == (2, 0, 1)
    assert replay["note"].endswith("1 named from their annotations")


def test_the_gpu_flame_graph_puts_each_kernel_under_its_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kinetoscope flamegraph --metric gpu`: each replayed kernel under the graph launch
    call and its annotations' label (module · op · phase)."""
    logdir = _logdir(tmp_path, _replayed_trace(), pickle.dumps(ANNOTATIONS))
    assert main(["flamegraph", str(logdir), "--metric", "gpu", "--no-cache"]) == 0
    lines = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
             for line in capsys.readouterr().out.splitlines()}  # fmt: skip
    launch = "ProfilerStep#*;execute_model;cudaGraphLaunch"
    assert lines == {
        f"{launch};attention;flash_fwd": 6.0,
        f"{launch};decoder.layers.0.mlp · aten::mm · forward;gemm": 7.0,
    }


def test_the_serving_view_says_what_each_top_kernel_was_captured_as(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vLLM iteration replaying the annotated graph: each top kernel with its label."""
    trace = _replayed_trace()
    for event in trace["traceEvents"]:
        if event["name"] == "execute_model":  # vLLM's annotated iteration
            event["name"] = "execute_context_0(0)_generation_2(2)"
    logdir = _logdir(tmp_path, trace, pickle.dumps(ANNOTATIONS))
    argv = ["report", str(logdir), "--view", "serving", "--format", "json", "--no-cache"]
    assert main(argv) == 0
    (iteration,) = json.loads(capsys.readouterr().out)["serving"]["iterations"]
    # Named by annotations: no profiled capture says where (`captured_at`).
    assert iteration["top_kernels"] == [
        {"name": "gemm", "calls": 1, "total_us": 7.0,
         "captured_as": "decoder.layers.0.mlp · aten::mm · forward", "captured_at": None},
        {"name": "flash_fwd", "calls": 1, "total_us": 6.0, "captured_as": "attention",
         "captured_at": None},
    ]  # fmt: skip
