"""Where a graph-replayed kernel was captured (the Kernels view's `captured_source`): the
Python frames around the op that launched it during its profiled capture. A small built
pair with known frames, a capture without frames, and the corpus vLLM pair checked against
the capture trace's raw JSON (the python_function frames enclosing each captured launch)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.analysis.flamegraph.view import flamegraph
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.analysis.serving.view import serving
from kinetoscope.ingest.build import build_model
from test_graph_replay import VLLM, capture, hip, replay, with_captures


def _pair(tmp_path: Path, frames: bool) -> Any:
    cap = TraceBuilder()
    if frames:  # the model line that ran the capture, and a library frame inside it
        cap.python("serve.py(40): capture_model", 0, 40, args={"Python id": 1})
        cap.python("model.py(12): forward", 1, 36, args={"Python id": 2, "Python parent id": 1})
        lib = "torch/nn/modules/module.py(1750): _call_impl"
        cap.python(lib, 1.5, 35, args={"Python id": 3, "Python parent id": 2})
    capture(cap, 0, [("aten::mm", hip("gemm")), ("aten::relu", hip("relu"))])
    run = TraceBuilder()
    run.op("execute_32", 0, 100, cat="user_annotation")
    replay(run, 10, [("gemm", {}), ("relu", {})])
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    return kernels(model, "op")


def test_replayed_kernels_name_the_code_that_captured_them(tmp_path: Path) -> None:
    view = _pair(tmp_path, frames=True)
    expected = [
        {"filename": "model.py", "line": 12, "name": "forward", "generated": False},
        {"filename": "serve.py", "line": 40, "name": "capture_model", "generated": False},
    ]
    assert {r["name"]: r["captured_source"] for r in view["rows"]} == {
        "gemm": expected,
        "relu": expected,
    }


def test_a_capture_without_frames_gives_no_source(tmp_path: Path) -> None:
    view = _pair(tmp_path, frames=False)
    assert all(r["replayed"] for r in view["rows"])
    assert not any("captured_source" in r for r in view["rows"])


def _raw_capture_chains(capture_file: Path) -> dict[str, list[list[str]]]:
    """Written apart from the code under test, on the raw JSON: per captured kernel name,
    for each of its launch calls between hipStreamBeginCapture/EndCapture, the chain of
    python_function frames (of the launching thread) that enclose the call, innermost
    first, each as `file(line)`."""
    events = json.loads(gzip.decompress(capture_file.read_bytes()))["traceEvents"]
    frames = [e for e in events if e.get("cat") == "python_function" and "dur" in e]
    inside = False
    found: dict[str, list[list[str]]] = {}
    for e in sorted((e for e in events if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"]):
        if e["name"] == "hipStreamBeginCapture":
            inside = True
        elif e["name"] == "hipStreamEndCapture":
            inside = False
        elif inside and "kernel" in e.get("args", {}):
            around = [
                f
                for f in frames
                if f["tid"] == e["tid"]
                and f["ts"] <= e["ts"]
                and e["ts"] + e.get("dur", 0) <= f["ts"] + f["dur"]
            ]
            around.sort(key=lambda f: -f["ts"])
            chain = [f["name"].split(": ")[0] for f in around]
            found.setdefault(e["args"]["kernel"], []).append(chain)
    return found


def _within(frames: list[str], chain: list[str]) -> bool:
    """Whether `frames` appear in `chain` in its order (a subsequence: library frames
    between them left out)."""
    it = iter(chain)
    return all(any(c.endswith(f) or f.endswith(c) for c in it) for f in frames)


def test_vllm_pair_replayed_kernels_carry_the_capture_frames() -> None:
    execution = corpus_path(f"{VLLM}/graph_execution.json.gz")
    capture_file = next(corpus_path(f"{VLLM}/capture_traces").glob("*.json.gz"))
    model = with_captures(build_model(str(execution)), build_model(str(capture_file)))
    view = kernels(model, "op")
    raw = _raw_capture_chains(capture_file)
    carried = [r for r in view["rows"] if "captured_source" in r]
    replayed = [r for r in view["rows"] if r["replayed"]]
    assert carried and len(carried) >= len(replayed) * 2 // 3
    for row in carried:
        frames = [f"{f['filename'].split('/')[-1]}({f['line']})" for f in row["captured_source"]]
        assert any(_within(frames, chain) for chain in raw[row["name"]]), (row["name"], frames)
    moe = [r for r in carried if r["name"].startswith("_matmul_ogs")]
    assert moe and all(r["captured_source"][0]["generated"] for r in moe)  # Inductor's wrapper


def test_serving_top_kernels_say_where_they_were_captured(tmp_path: Path) -> None:
    """The serving view's top kernels carry the first of the Kernels view's capture frames
    (the same longest replayed call: one iteration here)."""
    execution = corpus_path(f"{VLLM}/graph_execution.json.gz")
    capture_file = next(corpus_path(f"{VLLM}/capture_traces").glob("*.json.gz"))
    model = with_captures(build_model(str(execution)), build_model(str(capture_file)))
    (iteration,) = serving(model)["iterations"]
    by_name = {r["name"]: r for r in kernels(model, "name")["rows"]}
    tops = iteration["top_kernels"]
    assert any(k["captured_at"] is not None for k in tops)
    for top in tops:
        frames = by_name[top["name"]].get("captured_source") or [None]
        assert top["captured_at"] == frames[0], top["name"]
    # Without the capture: replayed, but where is not known.
    alone = build_model(str(execution))
    (iteration,) = serving(alone)["iterations"]
    assert all(k["captured_at"] is None for k in iteration["top_kernels"])


def test_flame_graph_captured_frames_link_to_where_they_were_captured() -> None:
    """The GPU flame graph's `captured` frames carry the capture's first model-code frame
    as their file and line (the editor link), as the Kernels view names it."""
    execution = corpus_path(f"{VLLM}/graph_execution.json.gz")
    capture_file = next(corpus_path(f"{VLLM}/capture_traces").glob("*.json.gz"))
    model = with_captures(build_model(str(execution)), build_model(str(capture_file)))
    gpu = flamegraph(model, "gpu")
    captured = [f for f in gpu["frames"] if f["kind"] == "captured"]
    assert captured and all(f["file"] is not None for f in captured)
    raw = {
        frame
        for chains in _raw_capture_chains(capture_file).values()
        for c in chains
        for frame in c
    }
    for f in captured:  # each a frame around some captured launch in the raw capture JSON
        where = f"{f['file'].split('/')[-1]}({f['line']})"
        assert any(w.endswith(where) for w in raw), where


def test_operator_rows_say_where_their_replayed_kernels_were_captured(tmp_path: Path) -> None:
    """A capturing op's row carries where it captured its longest replayed kernel (the
    built pair: the model line around both ops); rows without replays have no key."""
    cap = TraceBuilder()
    cap.python("serve.py(40): capture_model", 0, 40, args={"Python id": 1})
    capture(cap, 0, [("aten::mm", hip("gemm")), ("aten::relu", hip("relu"))])
    run = TraceBuilder()
    run.op("execute_32", 0, 100, cat="user_annotation")
    replay(run, 10, [("gemm", {}), ("relu", {})])
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    rows = {r["name"]: r for r in operators(model)["rows"]}
    where = {"filename": "serve.py", "line": 40, "name": "capture_model", "generated": False}
    assert rows["aten::mm"]["captured_at"] == where
    assert rows["aten::relu"]["captured_at"] == where
    assert "captured_at" not in rows["execute_32"]
