"""Smoke test of the benchmark harness, so it cannot rot: ``bench/run.py --quick`` runs end to
end and writes a results file of the expected shape. It asserts structure, never timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_missing

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
QUICK_SRC = (
    SHARED / "corpus" / "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
)
TILER = SHARED / "tools" / "make_big_trace.py"

pytestmark = pytest.mark.corpus


@pytest.fixture(autouse=True)
def _shared_files() -> None:
    for needed in (QUICK_SRC, TILER):
        if not needed.is_file():
            corpus_missing(str(needed.relative_to(SHARED)))


def _check_measurement(m: dict[str, Any]) -> None:
    if "error" in m:
        assert isinstance(m["error"], str) and m["error"]
    else:
        assert isinstance(m["seconds"], (int, float)) and m["seconds"] > 0
        assert isinstance(m["peak_rss_bytes"], int) and m["peak_rss_bytes"] > 0
        assert m["ratio_to_gzip"] > 0
        assert m["rss_per_json"] > 0


def test_quick_run_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    cmd = [sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--out", str(out)]
    cmd += ["--work", str(tmp_path / "work"), "--python", sys.executable]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=280, stdin=subprocess.DEVNULL, check=False
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text(encoding="utf-8"))

    assert doc["schema"] == 1
    assert doc["quick"] is True
    assert doc["started_utc"] and doc["finished_utc"]
    machine = doc["machine"]
    for key in ("nproc", "mem_total_bytes", "harness_python", "product", "git_commit"):
        assert key in machine
    assert doc["anchors"] == {"skipped": True}
    assert doc["load"] is None

    assert len(doc["files"]) == 1
    row = doc["files"][0]
    assert row["json_bytes"] > 0 and row["gz_bytes"] > 0 and row["tiles"] >= 1
    assert row["gzip"]["seconds"] > 0
    assert set(row["tools"]) == {"kinetoscope_cold", "kinetoscope_warm"}
    for m in row["tools"].values():
        _check_measurement(m)
    cold = row["tools"]["kinetoscope_cold"]
    if "error" not in cold:
        assert "overview" in cold["views"]
    assert set(row["targets"]) >= {"cold_le_3x_gzip", "rss_le_json", "warm_le_0.3s"}

    # The tiled trace sits alone in its own run folder.
    logdir = Path(out.parent / "work" / "traces" / row["key"] / "logdir")
    traces = [p for p in logdir.rglob("*") if p.is_file()]
    assert [p.parent.name for p in traces] == [row["run"]]

    # compare.py reads what run.py writes.
    cmp = subprocess.run(
        [sys.executable, str(REPO / "bench" / "compare.py"), str(out), str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert cmp.returncode == 0, cmp.stderr
    assert row["label"] in cmp.stdout


def test_floor_splits_a_cold_report() -> None:
    """`bench/floor.py` on the corpus's smallest trace with kernels: every part measured
    (positive CPU ms), and the parts add up to about the whole report it measured."""
    trace = SHARED / "corpus" / "hta/tests/data/trace_compare/base/base.json.gz"
    if not trace.is_file():
        corpus_missing(str(trace.relative_to(SHARED)))
    # Three runs: the least of each part. With the parts as differences of separate
    # processes' least CPU, a noisy machine once put a ~50 ms part 27 ms below zero; the
    # imports' parts are now marks in one process.
    cmd = [sys.executable, str(REPO / "bench" / "floor.py"), str(trace), "--runs", "3"]
    cmd += ["--python", sys.executable]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {
        name.strip(): float(ms)
        for name, ms in (
            line.strip("|").rsplit("|", 1) for line in proc.stdout.splitlines() if "|" in line
        )
        if ms.strip().lstrip("-").replace(".", "").isdigit()
    }
    parts = [name for name in rows if not name.startswith(("sum of", "a whole"))]
    assert len(parts) == 6, rows
    # Every part but `one-time` is CPU between two marks of one process: never below zero.
    # `one-time` is the first report's least less the second's, tens of ms.
    assert all(rows[name] >= 0 for name in parts if not name.startswith("one-time")), rows
    big = ("interpreter start", "numpy's import", "the trace's own work", "one-time")
    assert all(rows[name] > 0 for name in parts if name.startswith(big)), rows
    whole = rows["a whole cold report, measured (its process)"]
    assert 0.5 * whole < rows["sum of the parts"] < 2 * whole


def test_profile_times_a_buffered_args_spill() -> None:
    """`bench/profile.py` on a corpus trace whose args spill to a temporary file (over
    256 KB on disk, under the size written direct): the spill's writes have their row."""
    trace = SHARED / "corpus" / "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0"
    trace = trace / "worker0.1623143089861.pt.trace.json.gz"
    if not trace.is_file():
        corpus_missing(str(trace.relative_to(SHARED)))
    cmd = [sys.executable, str(REPO / "bench" / "profile.py"), str(trace), "--no-reference"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in proc.stdout.splitlines() if "args spill write" in line]
    assert len(rows) == 1, proc.stdout
    assert float(rows[0].split("|")[2]) > 0, rows[0]


