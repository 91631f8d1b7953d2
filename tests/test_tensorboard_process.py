"""A real `tensorboard` process, started from the installed package, lists the plugin."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

from builders import TraceBuilder
from tensorboard_launch import TensorBoard


def get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_real_tensorboard_lists_and_serves_the_plugin(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    (logdir / "run").mkdir(parents=True)
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.write(logdir / "run" / "worker0.1.pt.trace.json.gz", gz=True)
    tb = TensorBoard(str(logdir), dict(os.environ, KINETOSCOPE_CACHE_DIR=str(tmp_path / "cache")))
    try:
        deadline = time.monotonic() + 60
        listing: dict = {}
        while time.monotonic() < deadline:
            try:
                listing = get_json(f"{tb.base}/data/plugins_listing")  # type: ignore[assignment]
                break
            except OSError:
                assert tb.running(), tb.output()
                time.sleep(0.3)
        entry = listing["kinetoscope"]
        assert entry["enabled"] is True
        assert entry["tab_name"] == "PyTorch Profiler"
        assert (
            entry["loading_mechanism"]["module_path"] == "/data/plugin/kinetoscope/static/index.js"
        )
        runs = get_json(f"{tb.base}/data/plugin/kinetoscope/runs")
        assert runs["runs"][0]["name"] == "run"  # type: ignore[index]
    finally:
        tb.stop()
