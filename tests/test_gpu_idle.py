"""GPU-idle analyses (`analysis/gpu_idle`): idle time by class, launch delay, queue length,
on small traces whose every number is worked out by hand, and on real traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import CPU_PID, CPU_TID, GPU_PID, TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core import launch_delay
from kinetoscope.analysis.core.launch_delay import grouped_stats
from kinetoscope.analysis.core.launches import FAMILIES, gpu_work, launch_family
from kinetoscope.analysis.core.rules import load
from kinetoscope.analysis.gpu_idle.queue import queue_series
from kinetoscope.analysis.gpu_idle.view import GpuIdleView, gpu_idle
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.cli.main import main
from kinetoscope.trace_view import track_list
from kinetoscope.trace_view.counters import build_counters, counter_series
from kinetoscope.trace_view.workers import WorkerTrace


def _runtime(t: TraceBuilder, name: str, ts: float, dur: float, corr: int | None) -> None:
    args: dict[str, Any] = {"External id": t.new_id()}
    if corr is not None:
        args["correlation"] = corr
    t.events.append(
        {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": CPU_PID, "tid": CPU_TID,
         "ts": ts, "dur": dur, "args": args}
    )  # fmt: skip


def _gpu(t: TraceBuilder, name: str, ts: float, dur: float, corr: int | None, stream: int = 7,
         cat: str = "kernel") -> None:  # fmt: skip
    args: dict[str, Any] = {"device": 0, "stream": stream}
    if corr is not None:
        args["correlation"] = corr
    t.events.append(
        {"ph": "X", "cat": cat, "name": name, "pid": GPU_PID, "tid": stream, "ts": ts,
         "dur": dur, "args": args}
    )  # fmt: skip


def one_step_trace(
    runtime: str = "cudaLaunchKernel", sync: str = "cudaDeviceSynchronize"
) -> TraceBuilder:
    """Step 0-1000 µs, five kernels on stream 7 (times in µs):

    A  launched 10   runs 20-120    leading gap 0-20: launched after 0      host wait 20
    A  launched 15   runs 125-200   gap 120-125: queued, 5 < 30             kernel wait 5
    B  launched 300  runs 310-400   gap 200-310: launched after 200         host wait 110
    B  launched 320  runs 500-600   gap 400-500: queued, 100 >= 30          other 100
    -- sync call 610-700 --
    B  launched 705  runs 720-800   gap 600-720: the host blocked in a sync other 120
                                    gap 800-1000: nothing after it          other 200
    """
    t = TraceBuilder()
    t.step(1, 0, 1000)
    for name, launch, start, end in [
        ("A", 10, 20, 120), ("A", 15, 125, 200), ("B", 300, 310, 400), ("B", 320, 500, 600),
        ("B", 705, 720, 800),
    ]:  # fmt: skip
        corr = t.new_id()
        _runtime(t, runtime, launch, 5, corr)
        _gpu(t, name, start, end - start, corr)
    _runtime(t, sync, 610, 90, None)
    return t


def _view(t: TraceBuilder, tmp_path: Path) -> GpuIdleView:
    view = gpu_idle(t.model(tmp_path))
    assert view["available"], view["reason"]
    return view


def test_idle_classes_by_hand(tmp_path: Path) -> None:
    view = _view(one_step_trace(), tmp_path)
    device = view["devices"][0]
    total = device["total"]
    assert total["step_ns"] == 1_000_000
    assert total["busy_ns"] == 445_000  # 100 + 75 + 90 + 100 + 80 µs
    assert total["host_wait_ns"] == 130_000  # 20 + 110
    assert total["kernel_wait_ns"] == 5_000
    assert total["other_ns"] == 420_000  # 100 + 120 + 200
    assert total["idle_ns"] == 555_000 == total["step_ns"] - total["busy_ns"]
    assert total["idle_share"] == 0.555 and total["host_wait_share"] == 0.13
    assert device["streams"][0]["total"] == total  # one stream: the device's numbers
    causes = {(i["cause"], i["duration_ns"]) for i in view["top_intervals"]}
    assert causes == {
        ("no_next_activity", 200_000), ("blocking_sync", 120_000), ("launched_late", 110_000),
        ("queued_long_gap", 100_000), ("launched_late", 20_000), ("queued_short_gap", 5_000),
    }  # fmt: skip
    first = view["top_intervals"][0]
    assert (first["start_us"], first["end_us"], first["idle_class"]) == (800.0, 1000.0, "other")
    late = [i for i in view["top_intervals"] if i["duration_ns"] == 110_000][0]
    assert (late["start_us"], late["next_name"], late["stream"]) == (200.0, "B", 7)


def test_launch_delay_by_hand(tmp_path: Path) -> None:
    delay = _view(one_step_trace(), tmp_path)["launch_delay"]
    assert delay is not None
    assert (delay["activities"], delay["linked"], delay["names"]) == (5, 5, 2)
    rows = {r["name"]: r for r in delay["rows"]}
    # A: delays 10 and 110 µs; B: 10, 180 and 15 µs. Percentiles interpolate between
    # ranks (docs/metrics.md#percentiles): A's p50 is 60 µs, p90 10 + 0.9 * 100 = 100 µs;
    # B's p90 15 + 0.8 * 165 = 147 µs (nearest-rank gave 10, 110 and 180 µs).
    assert rows["A"] == {
        "name": "A", "count": 2, "total_ns": 120_000, "mean_ns": 60_000.0, "p50_ns": 60_000,
        "p90_ns": 100_000, "max_ns": 110_000, "launch_call_mean_ns": 5_000.0,
        "launch_call_p90_ns": 5_000,
    }  # fmt: skip
    assert (rows["B"]["p50_ns"], rows["B"]["p90_ns"], rows["B"]["mean_ns"]) == (
        15_000, 147_000, 68_333.3,
    )  # fmt: skip
    assert [r["name"] for r in delay["rows"]] == ["B", "A"]  # most total delay first
    top = delay["outliers"][0]
    assert (top["delay_ns"], top["start_us"], top["launch_start_us"]) == (180_000, 500.0, 320.0)
    assert top["launch_name"] == "cudaLaunchKernel"


def test_queue_length_by_hand(tmp_path: Path) -> None:
    model = one_step_trace().model(tmp_path)
    (series,) = queue_series(gpu_work(model))
    us = (series.times / 1000).tolist()
    assert us == [10, 15, 120, 200, 300, 320, 400, 600, 705, 800]
    assert series.values.tolist() == [1, 2, 1, 0, 1, 2, 1, 0, 1, 0]
    queue = gpu_idle(model)["devices"][0]["streams"][0]["queue"]
    # Two kernels queued 15-120 and 320-400; empty 0-10, 200-300, 600-705, 800-1000.
    assert queue == {"max_length": 2, "time_at_max_ns": 185_000, "empty_ns": 415_000}


def test_amd_launch_names_and_streams(tmp_path: Path) -> None:
    """hipLaunchKernel / hipExtModuleLaunchKernel link like CUDA's; a copy on another
    stream fills the device's gap but not the stream's."""
    t = one_step_trace("hipLaunchKernel", "hipDeviceSynchronize")
    t.header["roctracer_version"] = 4
    corr = t.new_id()
    _runtime(t, "hipExtModuleLaunchKernel", 395, 5, corr)
    _gpu(t, "Cijk_gemm", 410, 60, corr, stream=3)  # inside stream 7's 400-500 gap
    corr = t.new_id()
    _runtime(t, "hipMemcpyAsync", 396, 2, corr)
    _gpu(t, "Memcpy DtoD", 470, 20, corr, stream=3, cat="gpu_memcpy")
    view = _view(t, tmp_path)
    device = view["devices"][0]
    streams = {s["stream"]: s["total"] for s in device["streams"]}
    assert streams[7]["other_ns"] == 420_000  # as before: stream 7 alone
    assert streams[3]["busy_ns"] == 80_000
    # The device: 400-410 and 490-500 are queued 10 µs gaps (the gemm was launched at 395,
    # B at 320): kernel wait; stream 7's 100 µs of "other" became 80 busy + 20 kernel wait.
    assert device["total"]["busy_ns"] == 525_000
    assert device["total"]["kernel_wait_ns"] == 25_000
    assert device["total"]["other_ns"] == 320_000
    delay = view["launch_delay"]
    assert delay is not None and delay["linked"] == 7
    names = {o["launch_name"] for o in delay["outliers"]}
    assert {"hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync"} <= names


def test_graph_launch_kernels_share_one_call(tmp_path: Path) -> None:
    """Three kernels of one cudaGraphLaunch: only the first has a launch delay; all
    three join the queue when the call starts."""
    t = TraceBuilder()
    t.step(1, 0, 200)
    corr = t.new_id()
    _runtime(t, "cudaGraphLaunch", 10, 20, corr)
    for start, end in [(50, 60), (60, 70), (75, 85)]:
        _gpu(t, "g", start, end - start, corr)
    model = t.model(tmp_path)
    delay = gpu_idle(model)["launch_delay"]
    assert delay is not None
    assert (delay["graph_kernels_after_first"], delay["rows"][0]["count"]) == (2, 1)
    assert delay["rows"][0]["p50_ns"] == 40_000
    (series,) = queue_series(gpu_work(model))
    assert series.values.tolist()[:3] == [3, 2, 1]
    # 60-70 starts when 50-60 ends: no gap; 70-75 is a queued 5 µs gap.
    assert gpu_idle(model)["devices"][0]["total"]["kernel_wait_ns"] == 5_000


def test_triton_launcher_op_is_not_a_kernel(tmp_path: Path) -> None:
    """HTA counted Triton's CPU launcher op (named like its kernel) as GPU work."""
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("triton_poi_fused_add_0", 5, 30)
    corr = t.new_id()
    _runtime(t, "cuLaunchKernel", 10, 5, corr)
    _gpu(t, "triton_poi_fused_add_0", 20, 10, corr)
    delay = _view(t, tmp_path)["launch_delay"]
    assert delay is not None and delay["activities"] == 1


