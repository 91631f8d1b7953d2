"""`kinetoscope report` text: lines fit the terminal, times are relative to the trace start."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.cli.main import main

EPOCH_US = 1_623_142_623_000_000  # traces before 2024 carry epoch microseconds
LONG_OP = "aten::" + "very_long_operator_name_" * 8


def make_logdir(root: Path) -> Path:
    """One run whose op name is far wider than a terminal, with memory events."""
    (root / "r").mkdir(parents=True)
    t = TraceBuilder()
    t.step(1, EPOCH_US, 1000)
    op = t.op(LONG_OP, EPOCH_US + 10, 500)
    t.launch(EPOCH_US + 20, 5, op, gpu_ts=EPOCH_US + 30, gpu_dur=400)
    t.memory(EPOCH_US + 100, 4096, addr=1, total_allocated=4096)
    t.memory(EPOCH_US + 250, 8192, addr=2, total_allocated=12288)
    t.memory(EPOCH_US + 400, -4096, addr=1, total_allocated=8192)
    t.write(root / "r" / "worker0.1.pt.trace.json")
    return root


def report(logdir: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["report", str(logdir)]) == 0
    return capsys.readouterr().out.splitlines()


def test_lines_fit_100_columns_without_columns_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = report(make_logdir(tmp_path / "logs"), capsys)
    assert max(len(line) for line in lines) <= 100
    ops = [line for line in lines if line.startswith("aten::very_long")]
    assert ops and all(line.split()[0].endswith("...") for line in ops)


def test_lines_follow_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    lines = report(make_logdir(tmp_path / "logs"), capsys)
    # Text columns shrink and sentences wrap; a table of numbers alone can still be wider.
    assert max(len(line) for line in lines if "aten::" in line or line.startswith("  ")) <= 80


def test_memory_peak_time_is_relative_to_the_trace_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = report(make_logdir(tmp_path / "logs"), capsys)
    gpu = next(line for line in lines if line.startswith("GPU 0 "))
    # The peak (12288 bytes) is at 250 µs after the first event: 0.250 ms, no epoch µs.
    assert gpu.split()[3] == "0.250"
    assert not any(str(EPOCH_US)[:8] in line for line in lines)


def test_real_trace_fits_100_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = corpus_path("pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0")
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = report(run, capsys)
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("ProfilerStep#10 ") for line in lines)  # step names whole


def test_amd_memory_table_names_the_device_as_the_overview(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HIP records memory on device id 0 while the kernels run on GPU 2: the Memory table
    and its operator table say "GPU 2", as the GPU summary does, not the id "GPU0"."""
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "r").mkdir()
    t = TraceBuilder()
    t.header = {"schemaVersion": 1, "roctracer_version": 4}
    t.step(1, 0, 1000)
    op = t.op("aten::empty", 10, 500)
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=400, device=2, runtime="hipLaunchKernel")
    t.memory(100, 4096, addr=1, total_allocated=4096, device_id=0)
    t.write(tmp_path / "r" / "worker0.1.pt.trace.json")
    lines = report(tmp_path, capsys)
    summary = lines[lines.index("GPU summary") + 1]
    assert summary.strip().startswith("GPU 2")
    memory = lines[lines.index("Memory (peaks; at: ms since the trace start)") :]
    assert memory[3].startswith("GPU 2 ")
    assert any(line.startswith("GPU 2 ") and "aten::empty" in line for line in memory[4:])
    assert not any("GPU0" in line for line in lines)


def test_cpu_only_trace_leaves_out_gpu_columns_and_ranks_operators_by_host_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "r").mkdir()
    t = TraceBuilder()
    t.step(1, 0, 1000)
    t.op("aten::small", 10, 100)
    t.op("aten::big", 200, 600)
    t.write(tmp_path / "r" / "worker0.1.pt.trace.json")
    lines = report(tmp_path, capsys)
    header = lines[lines.index("Step time breakdown (ms)") + 1].split()
    assert header == ["step", "total", "ms", "DataLoader", "CPU", "Exec", "Other"]
    assert any("Kernel, Memcpy, Memset, Comms, Runtime: 0 in every step" in line for line in lines)
    title = next(line for line in lines if line.startswith("Operators ("))
    assert title == "Operators (top 2 of 2 by host self time; every device time is 0)"
    table = lines[lines.index(title) + 1 :]
    assert "dev self ms" not in table[0] and "host self ms" in table[0]
    assert table[2].startswith("aten::big") and table[3].startswith("aten::small")
