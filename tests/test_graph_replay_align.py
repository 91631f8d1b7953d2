"""Graph replays aligned with a contiguous run of their capture's launches
(analysis/core/graph_replay.py): a capture holding a launch more than its replays (the
diffusion-serving shape: a last GEMM that never replays), several replays of one graph,
captures that cannot be aligned and the reason the Kernels view gives for each, on small
built traces with hand-computed answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core.graph_replay import graph_replay
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.cli.main import main
from test_graph_replay import capture, hip, op_names, replay, with_captures

DIMS = {"grid": [4, 1, 1], "block": [64, 1, 1]}


def ran(name: str, grid: int = 4) -> tuple[str, dict[str, Any]]:
    """A replayed kernel with the grid and block it ran with (as HIP and CUDA write them)."""
    return name, {"grid": [grid, 1, 1], "block": [64, 1, 1]}


def _serving_trace() -> TraceBuilder:
    """A capture of three launches (gemm, gelu, then a last gemm on grid 2 that never
    replays), two replays of its first two under a `Torch-Compiled Region`, and one replay
    of kernels no capture holds. Kernels last 4 µs each."""
    t = TraceBuilder()
    end = capture(
        t,
        0,
        [
            ("aten::mm", hip("gemm", 4)),
            ("aten::gelu", hip("gelu", 4)),
            ("aten::addmm", hip("gemm", 2)),
        ],
    )
    t.op("Torch-Compiled Region", end + 5, 200, cat="user_annotation")
    at = end + 10
    for _ in range(2):
        at = replay(t, at, [ran("gemm"), ran("gelu")], launch="hipGraphLaunch")
    replay(t, at, [ran("conv"), ran("sigmoid")], launch="hipGraphLaunch")
    return t


def test_a_capture_one_launch_longer_than_its_replays(tmp_path: Path) -> None:
    model = _serving_trace().model(tmp_path)
    replayed = graph_replay(model)
    assert replayed.replays == 3 and replayed.kernels.size == 6
    assert int(replayed.matched.sum()) == 4
    assert replayed.position[replayed.matched].tolist() == [0, 1, 0, 1]
    view = kernels(model, "op")
    assert op_names(view) == {
        "gemm": ["aten::mm"],
        "gelu": ["aten::gelu"],
        "conv": ["Torch-Compiled Region"],
        "sigmoid": ["Torch-Compiled Region"],
    }
    assert {r["name"]: r["calls"] for r in view["rows"]}["gemm"] == 2
    assert view["graph_replay"] == {
        "kernels": 6,
        "matched": 4,
        "annotated": 0,
        "matched_pct": 66.67,
        "captures": 1,
        "note": "graph replay: 6 kernels, 4 matched to their capture",
        "unmatched": [
            {
                "first_kernel": "conv",
                "kernels": 2,
                "replays": 1,
                "device_us": 8.0,
                "reason": "no captured graph's launches line up with its 2 kernels "
                "by kernel name, grid and block",
            }
        ],
    }
    ops = {r["name"]: r for r in operators(model)["rows"]}
    assert ops["aten::mm"]["device_self_us"] == 8.0
    assert ops["aten::gelu"]["device_self_us"] == 8.0
    assert ops["aten::addmm"]["device_self_us"] == 0.0  # captured, never replayed
    region = ops["Torch-Compiled Region"]
    assert region["device_self_us"] == 8.0 and region["device_total_us"] == 24.0


def test_the_run_may_start_anywhere_in_the_capture(tmp_path: Path) -> None:
    """A launch before the replayed run (a copy-in kernel captured, not replayed): the
    replay aligns at offset 1; a grid that differs picks the other run."""
    cap = TraceBuilder()
    capture(
        cap,
        0,
        [
            ("aten::copy_", hip("copy", 4)),
            ("aten::mm", hip("gemm", 4)),
            ("aten::gelu", hip("gelu", 4)),
            ("aten::mm", hip("gemm", 8)),
            ("aten::silu", hip("gelu", 8)),
        ],
    )
    run = TraceBuilder()
    end = replay(run, 0, [ran("gemm"), ran("gelu")], launch="hipGraphLaunch")
    replay(run, end, [ran("gemm", 8), ran("gelu", 8)], launch="hipGraphLaunch")
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    replayed = graph_replay(model)
    assert replayed.position.tolist() == [1, 2, 3, 4]
    assert [replayed.op_name(i) for i in range(4)] == [
        "aten::mm",
        "aten::gelu",
        "aten::mm",
        "aten::silu",
    ]


def test_a_capture_of_the_same_length_comes_before_a_longer_one(tmp_path: Path) -> None:
    """Both fit every position: the capture with no launch left over is the replay's."""
    cap = TraceBuilder()
    capture(cap, 0, [("aten::bmm", hip("gemm")), ("aten::add", hip("add")), ("x", hip("z"))])
    capture(cap, 100, [("aten::mm", hip("gemm")), ("aten::add", hip("add"))])
    run = TraceBuilder()
    replay(run, 0, [ran("gemm", 1), ran("add", 1)], launch="hipGraphLaunch")
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    assert op_names(kernels(model, "op")) == {"gemm": ["aten::mm"], "add": ["aten::add"]}
    assert graph_replay(model).capture.tolist() == [1, 1]