def test_grouped_stats_on_wide_and_narrow_values() -> None:
    """Percentiles read values sorted within their group: one sort of a combined key, or
    a lexsort when (group, value) does not fit one int64."""
    rng = np.random.default_rng(4)
    for high, n in ((10, 3000), (10**9, 3000), (1 << 59, 40)):  # 40: sums stay in int64
        values = rng.integers(-high, high, n)
        group = rng.integers(0, 7, n)
        stats = grouped_stats(values, group, 8)
        for g in range(8):
            mine = np.sort(values[group == g])
            if not mine.size:
                assert stats["count"][g] == 0
                continue
            assert stats["sum"][g] == mine.sum()
            for key, q in (("p50", 0.5), ("p90", 0.9)):
                want = np.quantile(mine.astype(np.float64), q, method="linear")
                assert abs(int(stats[key][g]) - want) <= max(1.0, abs(want) * 1e-14)
            assert stats["max"][g] == mine[-1]


def test_values_sorted_within_groups_on_every_key_width() -> None:
    """uint32 keys, int64 keys and the lexsort give the same (group, value) order: spans
    around the uint32 edge (8 groups of 2**29 values: keys up to 2**32 - 1 exactly)."""
    rng = np.random.default_rng(9)
    for low, high, n in (
        (0, 10, 500),
        (5, 5 + (1 << 29) - 1, 500),
        (0, 1 << 29, 500),
        (-9, 1 << 40, 50),
    ):
        values = rng.integers(low, high + 1, n)
        values[:2] = low, high  # the span at its widest
        group = rng.integers(0, 8, n)
        group[:2] = 7
        got = launch_delay._sorted_within_groups(values, group)
        assert got.dtype == np.int64
        assert got.tolist() == values[np.lexsort((values, group))].tolist()