def test_batch_probe_times_each_stage_both_ways(tmp_path: Path) -> None:
    """`bench/batch_probe.py` on a small job of process groups: every stage timed one rank
    at a time and as one table (positive CPU), in a table of the stages it names."""
    cmd = [sys.executable, str(REPO / "bench" / "batch_probe.py"), "--layout", "2x1x4"]
    cmd += ["--steps", "2", "--ranks", "4", "--rounds", "2", "--work", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.strip("|").split("|") for line in proc.stdout.splitlines()[3:]]
    stages = [cells[0].strip() for cells in rows]
    assert stages[0] == "read" and "rank graph and anchors (critical path)" in stages, proc.stdout
    assert len(stages) == 9, proc.stdout
    for cells in rows:
        assert float(cells[1]) > 0 and float(cells[2]) > 0, proc.stdout


def test_batch_split_reads_ranks_as_one_and_splits_them_into_their_own_models(
    tmp_path: Path,
) -> None:
    """`bench/batch_split.py` on a small job of process groups: each rank's model split
    from the joined read is its own model (none differs), and both ways are timed."""
    cmd = [sys.executable, str(REPO / "bench" / "batch_split.py"), "--layout", "2x1x4"]
    cmd += ["--steps", "2", "--ranks", "4", "--rounds", "2", "--work", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    timed = {line.split(":")[0].strip(): line.split(":")[1] for line in lines if ":" in line}
    assert float(timed["read one by one"]) > 0, proc.stdout
    assert float(timed["joined, read as one and split"]) > 0, proc.stdout
    assert float(timed["of which the split"]) > 0, proc.stdout
    assert "split models that differ from the rank's own: 0 of 4" in lines, proc.stdout


def test_batch_separable_names_the_steps_as_what_a_batch_merges(tmp_path: Path) -> None:
    """`bench/batch_separable.py` on a small job of process groups: every stage but the
    steps gives each rank its own answer from the batch; the steps are merged by name."""
    cmd = [sys.executable, str(REPO / "bench" / "batch_separable.py"), "--layout", "2x1x4"]
    cmd += ["--steps", "2", "--ranks", "4", "--work", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = dict(
        (cells[0].strip(), cells[1].strip())
        for cells in (line.strip("|").split("|") for line in proc.stdout.splitlines()[1:])
    )
    assert rows.pop("steps") == "2 steps together, 8 alone: ProfilerStep#N is one step by name"
    assert set(rows) == {
        "trace vendor",
        "untrusted rows",
        "kernel classes",
        "GPU work and launches",
        "host ranges",
        "collectives' args",
    }, proc.stdout
    assert set(rows.values()) == {"yes"}, proc.stdout


def test_rank_floor_counts_a_ranks_calls_and_the_floor_they_imply(tmp_path: Path) -> None:
    """`bench/rank_floor.py` on a small job of process groups: each tier's CPU and calls a
    rank (numpy's among them), the read floor of every rank, and a floor that is the read
    floor's wall plus the numpy calls' time over the workers."""
    cmd = [sys.executable, str(REPO / "bench" / "rank_floor.py"), "--layout", "2x1x4"]
    cmd += ["--steps", "2", "--ranks", "4", "--rounds", "1", "--work", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("8 ranks, 2 workers"), proc.stdout
    call_us = float(lines[1].split(":")[1].split()[0])
    read_wall = float(lines[2].split(",")[1].split()[0])
    rows = {
        cells[0].strip(): [float(c) for c in cells[1:]]
        for cells in (line.strip("|").split("|") for line in lines[5:])
    }
    assert set(rows) == {"Distributed view", "what-if, GEMM x0.5"}, proc.stdout
    for cpu_ms, total, numpy, floor in rows.values():
        assert cpu_ms > 0 and 0 < numpy < total, proc.stdout
        assert floor == pytest.approx(read_wall + 8 * numpy * call_us * 1e-6 / 2, abs=0.011)
    # the what-if builds and reduces each rank's graph on top of what both read
    assert rows["what-if, GEMM x0.5"][1] > rows["Distributed view"][1], proc.stdout
