"""A late launch told by when the work entered its stream's queue (CUPTI's `queued`, read by
`core/queued_times.py`), where the trace records it: the GPU-idle view's causes, on the
by-hand trace of tests/test_gpu_idle.py with `queued` written as libkineto writes it (ns
since kineto #907)."""

from __future__ import annotations

from pathlib import Path

from builders import TraceBuilder
from kinetoscope.analysis.gpu_idle.view import gpu_idle
from test_gpu_idle import one_step_trace


def _with_queued(queued_us: dict[float, float]) -> TraceBuilder:
    """The by-hand trace, each kernel's `queued` 3 µs after its launch call began, or at
    `queued_us[its start]`."""
    t = one_step_trace()
    calls = [e for e in t.events if e.get("cat") == "cuda_runtime"]
    launches = {e["args"]["correlation"]: e["ts"] for e in calls if "correlation" in e["args"]}
    for e in t.events:
        if e.get("cat") == "kernel":
            at = queued_us.get(e["ts"], launches[e["args"]["correlation"]] + 3)
            e["args"]["queued"] = int(at * 1000)
    return t


def test_work_queued_after_the_gap_began_is_a_late_launch(tmp_path: Path) -> None:
    """The kernel at 500 µs was launched by a call at 320 µs, but entered its queue only at
    450 µs, after the stream went idle at 400: the 100 µs gap is the host's (host wait),
    not queued work held (other) as the launch call's start alone says."""
    (tmp_path / "a").mkdir()
    recorded = gpu_idle(_with_queued({500.0: 450.0}).model(tmp_path / "a"))
    assert recorded["queued_times"] == "recorded"
    total = recorded["devices"][0]["total"]
    assert (total["host_wait_ns"], total["kernel_wait_ns"], total["other_ns"]) == (
        230_000, 5_000, 320_000,
    )  # fmt: skip
    causes = {(i["cause"], i["duration_ns"]) for i in recorded["top_intervals"]}
    assert ("launched_late", 100_000) in causes and ("queued_long_gap", 100_000) not in causes


def test_queued_in_time_changes_nothing(tmp_path: Path) -> None:
    """Each kernel queued 3 µs into its launch call: the causes the launch calls give."""
    for sub in ("plain", "queued"):
        (tmp_path / sub).mkdir()
    plain = gpu_idle(one_step_trace().model(tmp_path / "plain"))
    queued = gpu_idle(_with_queued({}).model(tmp_path / "queued"))
    assert plain["queued_times"] == "not recorded" and queued["queued_times"] == "recorded"
    assert queued["devices"] == plain["devices"]
    assert queued["top_intervals"] == plain["top_intervals"]