def test_percentiles_interpolate_between_ranks() -> None:
    """The one percentile rule (docs/metrics.md#percentiles), worked by hand: p50 of an
    even count is the mean of the middle two, p90 lies between the ranks around 0.9 * (n-1),
    whole nanoseconds round halves up; p100 is the maximum."""
    values = np.array([40, 10, 20, 30, 7, 8, 9], dtype=np.int64)
    group = np.array([0, 0, 0, 0, 1, 1, 2])
    stats = grouped_stats(values, group, 4)
    # group 0: 10 20 30 40 -> p50 at h=1.5: 25; p90 at h=2.7: 30 + 0.7 * 10 = 37
    # group 1: 7 8 -> p50 7.5 rounds to 8; group 2: one value; group 3: none
    assert stats["p50"].tolist() == [25, 8, 9, 0]
    assert stats["p90"].tolist() == [37, 8, 9, 0]
    assert stats["max"].tolist() == [40, 8, 9, 0]
    assert stats["count"].tolist() == [4, 2, 1, 0]


def test_nanoseconds_kept_exact(tmp_path: Path) -> None:
    """2024+ traces: ts relative to baseTimeNanoseconds with ns fractions; every gap and
    delay is the whole number of ns the file wrote (HTA rounded them to µs)."""
    t = TraceBuilder()
    t.header["baseTimeNanoseconds"] = 1_700_000_000_000_000_000
    t.step(1, 1000.0, 10.0)
    for launch, start, dur in [(1000.001, 1000.334, 0.5), (1000.002, 1000.835, 0.123)]:
        corr = t.new_id()
        _runtime(t, "cudaLaunchKernel", launch, 0.001, corr)
        _gpu(t, "k", start, dur, corr)
    view = _view(t, tmp_path)
    delay = view["launch_delay"]
    assert delay is not None
    # delays 333 and 833 ns: p50 (333 + 833) / 2
    assert (delay["rows"][0]["p50_ns"], delay["rows"][0]["max_ns"]) == (583, 833)
    total = view["devices"][0]["total"]
    assert total["kernel_wait_ns"] == 1  # 1000.834 → 1000.835
    assert total["busy_ns"] == 623 and total["step_ns"] == 10_000


