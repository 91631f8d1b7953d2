"""The kernel fields CUPTI writes beside the launch configuration, in the shapes libkineto
writes them (`libkineto/src/CuptiActivity.h`, `MetadataFieldCatalog.h`): the occupancy's
`limitingFactors` (kineto #1322), `priority` (#1361, CUDA 13.1+), `channel` (#1420, not
read), and `queued` (ns since kineto #907, µs before; 0 unless CUPTI's latency timestamps
were enabled). Answers worked out by hand; the real traces of the corpus (2020 kernels
with `queued: 0`, a 2026 H100 kernel with its occupancy) keep theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.kernels.text import render_kernels
from kinetoscope.analysis.kernels.view import kernels

BASE_NS = 1_780_000_000_123_456_789  # baseTimeNanoseconds of a 2026 trace


def _occupancy(limits: str) -> dict[str, Any]:
    return {
        "activeBlocksPerMultiprocessor": 4,
        "limitingFactors": limits,
        "blockLimitRegs": 4,
        "blockLimitSharedMem": 6,
        "blockLimitWarps": 16,
        "blockLimitBlocks": 32,
        "blockLimitBarriers": 2147483647,
        "allocatedRegistersPerBlock": 32768,
        "allocatedSharedMemPerBlock": 37888,
    }


def _trace(queued_of: Any, base_ns: int | None = BASE_NS) -> TraceBuilder:
    """Two GEMM calls (launched at 10 and 100 µs, starting at 40 and 120 µs; 50 and 30 µs
    long) and one copy kernel, with `queued` = queued_of(launch ts, kernel ts)."""
    t = TraceBuilder()
    if base_ns is not None:
        t.header["baseTimeNanoseconds"] = base_ns
    op = t.op("aten::mm", 0, 200)
    calls = [(10.0, 40.0, 50.0, "REGS|SMEM", -2), (100.0, 120.0, 30.0, "none", -5)]
    for launch_at, start, dur, limits, priority in calls:
        t.launch(launch_at, 5, op, gpu_ts=start, gpu_dur=dur, name="gemm",
                 queued=queued_of(launch_at, start), priority=priority, channel=3,
                 channel_type=1, occupancy=_occupancy(limits))  # fmt: skip
    t.launch(150, 5, op, gpu_ts=160, gpu_dur=5, name="copy", queued=0)
    return t


def _rows(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in view["rows"]}


def test_queued_on_the_files_clock_gives_the_queue_wait(tmp_path: Path) -> None:
    """queued 3 µs after each launch call (ns, kineto #907 on): the waits are 27 µs and
    17 µs (start - queued), mean 22 µs; the copy has none (0: not recorded)."""
    t = _trace(lambda launch_at, start: BASE_NS + int((launch_at + 3) * 1000))
    view = kernels(t.model(tmp_path))
    gemm, copy = _rows(view)["gemm"], _rows(view)["copy"]
    assert view["queued_times"] == "recorded"
    assert gemm["queue_mean_us"] == 22.0 and copy["queue_mean_us"] is None
    # The longest call's (50 µs) priority and occupancy limit, as its grid and block.
    assert gemm["priority"] == -2 and gemm["occupancy_limited_by"] == "REGS|SMEM"
    assert copy["priority"] is None and copy["occupancy_limited_by"] is None
    assert "REGS|SMEM" in render_kernels(view)


def test_queued_in_microseconds_before_kineto_907(tmp_path: Path) -> None:
    """Absolute µs times (no base), `queued` in µs as libkineto wrote it until April 2024."""
    epoch_us = 1_650_000_000_000_000
    t = _trace(lambda launch_at, start: epoch_us + launch_at + 3, base_ns=None)
    for e in t.events:
        if "ts" in e:
            e["ts"] += epoch_us
    view = kernels(t.model(tmp_path))
    assert view["queued_times"] == "recorded"
    assert _rows(view)["gemm"]["queue_mean_us"] == 22.0


def test_queued_on_another_clock_or_not_recorded_says_so(tmp_path: Path) -> None:
    """A raw CUPTI clock the file's times were converted from (values nowhere near them):
    no queue wait, and the view says why; queued 0 everywhere (the default): not recorded."""
    other = _trace(lambda launch_at, start: 987_654_321_000 + int(start * 1000))
    (tmp_path / "other").mkdir()
    view = kernels(other.model(tmp_path / "other"))
    assert view["queued_times"] == "other clock"
    assert all(r["queue_mean_us"] is None for r in view["rows"])
    none = _trace(lambda launch_at, start: 0)
    (tmp_path / "none").mkdir()
    view = kernels(none.model(tmp_path / "none"))
    assert view["queued_times"] == "not recorded"
    assert _rows(view)["gemm"]["priority"] == -2  # the other fields still read


def test_real_traces_keep_their_answers() -> None:
    """2020 V100 kernels (`queued: 0` on each): nothing recorded; the 2026 H100 kernel's
    occupancy (limited by blocks) is read."""
    v100 = kernels(
        corpus_model(
            "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
            "worker0_span1.pt.trace.json.gz"
        )
    )
    assert v100["queued_times"] == "not recorded"
    assert all(r["priority"] is None and r["occupancy_limited_by"] is None for r in v100["rows"])
    h100 = kernels(corpus_model("pytorch-kineto/docs/traces/before_fix_trace.json"))
    assert [r["occupancy_limited_by"] for r in h100["rows"]] == ["BLOCKS"]
