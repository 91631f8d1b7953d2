"""`gpu_user_annotation` rows (Kineto writes one on the GPU timeline for each
`record_function` range whose kernels it saw, ProfilerStep#N included; kineto#1393):
they mirror host ranges, so a step is counted once (the host's), on every page that
counts steps, and the annotation's GPU span is not a kernel's time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import GPU_PID, TraceBuilder
from kinetoscope.cli.main import main


def _trace(root: Path, mirrored: bool) -> Path:
    t = TraceBuilder()
    for i in range(3):
        at = 1000.0 * i
        t.step(i + 1, at, 900)
        op = t.op("aten::mm", at + 10, 300)
        t.launch(at + 20, 5, op, gpu_ts=at + 50, gpu_dur=400, name="gemm")
        if mirrored:
            for name, start, dur in (
                (f"ProfilerStep#{i + 1}", at + 50, 400),
                ("my_range", at + 50, 200),
            ):
                t.events.append(
                    {
                        "ph": "X",
                        "cat": "gpu_user_annotation",
                        "name": name,
                        "pid": GPU_PID,
                        "tid": 7,
                        "ts": start,
                        "dur": dur,
                        "args": {"device": 0, "stream": 7},
                    }
                )
    run = root / ("mirrored" if mirrored else "plain")
    run.mkdir(parents=True)
    t.write(run / "worker0.1.pt.trace.json")
    return run


def _report(run: Path, view: str, capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(["report", str(run), "--view", view, "--format", "json", "--no-cache"])
    assert code == 0
    return json.loads(capsys.readouterr().out)[view]


@pytest.mark.parametrize("view", ["overview", "critical_path", "gpu_idle", "kernels"])
def test_gpu_annotations_of_steps_change_no_answer(
    tmp_path: Path, view: str, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _report(_trace(tmp_path, False), view, capsys)
    mirrored = _report(_trace(tmp_path, True), view, capsys)
    assert mirrored == plain