def test_unavailable_says_why(tmp_path: Path) -> None:
    cpu = TraceBuilder()
    cpu.step(1, 0, 100)
    cpu.op("aten::mm", 10, 50)
    view = gpu_idle(cpu.model(tmp_path, "cpu.pt.trace.json"))
    assert not view["available"] and "no GPU activity" in (view["reason"] or "")
    assert view["devices"] == [] and view["launch_delay"] is None
    unlinked = TraceBuilder()
    unlinked.step(1, 0, 100)
    _gpu(unlinked, "k", 10, 5, None)
    view = gpu_idle(unlinked.model(tmp_path, "old.pt.trace.json"))
    assert not view["available"] and "correlation" in (view["reason"] or "")


@pytest.mark.parametrize("family", FAMILIES)
def test_launch_api_examples_classify(family: str) -> None:
    examples = load("launch_apis")["families"][family]["examples"]
    assert examples
    for name in examples:
        assert launch_family(name) == family, name
    assert launch_family("cudaGetDevice") is None and launch_family("aten::mm") is None


def test_launch_family_strips_only_whole_suffixes() -> None:
    assert launch_family("cudaLaunchKernel_v7000_ptsz") == "kernel_launch"
    assert launch_family("cudaStreamSynchronize_spt") == "synchronize"
    for name in ("cudaLaunchKernelX", "cudaLaunchKernel_v", "cudaLaunch", "cu", "", "void k<128>"):
        assert launch_family(name) is None, name


CORPUS_GPU_TRACES = [
    "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "tracelens/tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz",
    "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
]


@pytest.mark.parametrize("rel", CORPUS_GPU_TRACES, ids=lambda r: r.split("/")[-1][:30])
def test_corpus_numbers_are_plausible(rel: str) -> None:
    """H100, A100, MI300X and MI250 traces: launches found (AMD too), shares between 0 and
    1, classes summing to the idle time and idle + busy to the step time, per step."""
    view = gpu_idle(corpus_model(rel))
    assert view["available"], view["reason"]
    delay = view["launch_delay"]
    assert delay is not None and delay["linked"] == delay["activities"] > 0
    assert all(r["p50_ns"] <= r["p90_ns"] <= r["max_ns"] for r in delay["rows"])
    for device in view["devices"]:
        for part in [device["total"], *device["per_step"]] + [
            b for s in device["streams"] for b in [s["total"], *s["per_step"]]
        ]:
            classes = part["host_wait_ns"] + part["kernel_wait_ns"] + part["other_ns"]
            assert classes == part["idle_ns"] == part["step_ns"] - part["busy_ns"]
            assert 0 <= (part["idle_share"] or 0) <= 1
        for stream in device["streams"]:
            assert stream["queue"]["max_length"] >= 1
    assert all(np.isfinite(i["start_us"]) and i["duration_ns"] > 0 for i in view["top_intervals"])


