"""Operator rows of ops that only captured a replayed CUDA/HIP graph (calls 0): every key
of the row schema, null roofline fields, `replayed_us`, and through the doors that broke
on them: the text report (a KeyError on `tflops` stopped the logdir's report) and the MCP
`operators` tool (its output schema requires every key)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, get_type_hints

import jsonschema
import pytest
from builders import TraceBuilder
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import OperatorRow, operators
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import capture_files
from kinetoscope.mcp.tools import output_schema
from test_graph_replay import capture, hip, replay, with_captures

ROW_KEYS = set(get_type_hints(OperatorRow)) - {"input_shape", "captured_at"}  # total=False
ROOF_KEYS = ("flops", "bytes", "tflops", "gbps", "intensity", "pct_of_peak", "bound", "dtype")


def _logdir(root: Path) -> Path:
    """Run `serve`: a capture trace (aten::mm, aten::relu) and a trace replaying it twice
    under `execute` (kernels of 4 µs); run `train`: one plain op and its kernel."""
    folder = root / "serve"
    (folder / "capture_traces").mkdir(parents=True)
    cap = TraceBuilder()
    capture(cap, 0, [("aten::mm", hip("gemm")), ("aten::relu", hip("relu"))])
    cap.write(folder / "capture_traces" / "graph_capture_rank_0.1.pt.trace.json")
    run = TraceBuilder()
    run.op("execute", 0, 100, cat="user_annotation")
    end = replay(run, 10, [("gemm", {}), ("relu", {})])
    replay(run, end, [("gemm", {}), ("relu", {})])
    run.write(folder / "worker0.2.pt.trace.json")
    train = TraceBuilder()
    ext = train.op("aten::add", 0, 10)
    train.launch(2, 1, ext, gpu_ts=5, gpu_dur=3, name="add_kernel")
    (root / "train").mkdir()
    train.write(root / "train" / "worker0.3.pt.trace.json")
    return root


def _serve_operators(root: Path, group_by: str = "name") -> Any:
    path = str(root / "serve" / "worker0.2.pt.trace.json")
    model = with_captures(build_model(path), *[build_model(p) for p in capture_files(path)])
    return operators(model, group_by)


@pytest.mark.parametrize("group_by", ["name", "shape"])
def test_replayed_rows_carry_every_key(tmp_path: Path, group_by: str) -> None:
    view = _serve_operators(_logdir(tmp_path), group_by)
    rows = {r["name"]: r for r in view["rows"]}
    assert set(rows) == {"execute", "aten::mm", "aten::relu"}
    for row in view["rows"]:
        assert set(row) >= ROW_KEYS, row["name"]
    mm = rows["aten::mm"]
    assert mm["calls"] == 0 and mm["host_self_us"] == 0.0 and mm["host_total_us"] == 0.0
    assert mm["device_self_us"] == mm["device_total_us"] == mm["replayed_us"] == 8.0
    assert all(mm[k] is None for k in ROOF_KEYS)
    assert rows["execute"]["replayed_us"] == 0.0
    assert rows["execute"]["device_self_us"] == 0.0 and rows["execute"]["device_total_us"] == 16.0
    schema = output_schema(ENDPOINTS["operators"])
    jsonschema.validate({**view, "page": {}, "provenance": {}}, schema)


def test_the_kernels_view_of_a_replay_fits_its_schema(tmp_path: Path) -> None:
    root = _logdir(tmp_path)
    path = str(root / "serve" / "worker0.2.pt.trace.json")
    model = with_captures(build_model(path), *[build_model(p) for p in capture_files(path)])
    view = kernels(model, "op")
    assert view["graph_replay"] is not None and view["graph_replay"]["unmatched"] == []
    schema = output_schema(ENDPOINTS["kernels"])
    jsonschema.validate({**view, "page": {}, "provenance": {}}, schema)


def test_text_report_goes_on_past_replayed_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _logdir(tmp_path)
    assert main(["report", str(root), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "graph replay: 4 kernels, 4 matched to their capture" in out
    assert "replayed: device time of kernels replayed from a CUDA/HIP graph captured" in out
    assert "add_kernel" in out  # the next run is reported too


def test_mcp_operators_tool_passes_the_clients_schema_check(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = _logdir(tmp_path / "logs")
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "kinetoscope", "mcp", str(root)], env=env
    )

    async def run() -> Any:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # the client checks results against these schemas
            return await session.call_tool("operators", {"run": "serve", "limit": 50})

    result = asyncio.run(run())
    assert not result.is_error, result.content
    rows = {r["name"]: r for r in result.structured_content["rows"]}
    assert rows["aten::relu"]["calls"] == 0 and rows["aten::relu"]["tflops"] is None
    assert rows["aten::relu"]["replayed_us"] == 8.0
