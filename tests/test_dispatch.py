"""The one door protocol (issue 45): `api.dispatch` answers every door the same body as
the route, Pending while a trace loads (with the route's 202 body) and Ready after, its
bounded wait gives up with Pending; run-level views take one `RunContext`; the MCP
session lists the logdir at most every KINETOSCOPE_RESCAN_SECONDS."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import TraceBuilder, rank_job
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.api.dispatch import Dispatch, Failed, Pending, Ready, dispatch
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.failures import NOT_FOUND
from kinetoscope.api.session import FixedListing, RescannedListing, Session
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext


def one_run(root: Path, name: str = "run") -> Path:
    t = TraceBuilder()
    t.step(1, 0.0, 200)
    op = t.op("aten::mm", 10.0, 30)
    t.launch(11.0, 3, op, gpu_ts=15.0, gpu_dur=20)
    (root / name).mkdir(parents=True)
    t.write(root / name / "worker0.1.pt.trace.json")
    return root


def session_of(root: Path) -> Session:
    return Session(FixedListing(scan_logdir(str(root))), cache=False)


NAMES = {"run": "run", "worker": "worker0"}


def test_pending_while_loading_then_ready_with_the_routes_body(
    tmp_path: Path, held_loads: threading.Event, plugin_client: Any
) -> None:
    root = one_run(tmp_path / "logs")
    session = session_of(root)
    try:
        call = Dispatch(ENDPOINTS["operators"], session, NAMES, {})
        first = call.answer()
        assert isinstance(first, Pending)
        assert first.body["state"] == "loading" and first.body["run"] == "run"
        assert isinstance(call.wait(0.2), Pending)  # the bound given up, not the load
        held_loads.set()
        ready = call.ready(30)
        client = plugin_client(root)
        client.wait_ready("run", "worker0")
        route = client.get("operators", **NAMES)
        assert route.status_code == 200
        assert msgspec.json.decode(ready.body) == route.get_json()
        assert [t.span.file for t in call.targets] == ["worker0.1.pt.trace.json"]
    finally:
        session.close()


def test_a_failure_is_returned_with_the_routes_kind_and_message(tmp_path: Path) -> None:
    session = session_of(one_run(tmp_path / "logs"))
    try:
        failed = dispatch(ENDPOINTS["operators"], session, {"run": "nope"}, {})
        assert isinstance(failed, Failed)
        assert failed.failure.kind == NOT_FOUND
        assert failed.failure.message == "no run named 'nope' (known: run)"
    finally:
        session.close()


def test_a_run_job_through_the_dispatcher_is_the_run_view(tmp_path: Path) -> None:
    rank_job(tmp_path / "logs" / "job", 2, steps=2, kernels_per_step=3)
    session = session_of(tmp_path / "logs")
    try:
        ready = Dispatch(ENDPOINTS["distributed"], session, {"run": "job"}, {}).ready(60)
        assert isinstance(ready, Ready)
        (run,) = scan_logdir(str(tmp_path / "logs"))
        direct = analyze_run(RunContext.of(run))
        assert ready.json() == msgspec.json.decode(msgspec.json.encode(direct))
        with pytest.raises(ValueError, match="one run"):
            analyze_run(RunContext((run, run)))
    finally:
        session.close()


def test_the_mcp_listing_is_rescanned_at_most_every_interval(tmp_path: Path) -> None:
    root = one_run(tmp_path / "logs")
    slow = RescannedListing(str(root), interval_s=3600)
    fresh = RescannedListing(str(root), interval_s=0)
    assert [r.name for r in slow.runs()] == [r.name for r in fresh.runs()] == ["run"]
    one_run(root, "later")
    time.sleep(0.01)
    assert [r.name for r in slow.runs()] == ["run"]  # not listed again within the interval
    assert [r.name for r in fresh.runs()] == ["later", "run"]
