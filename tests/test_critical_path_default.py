"""The critical path and what-if on traces of the shapes the profiler's default settings
record (tests/critical_path_default_jobs.py): cross-stream waits named only by runtime
calls give the same path and the same predictions as the same trace with its `cuda_sync`
events, labelled as inferred; the autograd backward thread follows the training thread's
handoff, whatever the engine's wake-up time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from critical_path_default_jobs import (
    DATALOADER,
    SEND_RECV,
    backward_thread_trace,
    ddp_job,
    send_recv_trace,
)
from kinetoscope.analysis.critical_path.run import run_critical_path, run_whatif
from kinetoscope.analysis.critical_path.span import critical_path_view, whatif_view
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext


def _context(folder: Path, **params: Any) -> RunContext:
    run = next(r for r in scan_logdir(str(folder.parent)) if r.name == folder.name)
    return RunContext((run,), None, params)


def _path_shape(view: Any) -> list[tuple[Any, ...]]:
    """The path without the label that says how a wait was known."""
    return [
        (s["rank"], s["kind"], s["name"].replace(" (inferred)", ""), s["start_us"], s["dur_us"])
        for s in view["segments"]
    ]


DDP_CASES = [
    ({"kernel": "gemm", "factor": 0.5, "rank": 1}, 642.0),
    ({"kernel": "gemm", "factor": 0.5, "rank": 0}, 1092.0),
    ({"collective": "all_reduce", "factor": 0.5}, 1042.0),
    ({"kernel": "sgd_update", "factor": 2.0}, 1142.0),
]


@pytest.mark.parametrize("sync_events", [True, False], ids=["sync-events", "runtime-calls"])
def test_a_ddp_step_gives_the_same_answers_with_or_without_sync_events(
    tmp_path: Path, sync_events: bool
) -> None:
    folder = ddp_job(tmp_path / "ddp", sync_events)
    path = run_critical_path(_context(folder))
    assert path["step_us"] == 1092.0
    for params, expected in DDP_CASES:
        view = run_whatif(_context(folder, **params))
        assert view["predicted_step_us"] == expected, params
        assert view["saving_us"] == 1092.0 - expected
    names = [s["name"] for s in path["segments"] if s["kind"] != "idle"]
    assert names[:1] == ["aten::mm"] and "grad_copy" in names and "sgd_update" in names
    assert ("gemm", 1) in [(s["name"], s["rank"]) for s in path["segments"]]
    inferred = [a for a in path["assumptions"] if "cross-stream waits inferred" in a]
    assert bool(inferred) != sync_events
    if not sync_events:
        assert "2 cross-stream waits inferred (2 by timing" in inferred[0]


def test_the_ddp_path_is_the_same_and_says_which_waits_were_inferred(tmp_path: Path) -> None:
    recorded = run_critical_path(_context(ddp_job(tmp_path / "a", sync_events=True)))
    inferred = run_critical_path(_context(ddp_job(tmp_path / "b", sync_events=False)))
    assert _path_shape(recorded) == _path_shape(inferred)
    gaps = [s["name"] for s in inferred["segments"] if s["kind"] == "idle"]
    assert "stream wait (inferred)" in gaps  # the copy's 2 µs after the all_reduce


@pytest.mark.parametrize("sync_events", [True, False], ids=["sync-events", "runtime-calls"])
def test_a_kernel_waiting_for_a_send_recv_recorded_long_before(
    tmp_path: Path, sync_events: bool
) -> None:
    model = send_recv_trace(sync_events).model(tmp_path)
    path = critical_path_view(model, {})
    assert path["step_us"] == 5022.0
    assert [s["name"] for s in path["segments"] if s["kind"] != "idle"][-2:] == [SEND_RECV, "mlp"]
    assert whatif_view(model, {"kernel": SEND_RECV, "factor": 0.5})["predicted_step_us"] == 2572.0
    assert whatif_view(model, {"kernel": "embed", "factor": 0.5})["predicted_step_us"] == 5022.0


def test_a_wait_that_cannot_be_placed_is_said(tmp_path: Path) -> None:
    """A wait call with no record call of the thread before it, whose work started when its
    own stream allowed: nothing tells which work it waited for."""
    t = send_recv_trace(sync_events=False)
    t.events = [e for e in t.events if e["name"] != "cudaEventRecord"]
    for e in t.events:
        if e["name"] == "mlp":
            e["ts"] = 300.0  # starts as its launch allows: the wait decided nothing
    said = critical_path_view(t.model(tmp_path), {})["assumptions"]
    text = next(a for a in said if "cudaStreamWaitEvent" in a)
    assert "1 could not be placed" in text and "0 cross-stream waits inferred" in text


def test_the_backward_thread_follows_the_training_threads_handoff(tmp_path: Path) -> None:
    model = backward_thread_trace().model(tmp_path)
    path = critical_path_view(model, {})
    assert path["step_us"] == 3500.0
    idle: dict[str, float] = {}
    for s in path["segments"]:
        if s["kind"] == "idle":
            idle[s["name"]] = idle.get(s["name"], 0.0) + s["dur_us"]
    assert idle["autograd handoff"] == 650.0 + 600.0  # to the backward thread and back
    assert idle["unknown dependency"] == 10.0  # the step's start to its first op: nothing else
    on_path = {s["name"] for s in path["segments"]}
    assert {DATALOADER, "LinearBackward0", "Optimizer.step#SGD.step"} <= on_path
    cases = [
        ({"op": DATALOADER, "factor": 0.5}, 3000.0),
        ({"op": "LinearBackward0", "factor": 0.5}, 3250.0),
        ({"op": "aten::linear", "factor": 0.5}, 3450.0),
    ]
    for params, expected in cases:
        assert whatif_view(model, params)["predicted_step_us"] == expected, params
    assert any("autograd backward thread" in a for a in path["assumptions"])


@pytest.mark.parametrize("sync_events", [True, False], ids=["sync-events", "runtime-calls"])
def test_clocks_rounded_apart_keep_the_wait(tmp_path: Path, sync_events: bool) -> None:
    """The waiting kernel starts 0.13 µs before the SendRecv it waited for ends (device
    times rounded apart): the wait is kept, not warned about as going back in time."""
    t = send_recv_trace(sync_events)
    for e in t.events:
        if e["name"] == "mlp" or (e.get("cat") == "cuda_sync"):
            e["ts"] = 4919.87
    model = t.model(tmp_path)
    assert critical_path_view(model, {})["warnings"] == []
    halved = whatif_view(model, {"kernel": SEND_RECV, "factor": 0.5})
    assert halved["predicted_step_us"] == pytest.approx(2572.0 - 2.13)


def test_every_door_pages_the_path_and_the_notebook_joins_the_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path longer than a page: the route answers a page (`offset`, `limit`,
    `segments_total`); the notebook's frame holds every segment, in order."""
    import kinetoscope as ks
    from kinetoscope.analysis.critical_path import view as path_view

    folder = ddp_job(tmp_path / "ddp", sync_events=False)
    whole = run_critical_path(_context(folder))
    total = whole["segments_total"]
    page = run_critical_path(_context(folder, offset=2, limit=3))
    assert page["segments"] == whole["segments"][2:5] and page["segments_total"] == total
    monkeypatch.setattr(path_view, "MAX_SEGMENTS", 4)  # pages of 4 segments
    frame = ks.open(str(folder)).critical_path()
    assert len(frame) == total
    assert frame["name"].tolist() == [s["name"] for s in whole["segments"]]
