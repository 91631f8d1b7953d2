"""What a new user trips on in the new rooms (the text doors): `kinetoscope report` prints
the critical path's chain and the top gains in text, not only the run's header; `whatif`
text sums its path per name instead of listing raw segments."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

import pytest
from kinetoscope.cli.main import main

DATA = Path(__file__).parent / "data" / "whatif_gloo" / "baseline"


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "logs" / "job")
    return tmp_path / "logs"


@pytest.mark.parametrize("view", ["critical_path", "run_critical_path"])
def test_report_text_prints_the_chain(
    logdir: Path, view: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(logdir), "--view", view, "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Critical path (" in out and "mean step" in out
    assert "the chain that set ProfilerStep#" in out
    chain = out[out.index("the chain that set") :].splitlines()[1:4]
    assert any("whatif::compute" in line for line in chain)


def test_report_text_prints_the_top_gains(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(logdir), "--view", "run_top_gains", "--no-cache"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("op ")]
    assert lines and lines[0].split()[1] == "whatif::compute"


def test_whatif_text_sums_its_path_by_name(
    logdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["whatif", str(logdir), "--op", "whatif::update", "--factor", "2", "--no-cache"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "step time (mean of" in out and "over the span" in out
    after = out[out.index("longest on it:") :].splitlines()[1:]
    longest = list(itertools.takewhile(lambda line: line[:2] == "  ", after))
    keys = [re.sub(r"\s+\d+\.\d{3}\s+", " ", line).split(" (")[0] for line in longest]
    assert longest and len(keys) == len(set(keys))  # one line a rank, kind and name


@pytest.mark.parametrize("shapes", [True, False])
def test_one_step_time_in_every_view(tmp_path: Path, shapes: bool) -> None:
    """A serving trace (no ProfilerStep: the whole trace is its step) and a training one:
    the Overview's average step is the critical path's, what-if's and top gains' step."""
    from critical_path_jobs import host_bound_trace
    from kinetoscope.analysis.critical_path.span import critical_path_view, top_gains_view
    from kinetoscope.analysis.overview.view import overview
    from serving_v1_jobs import CUDA, vllm_v1_trace

    for i, trace in enumerate([vllm_v1_trace(CUDA, shapes), host_bound_trace()]):
        (tmp_path / str(i)).mkdir()
        model = trace.model(tmp_path / str(i))
        step = overview(model)["average_step_us"]
        assert critical_path_view(model, {})["step_us"] == pytest.approx(step, abs=1e-3)
        assert top_gains_view(model, {})["baseline_step_us"] == pytest.approx(step, abs=1e-3)


def test_what_bounds_a_prediction_is_said(tmp_path: Path) -> None:
    """A kernel that started long after its launch for a reason the trace does not show
    (a stream wait that could not be placed): the what-if says its share bounds the gain."""
    from critical_path_default_jobs import SEND_RECV, send_recv_trace
    from kinetoscope.analysis.critical_path.span import whatif_view

    t = send_recv_trace(sync_events=False)
    t.events = [e for e in t.events if e["name"] not in ("cudaEventRecord", "cudaStreamWaitEvent")]
    view = whatif_view(t.model(tmp_path), {"kernel": SEND_RECV, "factor": 0.5})
    assert view["saving_us"] == 0.0  # the wait is unknown: nothing moves mlp
    assert view["bound_by"] and "launch delay" in view["bound_by"][0]


def test_check_strict_passes_the_repositorys_own_compile_samples() -> None:
    """torch.compile's `_data: compile_id=` metadata ranges cross their phase's range by
    construction: a lane of their own, so the repository's samples are healthy."""
    logs = Path(__file__).parent / "data" / "compile_logs"
    assert main(["check", str(logs), "--strict", "--no-cache"]) == 0
