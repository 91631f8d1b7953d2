"""The serving view through every door: `kinetoscope report` (JSON and text; in the
default report only for traces with engine markers), the notebook's frames, the MCP tool,
on the recorded serving traces and a training one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.serving import serving
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.mcp.tools import tools

SERVING_DATA = Path(__file__).parent / "data" / "serving"


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "serve").mkdir(parents=True)
    shutil.copy(
        SERVING_DATA / "tp2" / "rank0.pt.trace.json.gz", root / "serve" / "rank0.pt.trace.json.gz"
    )
    shutil.copy(
        SERVING_DATA / "tp2" / "rank1.pt.trace.json.gz", root / "serve" / "rank1.pt.trace.json.gz"
    )
    (root / "train").mkdir()
    t = TraceBuilder()
    t.step(1, 0, 100)
    op = t.op("aten::mm", 10, 50)
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=40)
    t.write(root / "train" / "worker0.1.pt.trace.json")
    return root


def test_report_json_has_the_view_of_serving_traces_only(
    logdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(logdir), "--run", "serve", "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = serving(build_model(str(logdir / "serve" / "rank0.pt.trace.json.gz")))
    assert doc["serving"] == json.loads(json.dumps(expected))
    assert main(["report", str(logdir), "--run", "train", "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "serving" not in doc and "overview" in doc


def test_report_text(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["report", str(logdir), "--run", "serve", "--worker", "rank1", "--view", "serving"])
        == 0
    )
    text = capsys.readouterr().out
    assert "Serving iterations (7 from sglang's annotations, rank 1 of 2)" in text
    assert "decode: per output token ~" in text and "(median decode iteration" in text
    # Asked of a training trace: why there are none.
    assert main(["report", str(logdir), "--run", "train", "--view", "serving"]) == 0
    text = capsys.readouterr().out
    assert "no serving engine markers" in text and "1 ProfilerStep steps" in text


def test_notebook_frames(logdir: Path) -> None:
    import kinetoscope as ks

    with ks.open(logdir, run="serve") as run:
        trace = run.trace("rank1")
        iterations = trace.iterations()
        phases = trace.serving_phases()
        by_name = trace.frame("serving_phases")  # the frame the view's folder names
        with pytest.raises(ValueError, match="no view gives a frame named 'nope'"):
            trace.frame("nope")
    assert by_name.equals(phases)
    assert iterations["phase"].tolist() == [
        "prefill", "decode", "decode", "decode", "mixed", "decode", "decode",
    ]  # fmt: skip
    assert iterations["collective_calls"].tolist() == [2] * 7
    assert iterations.attrs["rank"] == 1 and iterations.attrs["engine"] == "sglang"
    assert phases.index.tolist() == ["prefill", "decode", "mixed"]
    assert phases.loc["decode", "count"] == 5 and phases.loc["decode", "tokens"] == 12
    assert phases.loc["decode", "collective_types.all_reduce"] == 10


def test_mcp_tool() -> None:
    tool = tools()["serving"]
    assert tool.input_schema["required"] == ["run"]
    assert {"iterations", "phases", "reason"} <= set(tool.output_schema["properties"])
    assert "prefill, decode, mixed" in tool.description


def test_agents_doc_lists_every_tool() -> None:
    """docs/agents.md names every tool, with their count, and its worked session's
    `tools/list` answer is the server's list."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text()
    paragraph = text[text.index("One tool per JSON route") : text.index("; a route added")]
    named = re.findall(r"`(\w+)`", paragraph)
    assert sorted(named) == sorted(tools()) and f"{len(tools())} of them" in paragraph
    listed = text[text.index("← runs, workers") :].split("\n\n")[0]
    assert re.findall(r"\w+", listed.removeprefix("← ")) == list(tools())
