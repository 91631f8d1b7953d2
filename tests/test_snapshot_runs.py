"""Memory snapshots found with their run (discovery, the `runs` listing), the
`memory_snapshot` route through TensorBoard's app, `kinetoscope report` and the notebook."""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from kinetoscope.cli.main import main
from kinetoscope.ingest.discovery import scan_logdir, target_runs
from kinetoscope.notebook.run import open_run
from python_api_compare import assert_rows
from snapshot_builders import known_snapshot


def _logdir(root: Path) -> Path:
    both = root / "both"
    both.mkdir(parents=True)
    t = TraceBuilder()
    t.op("aten::mm", 10, 50)
    t.write(both / "worker0.1.pt.trace.json")
    known_snapshot().write(both / "snapshot.pickle")
    (both / "broken.pkl").write_bytes(b"\x80\x04\x95 segments and then nothing")
    (both / "checkpoint.pkl").write_bytes(pickle.dumps({"weights": [1, 2]}, protocol=4))
    only = root / "only_snapshot"
    only.mkdir()
    known_snapshot().write(only / "oom.pickle", protocol=2)
    return root


def test_snapshots_are_listed_with_their_run(tmp_path: Path) -> None:
    runs = {r.name: r for r in scan_logdir(str(_logdir(tmp_path)))}
    assert set(runs) == {"both", "only_snapshot"}
    # The checkpoint pickle names no snapshot key: not listed.
    assert [s.file for s in runs["both"].snapshots] == ["broken.pkl", "snapshot.pickle"]
    assert [w.name for w in runs["both"].workers] == ["worker0"]
    assert runs["only_snapshot"].workers == ()
    assert [s.file for s in runs["only_snapshot"].snapshots] == ["oom.pickle"]
    (one,) = target_runs(str(tmp_path / "only_snapshot" / "oom.pickle"))
    assert [s.file for s in one.snapshots] == ["oom.pickle"]


def _wait_json(client: Any, route: str, **params: Any) -> Any:
    deadline = time.monotonic() + 60
    while True:
        response = client.get(route, **params)
        if response.status_code != 202:
            assert response.status_code == 200, response.get_data(as_text=True)
            return response.get_json()
        assert time.monotonic() < deadline, "still loading"
        time.sleep(0.05)


def test_route(tmp_path: Path, plugin_client: Any) -> None:
    client = plugin_client(_logdir(tmp_path))
    listing = {r["name"]: r for r in client.json("runs")["runs"]}
    assert "memory_snapshot" in listing["both"]["views"]
    assert listing["only_snapshot"]["workers"] == []
    assert listing["only_snapshot"]["snapshots"][0]["file"] == "oom.pickle"
    view = _wait_json(client, "memory_snapshot", run="both")
    files = {s["file"]: s for s in view["snapshots"]}
    assert "damaged or truncated" in files["broken.pkl"]["error"]
    assert files["broken.pkl"]["devices"] == []
    good = files["snapshot.pickle"]
    assert good["error"] is None
    assert [d["peak_allocated_bytes"] for d in good["devices"]] == [832, None]
    # The built trace has relative times and no baseTimeNanoseconds.
    assert good["alignment"]["state"] == "unknown"
    alone = _wait_json(client, "memory_snapshot", run="only_snapshot")
    assert alone["snapshots"][0]["alignment"] is None
    assert client.get("memory_snapshot", run="nope").status_code == 404


def test_report_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = _logdir(tmp_path)
    assert main(["report", str(logdir), "--run", "only_snapshot", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (snapshot,) = doc["memory_snapshot"]["snapshots"]
    device = snapshot["devices"][0]
    assert {k: device[k] for k in ("peak_allocated_bytes", "reserved_bytes", "oom_count")} == {
        "peak_allocated_bytes": 832,
        "reserved_bytes": 9216,
        "oom_count": 1,
    }
    assert main(["report", str(logdir), "--run", "both"]) == 0
    text = capsys.readouterr().out
    assert "memory snapshot snapshot.pickle" in text
    assert "largest stacks at the peak" in text and "alloc_c (model.py:10)" in text
    assert "error: damaged or truncated" in text


def test_notebook(tmp_path: Path) -> None:
    with open_run(str(_logdir(tmp_path) / "both"), cache=False) as run:
        assert run.snapshot_files == ("broken.pkl", "snapshot.pickle")
        frame = run.memory_snapshots()
        view = run.memory_snapshot_view()
    # Row per file and device, every leaf of the route's JSON under its dotted name.
    json_rows = [
        {"file": s["file"], "error": s["error"], **d, "alignment": s["alignment"]}
        for s in view["snapshots"]
        for d in s["devices"]
    ]
    good = frame[frame["error"].isna()].reset_index(drop=True)
    assert_rows(good, json_rows)
    rows = frame.set_index(["file", "device"], drop=False)
    assert rows.loc[("snapshot.pickle", 0), "peak_allocated_bytes"] == 832
    assert rows.loc[("snapshot.pickle", 0), "allocated_bytes_at_snapshot"] == 620
    assert rows.loc[("snapshot.pickle", 0), "oom_count"] == 1
    broken = frame[frame["file"] == "broken.pkl"]
    assert len(broken) == 1 and "damaged" in broken["error"].iloc[0]


def test_report_text_writes_an_oom_in_binary_units(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real H100 snapshot's OOM asked 32 TiB: the text says so, as the page does, not
    33554432.0 in a MiB column."""
    data = Path(__file__).parent / "data" / "h100" / "memory_snapshot"
    assert (
        main(
            [
                "report",
                str(data.parent),
                "--run",
                "memory_snapshot",
                "--view",
                "memory_snapshot",
                "--no-cache",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    oom = text.split("out of memory:")[1].splitlines()
    assert oom[1].split()[:4] == ["device", "asked", "device", "free"]
    assert oom[3].split()[1:3] == ["32.00", "TiB"]
    assert "33554432" not in text
