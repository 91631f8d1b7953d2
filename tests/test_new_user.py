"""What a new user trips on in the new rooms (the text doors): `kinetoscope report` prints
the critical path's chain and the top gains in text, not only the run's header; `whatif`
text sums its path per name instead of listing raw segments."""

from __future__ import annotations

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
    longest = [
        line for line in out[out.index("longest on it:") :].splitlines()[1:] if line[:2] == "  "
    ]
    keys = [re.sub(r"\s+\d+\.\d{3}\s+", " ", line).split(" (")[0] for line in longest]
    assert longest and len(keys) == len(set(keys))  # one line a rank, kind and name
