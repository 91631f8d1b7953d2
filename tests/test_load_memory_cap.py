"""One load's memory is bounded (issue 27): a small gzip of valid events that would build
gigabytes of columns stops at KINETOSCOPE_LOAD_MEMORY_MB with a clear `too_large` error,
while a neighbour trace loads."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient

EVENT = b'{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 5, "dur": 1}'


def test_a_compressible_bomb_stops_at_the_cap_and_the_neighbour_loads(
    tmp_path: Path,
    plugin_client: Callable[[Path], PluginClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 400k ops without ids hold ~39 bytes of columns a row (their ids sparse): 15.6 MB.
    monkeypatch.setenv("KINETOSCOPE_LOAD_MEMORY_MB", "8")
    monkeypatch.setenv("KINETOSCOPE_NO_CACHE", "1")
    run = tmp_path / "run"
    run.mkdir()
    text = b'{"traceEvents": [' + b",".join([EVENT] * 400_000) + b"]}"
    bomb = gzip.compress(text, 9)
    assert len(bomb) < len(text) // 100  # a small file...
    (run / "bomb.1.pt.trace.json.gz").write_bytes(bomb)
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.write(run / "good.1.pt.trace.json")
    client = plugin_client(tmp_path)
    status = client.wait_ready("run", "bomb")
    assert status["state"] == "error"
    assert status["error"]["kind"] == "too_large"
    assert "KINETOSCOPE_LOAD_MEMORY_MB" in status["error"]["message"]
    assert client.wait_ready("run", "good")["state"] == "ready"
    response = client.get("overview", run="run", worker="bomb")
    assert response.status_code == 422
    # ... that loads whole under a cap it fits in.
    monkeypatch.setenv("KINETOSCOPE_LOAD_MEMORY_MB", "4096")
    (run / "bomb.1.pt.trace.json.gz").write_bytes(gzip.compress(text, 6))
    assert client.wait_ready("run", "bomb", timeout=120)["event_count"] == 400_000


def test_spilled_args_count_against_the_load_memory_cap(tmp_path: Path) -> None:
    """A small gzip whose events carry large args spills them to disk, where the views
    memory-map them: the spill counts with the columns against the load memory cap (the
    issue: a 6 MB gzip wrote 4.1 GB of args and loaded `ready`)."""
    from kinetoscope.ingest.build import build_model
    from kinetoscope.ingest.decode import TraceDecodeError

    big = "x" * (1 << 20)
    events = ",".join(
        f'{{"ph":"X","cat":"cpu_op","name":"op","ts":{i},"dur":1,"pid":1,"tid":1,'
        f'"args":{{"note":"{big}"}}}}'
        for i in range(64)
    )
    path = tmp_path / "args.pt.trace.json.gz"
    path.write_bytes(gzip.compress(f'{{"traceEvents":[{events}]}}'.encode()))
    assert path.stat().st_size < 1 << 20  # 64 MB of args in a small file
    os.environ["KINETOSCOPE_LOAD_MEMORY_MB"] = "32"
    os.environ["KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE"] = "100000"  # a bomb on purpose
    try:
        with pytest.raises(TraceDecodeError) as refused:
            build_model(str(path))
        assert refused.value.kind == "too_large"
        os.environ["KINETOSCOPE_LOAD_MEMORY_MB"] = "256"
        assert build_model(str(path)).events["ts"].size == 64
    finally:
        del os.environ["KINETOSCOPE_LOAD_MEMORY_MB"]
        del os.environ["KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE"]
