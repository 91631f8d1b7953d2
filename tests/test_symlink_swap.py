"""A listed trace swapped for a symbolic link out of the logdir after it was listed and
loaded (issue 44): containment is decided when the file is opened, not at the rescan, so a
real TensorBoard refuses the download and the views at once (no rescan in between), and
so do the notebook and the MCP door; the outside content is never served."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import kinetoscope
import pytest
from builders import TraceBuilder
from kinetoscope.store.errors import LoadFailed
from tensorboard_launch import TensorBoard
from test_tensorboard_process import get_json

SECRET = b"root:x:0:0:SECRET-OUTSIDE-THE-LOGDIR"


def _logdir(tmp_path: Path) -> tuple[Path, Path]:
    """A logdir with one trace, and outside it a decoy of the same size and mtime."""
    trace = tmp_path / "logs" / "run" / "w.1.pt.trace.json"
    trace.parent.mkdir(parents=True)
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.write(trace)
    decoy = tmp_path / "outside" / "passwd"
    decoy.parent.mkdir()
    size = trace.stat().st_size
    decoy.write_bytes((SECRET * (size // len(SECRET) + 1))[:size])
    st = trace.stat()
    os.utime(decoy, ns=(st.st_atime_ns, st.st_mtime_ns))
    return trace, decoy


def _swap(trace: Path, target: Path) -> None:
    """`ln -sfn target trace`: the listed file replaced by a link, atomically."""
    tmp = trace.with_name(".swap")
    tmp.symlink_to(target)
    os.replace(tmp, trace)
    assert trace.stat().st_size == target.stat().st_size  # the decoy looks the same


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _start_tensorboard(tmp_path: Path, logdir: Path) -> tuple[TensorBoard, str]:
    env = dict(
        os.environ,
        KINETOSCOPE_CACHE_DIR=str(tmp_path / "cache"),
        KINETOSCOPE_RESCAN_SECONDS="3600",  # no rescan: the open itself must refuse
    )
    env.pop("KINETOSCOPE_FOLLOW_SYMLINKS", None)
    tb = TensorBoard(str(logdir), env)
    return tb, f"{tb.base}/data/plugin/kinetoscope"


def _wait_ready(base: str, tb: TensorBoard) -> dict:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            status = get_json(f"{base}/status?run=run&worker=w&span=1")
            if status.get("state") == "ready":  # type: ignore[union-attr]
                return status  # type: ignore[return-value]
        except OSError:
            assert tb.running(), tb.output()
        time.sleep(0.3)
    raise AssertionError("the trace never loaded")


def test_real_tensorboard_refuses_a_link_swapped_in_after_listing(tmp_path: Path) -> None:
    trace, decoy = _logdir(tmp_path)
    original = trace.read_bytes()
    tb, base = _start_tensorboard(tmp_path, trace.parent.parent)
    q = "run=run&worker=w&span=1"
    try:
        _wait_ready(base, tb)
        assert _get(f"{base}/download?{q}") == (200, original)
        assert _get(f"{base}/overview?{q}")[0] == 200
        _swap(trace, decoy)
        for route in ("download", "overview", "operators", "kernels", "tracks"):
            code, body = _get(f"{base}/{route}?{q}")
            assert code == 422, (route, code, body[:200])
            assert b"SECRET" not in body
            assert "outside the logdir" in json.loads(body)["error"]["message"], route
        code, body = _get(f"{base}/status?{q}")
        assert code == 200 and b"SECRET" not in body
        assert json.loads(body)["error"]["kind"] == "outside_logdir"
        # The file put back: served again, without a restart.
        trace.unlink()
        trace.write_bytes(original)
        _wait_ready(base, tb)
        assert _get(f"{base}/download?{q}") == (200, original)
    finally:
        tb.stop()


def test_notebook_refuses_a_link_swapped_in_after_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    trace, decoy = _logdir(tmp_path)
    with kinetoscope.open(trace.parent.parent, run="run", cache=False) as run:
        assert len(run.trace("w").model) > 0
        _swap(trace, decoy)
        status = run.trace("w").status()
        assert status["error"]["kind"] == "outside_logdir", status
        with pytest.raises(LoadFailed, match="outside the logdir"):
            _ = run.trace("w").model


def test_a_folder_swapped_for_a_link_out_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder above the trace replaced by a link to a folder outside holding a trace
    of the same name: the open checks the whole path, not the last name only."""
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    trace, _ = _logdir(tmp_path)
    theirs = tmp_path / "outside" / "theirs"
    theirs.mkdir()
    (theirs / trace.name).write_bytes(trace.read_bytes())
    with kinetoscope.open(trace.parent.parent, run="run", cache=False) as run:
        assert len(run.trace("w").model) > 0
        os.rename(trace.parent, tmp_path / "moved")
        trace.parent.symlink_to(theirs, target_is_directory=True)
        with pytest.raises(LoadFailed, match="outside the logdir"):
            _ = run.trace("w").model


def test_mcp_refuses_a_link_swapped_in_after_loading(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from test_mcp import with_session

    trace, decoy = _logdir(tmp_path)
    args = {"run": "run", "worker": "w"}

    async def work(session: Any) -> Any:
        before = await session.call_tool("overview", args)
        _swap(trace, decoy)
        return before, await session.call_tool("overview", args)

    before, after = with_session(trace.parent.parent, tmp_path / "cache", work)
    assert not before.is_error
    assert after.is_error and "outside the logdir" in after.content[0].text
    assert "SECRET" not in after.content[0].text


def test_worker_processes_check_the_same_logdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process started after the listing (a rank summary's) refuses the swapped link too:
    the logdirs listed are passed on in the environment."""
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    trace, decoy = _logdir(tmp_path)
    from kinetoscope.ingest.discovery import scan_logdir

    assert scan_logdir(str(trace.parent.parent))
    _swap(trace, decoy)
    code = (
        "import sys\nfrom kinetoscope.ingest import storage\n"
        "try:\n    storage.open_binary(sys.argv[1]).read()\n"
        "except storage.OutsideLogdirError:\n    sys.exit(7)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(trace)], env=dict(os.environ))
    assert done.returncode == 7
