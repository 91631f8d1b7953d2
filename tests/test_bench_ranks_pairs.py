"""`bench/ranks.py --pairs`: a run-level view measured against the Distributed view in
alternating rounds. It runs end to end on a small job of process groups, and its summary
(medians, the median of the rounds' ratios) is computed again here from its own rows."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # the product in its own processes, each pool spawned


def test_pairs_alternate_and_summarise_their_rounds(tmp_path: Path) -> None:
    out = tmp_path / "paired.json"
    cmd = [sys.executable, str(REPO / "bench" / "ranks.py"), "--layout", "2x1x4"]
    cmd += ["--layout-steps", "4", "--modes", "in-process", "--view", "run_critical_path"]
    cmd += ["--pairs", "3", "--work", str(tmp_path / "work"), "--out", str(out)]
    cmd += ["--python", sys.executable]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    rows = results["rows"]
    order = [(r["round"], r["view"]) for r in rows]
    assert order == [
        (0, "distributed"),
        (0, "run_critical_path"),
        (1, "run_critical_path"),
        (1, "distributed"),
        (2, "distributed"),
        (2, "run_critical_path"),
    ]
    assert all("error" not in r and r["seconds"] > 0 and r["cpu_seconds"] > 0 for r in rows)

    def of(view: str, key: str) -> list[float]:
        return [r[key] for r in sorted(rows, key=lambda r: r["round"]) if r["view"] == view]

    paired = results["paired"]
    assert paired["rounds"] == 3
    for key in ("seconds", "cpu_seconds"):
        anchor, view = of("distributed", key), of("run_critical_path", key)
        assert paired["distributed"][key] == statistics.median(anchor)
        assert paired["run_critical_path"][key] == statistics.median(view)
        ratios = [v / a for v, a in zip(view, anchor)]
        assert paired[f"ratio_{key}"] == statistics.median(ratios)
    assert "run_critical_path / distributed" in proc.stdout