def test_cpu_only_corpus_trace_is_unavailable() -> None:
    view = gpu_idle(
        corpus_model("hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
    )
    assert not view["available"] and view["reason"]


def test_report_prints_the_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_step_trace().write(tmp_path / "w.pt.trace.json")
    assert main(["report", str(tmp_path), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["gpu_idle"]["devices"][0]["total"]["host_wait_ns"] == 130_000
    assert main(["report", str(tmp_path), "--view", "gpu_idle", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "Why is the GPU idle? (over 1 step;" in text
    assert "  stream 7  " in text and " 13.0 " in text  # host wait 130 of 1000 µs


def test_queue_length_counter_track(tmp_path: Path) -> None:
    """The trace view draws each stream's queue as a counter, listed after the other
    tracks (theirs keep their `sort`); each bucket shows the longest queue in it."""
    model = one_step_trace().model(tmp_path)
    counters = build_counters(model)
    queue = counters[-1]
    assert (queue.id, queue.metric, queue.unit, queue.stream) == (
        "gpu0.stream7.queue", "gpu_queue_length", "count", 7,
    )  # fmt: skip
    assert queue.listed_last and queue.max_value == 2.0
    assert queue.label == "GPU 0 stream 7 queue length"
    starts, values = counter_series(queue, 0.0, 1000.0, 4)
    assert starts.tolist() == [0.0, 500.0] and values.tolist() == [2.0, 1.0]
    view = track_list.tracks([WorkerTrace(None, model)], {})
    assert view["tracks"][-1]["id"] == "gpu0.stream7.queue"
    assert [t["sort"] for t in view["tracks"]] == list(range(len(view["tracks"])))


def test_kernel_view_launch_delay_columns(tmp_path: Path) -> None:
    rows = {r["name"]: r for r in kernels(one_step_trace().model(tmp_path))["rows"]}
    assert (rows["A"]["launch_delay_mean_us"], rows["A"]["launch_delay_p90_us"]) == (60.0, 100.0)
    assert (rows["B"]["launch_delay_mean_us"], rows["B"]["launch_delay_p90_us"]) == (68.333, 147.0)
    unlinked = TraceBuilder()
    unlinked.step(1, 0, 100)
    _gpu(unlinked, "k", 10, 5, None)
    (row,) = kernels(unlinked.model(tmp_path, "old.pt.trace.json"))["rows"]
    assert row["launch_delay_mean_us"] is None and row["launch_delay_p90_us"] is None


def _tied_trace(reverse: bool) -> TraceBuilder:
    """Kernels "zeta", "alpha" and "mid", each launched 10 µs before it runs on its own
    stream at the same time (equal launch delays, equal totals); written in one event
    order or the reverse."""
    t = TraceBuilder()
    t.step(1, 0, 1000)
    for name, stream in (("zeta", 7), ("alpha", 8), ("mid", 9)):
        corr = t.new_id()
        _runtime(t, "cudaLaunchKernel", 100, 5, corr)
        _gpu(t, name, 110, 50, corr, stream=stream)
    if reverse:
        t.events.reverse()
    return t


def test_equal_launch_delays_ordered_by_content(tmp_path: Path) -> None:
    """Rows of equal total delay come by name, outliers of equal delay and start by name
    (then launch call, device, stream), whatever order the file lists the events in."""
    views = []
    for reverse in (False, True):
        folder = tmp_path / str(reverse)
        folder.mkdir()
        view = _view(_tied_trace(reverse), folder)
        assert view["launch_delay"] is not None
        views.append(view["launch_delay"])
    for delay in views:
        assert [r["name"] for r in delay["rows"]] == ["alpha", "mid", "zeta"]
        assert {r["total_ns"] for r in delay["rows"]} == {10_000}
        assert [o["name"] for o in delay["outliers"]] == ["alpha", "mid", "zeta"]
    assert views[0] == views[1]