def test_several_replays_of_one_graph_captured_per_layer(tmp_path: Path) -> None:
    """Two captures of the same kernels (a graph per layer), each a launch longer than
    its replays, naming the same ops: replays take them in turn, every kernel matched."""
    t = TraceBuilder()
    end = 0.0
    for _ in range(2):
        end = capture(
            t,
            end,
            [("aten::mm", hip("gemm")), ("aten::add", hip("add")), ("aten::mm", hip("tail"))],
        )
    for _ in range(4):
        end = replay(t, end + 10, [ran("gemm", 1), ran("add", 1)], launch="hipGraphLaunch")
    replayed = graph_replay(t.model(tmp_path))
    assert replayed.matched.all()
    assert replayed.capture.tolist() == [0, 0, 1, 1, 0, 0, 1, 1]


def test_why_a_capture_cannot_be_aligned(tmp_path: Path) -> None:
    """The reasons, per unmatched graph: none as long, several runs naming different ops,
    and a longer capture that knows no kernel (CUDA launch calls with no warm-up)."""
    cap = TraceBuilder()
    capture(cap, 0, [("aten::mm", hip("gemm")), ("aten::add", hip("add"))])
    capture(cap, 100, [("aten::bmm", hip("gemm")), ("aten::mul", hip("mul")), ("y", hip("y"))])
    capture(cap, 200, [("aten::conv", {}), ("aten::relu", {}), ("aten::max", {})], tid=5)
    run = TraceBuilder()
    end = replay(run, 0, [ran(k, 1) for k in ("a", "b", "c", "d")], launch="hipGraphLaunch")
    end = replay(run, end, [ran("gemm", 1)], launch="hipGraphLaunch")
    replay(run, end, [ran("conv", 1), ran("relu", 1)], launch="hipGraphLaunch")
    model = with_captures(run.model(tmp_path), cap.model(tmp_path, "cap.json"))
    summary = kernels(model, "op")["graph_replay"]
    assert summary["matched"] == 0
    reasons = {u["first_kernel"]: (u["kernels"], u["reason"]) for u in summary["unmatched"]}
    assert reasons == {
        "a": (4, "no captured graph has 4 kernel launches (the longest has 3)"),
        "gemm": (1, "2 captured runs fit it equally well and name different ops"),
        "conv": (
            2,
            "no captured graph's launches line up with its 2 kernels by kernel name, "
            "grid and block",
        ),
    }
    assert [u["device_us"] for u in summary["unmatched"]] == [16.0, 8.0, 4.0]


def test_the_text_report_gives_each_unmatched_graphs_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    path = _serving_trace().write(tmp_path / "worker0.1.pt.trace.json")
    assert main(["report", str(path), "--view", "kernels", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "graph replay: 6 kernels, 4 matched to their capture" in out
    assert (
        "  unmatched: conv (2 kernels, 1 replays, 0.008 ms): no captured graph's launches "
        "line up with its 2 kernels by kernel name, grid and block"
    ) in out.splitlines()
