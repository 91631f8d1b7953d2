"""`kinetoscope report`: the JSON contract, text output, errors, the cache."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.cli.main import EXIT_LOAD, main


def make_logdir(root: Path) -> Path:
    for run in ("r1", "r2"):
        (root / run).mkdir(parents=True)
        t = TraceBuilder()
        t.step(1, 0, 100)
        op = t.op("aten::mm", 10, 50)
        t.launch(20, 5, op, gpu_ts=30, gpu_dur=40)
        t.write(root / run / "worker0.1.pt.trace.json.gz", gz=True)
    return root


def test_json_report_of_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = make_logdir(tmp_path / "logs")
    assert main(["report", str(logdir), "--run", "r1", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "overview" in doc
    overview = doc["overview"]
    assert {"steps", "breakdown_us", "devices", "recommendations"} <= set(overview)
    assert set(overview["breakdown_us"]) == {
        "kernel",
        "memcpy",
        "memset",
        "communication",
        "runtime",
        "dataloader",
        "cpu_exec",
        "other",
    }
    (step,) = overview["steps"]
    assert step["name"] == "ProfilerStep#1" and step["duration_us"] == 100
    assert step["breakdown_us"]["kernel"] == 40


def test_json_report_of_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = make_logdir(tmp_path / "logs")
    assert main(["report", str(logdir), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc["runs"]) == ["r1", "r2"]
    assert "overview" in doc["runs"]["r2"]


def test_one_file_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = make_logdir(tmp_path / "logs")
    assert main(["report", str(logdir / "r1" / "worker0.1.pt.trace.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "Step time breakdown" in out and "ProfilerStep#1" in out


def test_errors_go_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = make_logdir(tmp_path / "logs")
    (logdir / "bad").mkdir()
    (logdir / "bad" / "w.1.pt.trace.json").write_text("not json")
    assert main(["report", str(logdir), "--format", "json"]) != 0
    captured = capsys.readouterr()
    assert "not JSON" in captured.err
    runs = json.loads(captured.out)["runs"]
    assert sorted(runs) == ["bad", "r1", "r2"]  # the others still print
    assert runs["bad"] == {"status": runs["bad"]["status"]}  # only what went wrong
    assert runs["bad"]["status"]["state"] == "error"
    assert runs["bad"]["status"]["error"]["kind"] == "not_json"
    assert runs["r1"]["status"]["state"] == "ready" and not runs["r1"]["status"]["partial"]
    assert main(["report", str(tmp_path / "missing")]) != 0
    assert main(["report", str(logdir), "--run", "nope"]) != 0
    assert "no run named 'nope'" in capsys.readouterr().err


def test_cache_is_used_and_can_be_bypassed(
    tmp_path: Path, _isolated_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = make_logdir(tmp_path / "logs")
    assert main(["report", str(logdir), "--run", "r1", "--format", "json", "--no-cache"]) == 0
    assert list(_isolated_cache.iterdir()) == []
    assert main(["report", str(logdir), "--run", "r1", "--format", "json"]) == 0
    (entry,) = [p for p in _isolated_cache.iterdir() if not p.name.startswith(".")]
    assert (entry / "meta.json").exists()
    assert any((entry / "views").iterdir())
    first = capsys.readouterr().out.splitlines()
    assert main(["report", str(logdir), "--run", "r1", "--format", "json"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == first[-1]


def test_python_dash_m(tmp_path: Path) -> None:
    logdir = make_logdir(tmp_path / "logs")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kinetoscope",
            "report",
            str(logdir),
            "--run",
            "r2",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout)["overview"]["step_count"] == 1


def test_json_report_says_a_trace_is_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = make_logdir(tmp_path / "logs")
    path = logdir / "r1" / "worker0.1.pt.trace.json.gz"
    text = gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(text[: len(text) - 40]))  # cut inside the last event
    assert main(["report", str(logdir), "--run", "r1", "--format", "json"]) == 0
    captured = capsys.readouterr()
    status = json.loads(captured.out)["status"]
    assert status["state"] == "ready" and status["partial"]
    assert any("not closed" in w for w in status["warnings"])
    assert "partial trace" in captured.err


def test_a_rank_left_out_of_the_distributed_view_fails_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = make_logdir(tmp_path / "logs")
    (logdir / "r1" / "worker1.1.pt.trace.json").write_text("not json")
    assert main(["report", str(logdir), "--run", "r1", "--format", "json"]) == EXIT_LOAD
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["status"]["state"] == "ready"  # worker0, the one reported, is fine
    (error,) = doc["distributed"]["errors"]
    assert error["worker"] == "worker1" and error["kind"] == "not_json"
    assert "not JSON" in captured.err


def test_a_view_that_names_nothing_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The grammar imports no view (the trace starts loading first); the names are checked
    # after, with argparse's words and status.
    logdir = make_logdir(tmp_path / "logs")
    assert main(["report", str(logdir), "--run", "r1", "--view", "overveiw"]) == 2
    err = capsys.readouterr().err
    assert "argument --view: invalid choice: 'overveiw'" in err and "operators" in err
    assert (
        main(["report", str(logdir), "--run", "r1", "--view", "kernels", "--format", "json"]) == 0
    )
    assert set(json.loads(capsys.readouterr().out)) == {"status", "kernels"}


def test_the_grammar_names_what_the_views_take() -> None:
    from kinetoscope.analysis.flamegraph.view import METRICS
    from kinetoscope.analysis.operators.view import GROUP_BY
    from kinetoscope.cli.parser import DIFF_GROUP_BY, FLAME_METRICS

    assert DIFF_GROUP_BY == GROUP_BY
    assert FLAME_METRICS == METRICS


def test_the_report_starts_reading_before_the_views_import(tmp_path: Path) -> None:
    # A fresh interpreter: the command's grammar and the store come without the view
    # registry, so the trace is read while the views' modules import. The text tables and
    # frame fields the doors share with the views' own text and frames are no view's.
    shared = {
        "kinetoscope.analysis",
        "kinetoscope.analysis.core",
        "kinetoscope.analysis.core.text_tables",
        "kinetoscope.analysis.core.frame_fields",
    }
    imported = _modules_after_import("kinetoscope.cli.main")
    assert not [m for m in imported if ".analysis" in m and m not in shared]


def test_the_report_imports_only_what_one_traces_views_need() -> None:
    # The registry names the other routes' modules lazily (registry.Lazy): a report of
    # one trace never imports the trace view's, the Diff's, the trend's or a snapshot's.
    imported = _modules_after_import("kinetoscope.cli.report")
    for module in (
        "kinetoscope.trace_view.window_query",
        "kinetoscope.trace_view.event_details",
        "kinetoscope.analysis.diff.view",
        "kinetoscope.analysis.trends.view",
        "kinetoscope.analysis.distributed.rank_summaries",
        "kinetoscope.analysis.memory.snapshot_view",
    ):
        assert module not in imported, module


def _modules_after_import(module: str) -> list[str]:
    """The product's modules a fresh interpreter holds after importing `module`."""
    code = f"import sys, {module}; print(*(n for n in sys.modules if n.startswith('kinetoscope')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return run.stdout.split()


