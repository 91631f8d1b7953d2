"""The producer bugs of 2026 that torch's validator does not catch (`health`'s
`kernel_overruns_next`, `kernel_overlap_maybe_pdl`, `kernels_not_recorded`), on built
traces of each shape and their look-alikes that are not bugs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import TraceBuilder
from kinetoscope.analysis.core.health.view import health


def _counts(t: TraceBuilder, tmp_path: Path) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return {c["id"]: c["count"] for c in health(t.model(tmp_path))["checks"]}


def _pair(runtime: str, major: int | None = None) -> TraceBuilder:
    """Two kernels on one stream, the first's recorded end 50 µs past the second's start."""
    t = TraceBuilder()
    if major is not None:
        t.header["deviceProperties"] = [{"id": 0, "name": "GPU", "computeMajor": major}]
    a = t.op("aten::mm", 0, 10)
    t.launch(1, 2, a, gpu_ts=10, gpu_dur=100, name="gemm", runtime="hipLaunchKernel")
    b = t.op("aten::add", 20, 10)
    t.launch(21, 2, b, gpu_ts=60, gpu_dur=20, name="add", runtime=runtime)
    return t


def test_a_kernel_overrunning_the_next_on_rocm_is_the_bug(tmp_path: Path) -> None:
    counts = _counts(_pair("hipLaunchKernel"), tmp_path)
    assert (counts["kernel_overruns_next"], counts["kernel_overlap_maybe_pdl"]) == (1, 0)


def test_an_extended_launch_on_hopper_may_be_pdl(tmp_path: Path) -> None:
    counts = _counts(_pair("cudaLaunchKernelExC", major=9), tmp_path)
    assert (counts["kernel_overruns_next"], counts["kernel_overlap_maybe_pdl"]) == (0, 1)


def test_before_hopper_no_launch_starts_early(tmp_path: Path) -> None:
    counts = _counts(_pair("cudaLaunchKernelExC", major=8), tmp_path)
    assert (counts["kernel_overruns_next"], counts["kernel_overlap_maybe_pdl"]) == (1, 0)


def test_without_recorded_launches_nothing_tells(tmp_path: Path) -> None:
    t = _pair("hipLaunchKernel")
    t.events = [e for e in t.events if e.get("cat") != "cuda_runtime"]
    view = health(t.model(tmp_path))
    maybe = next(c for c in view["checks"] if c["id"] == "kernel_overlap_maybe_pdl")
    assert maybe["count"] is None and "nothing tells" in (maybe["unknown"] or "")
    assert next(c for c in view["checks"] if c["id"] == "kernel_overruns_next")["count"] == 0


def _launches(recorded: list[bool]) -> TraceBuilder:
    """One launch every 10 µs; a kernel recorded for those marked True."""
    t = TraceBuilder()
    for i, has_kernel in enumerate(recorded):
        at = 10.0 * i
        op = t.op("aten::add", at, 5)
        if has_kernel:
            t.launch(at + 1, 2, op, gpu_ts=at + 5, gpu_dur=3, name="add")
        else:
            t.runtime("cudaLaunchKernel", at + 1, 2.0, **{"External id": op})
    return t


def test_kernels_that_stop_being_recorded_while_launches_go_on(tmp_path: Path) -> None:
    view = health(_launches([True] * 50 + [False] * 100 + [True] * 50).model(tmp_path))
    check = next(c for c in view["checks"] if c["id"] == "kernels_not_recorded")
    assert check["count"] == 100 and check["severity"] == "error"
    assert check["examples"][0]["ts_us"] == 501.0  # the first launch without its kernel
    assert view["status"] == "errors"


def test_the_end_of_a_profile_and_a_trace_without_kernels_are_not_that(tmp_path: Path) -> None:
    tail = _counts(_launches([True] * 50 + [False] * 100), tmp_path / "a")
    none = _counts(_launches([False] * 200), tmp_path / "b")
    short = _counts(_launches([True] * 50 + [False] * 49 + [True] * 50), tmp_path / "c")
    assert tail["kernels_not_recorded"] == none["kernels_not_recorded"] == 0
    assert short["kernels_not_recorded"] == 0  # fewer than 50 in a row