@pytest.mark.parametrize("command", ["report", "diff", "check", "trend", "flamegraph"])
def test_every_command_prints_its_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    # argparse formats help texts with %: a bare % in one (trend's --floor-pct) crashed --help.
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    assert f"usage: kinetoscope {command}" in capsys.readouterr().out


def test_cold_report_imports_no_numpy_ma(tmp_path: Path) -> None:
    """A cold report of a trace with kernels, steps and memory events of two devices
    computes every view without numpy.ma (~10 ms of imports that `np.unique` without
    `return_*` and `np.isin` pull in): the views find distinct values with
    `common.distinct`."""
    (tmp_path / "logs" / "r1").mkdir(parents=True)
    t = TraceBuilder()
    t.step(1, 0, 100)
    op = t.op("aten::mm", 10, 50)
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=40)
    t.memory(12, 512, 1 << 33, 512)
    t.memory(14, 256, 1 << 34, 256, device_type=0, device_id=-1)
    t.write(tmp_path / "logs" / "r1" / "worker0.1.pt.trace.json.gz", gz=True)
    code = (
        "import sys\n"
        "from kinetoscope.cli.main import main\n"
        "rc = main(['report', sys.argv[1], '--format', 'json', '--no-cache'])\n"
        "print(rc, 'numpy.ma' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
    )
    assert {"overview", "memory", "kernels", "health"} <= set(json.loads(done.stdout))
    assert done.stderr.split()[-2:] == ["0", "False"]


def test_the_reported_rank_unreadable_hides_no_other_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rank a report reads for its span (worker0) cannot be read: the report says so
    and fails, and the run's views still answer from the other ranks, listing it."""
    logdir = make_logdir(tmp_path / "logs")
    good = logdir / "r1" / "worker0.1.pt.trace.json.gz"
    good.rename(logdir / "r1" / "worker1.1.pt.trace.json.gz")
    good.write_text("not json")
    argv = ["report", str(logdir), "--run", "r1", "--view", "distributed"]
    assert main([*argv, "--format", "json"]) == EXIT_LOAD
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["status"]["error"]["kind"] == "not_json"
    assert [r["worker"] for r in doc["distributed"]["ranks"]] == ["worker1"]
    (error,) = doc["distributed"]["errors"]
    assert error["worker"] == "worker0" and error["kind"] == "not_json"
    assert main(argv) == EXIT_LOAD
    captured = capsys.readouterr()
    assert "Distributed (1 ranks" in captured.out and "not JSON" in captured.err
