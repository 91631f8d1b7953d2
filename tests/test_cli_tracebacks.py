"""`kinetoscope report` ends in a message and an exit code, never a traceback (issue 27):
absurd durations in the text report, an unreachable Dask scheduler, a view asked of a
trace without its data."""

from __future__ import annotations

import copy
import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.cli.errors import EXIT_USAGE
from kinetoscope.cli.main import EXIT_LOAD, main
from test_contract import worker_trace
from test_damage_both_readers import PARTIAL

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)


def _gpu_trace() -> TraceBuilder:
    return worker_trace()  # steps, an op launching a kernel, memory events


def test_text_report_of_a_huge_duration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each event in turn with `dur: 1e300`: the report prints, numbers stay readable."""
    base = _gpu_trace()
    for k, event in enumerate(base.events):
        if "dur" not in event:
            continue
        t = copy.deepcopy(base)
        t.events[k]["dur"] = 1e300
        run = tmp_path / f"e{k}"
        run.mkdir()
        t.write(run / "w.1.pt.trace.json")
        assert main(["report", str(run), "--no-cache"]) == 0, event
        out = capsys.readouterr().out
        assert "== run . / worker w / span 1" in out
        assert not re.search(r"\d{20}", out), f"a 300-digit number for {event['cat']}"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_dask_scheduler_is_a_message_and_an_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setenv("KINETOSCOPE_DASK_CONNECT_TIMEOUT_S", "2")
    for worker in ("rank0", "rank1"):  # a distributed run: its ranks go to the scheduler
        _gpu_trace().write(tmp_path / f"{worker}.1.pt.trace.json")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    code = main(["report", str(tmp_path), "--no-cache", "--dask", address])
    assert code == EXIT_LOAD
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert f"cannot reach the Dask scheduler at {address}" in err
    assert "Traceback" not in err


def test_a_view_the_trace_lacks_is_said_not_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.write(tmp_path / "w.1.pt.trace.json")
    assert main(["report", str(tmp_path), "--no-cache", "--view", "memory"]) == 0
    assert "memory: the trace has no memory events" in capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_stderr_and_json_say_the_same_of_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text = PARTIAL[case][0]
    if len(text) > 1 << 20:
        pytest.skip("the 10 MB number: covered by the readers' tests")
    (tmp_path / "w.1.pt.trace.json").write_text(text)
    assert main(["report", str(tmp_path), "--no-cache", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["status"]["partial"] is True
    assert "partial trace" in captured.err


def test_a_refused_or_unknown_param_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--param` a view refuses (the route's 400) or none of the views asked takes: exit
    2 with the message, never 0; a good one still prints."""
    _gpu_trace().write(tmp_path / "w.1.pt.trace.json")
    argv = ["report", str(tmp_path), "--no-cache", "--format", "json"]
    refused = [*argv, "--view", "memory_events", "--param", "offset=-1"]
    assert main(refused) == EXIT_USAGE
    assert "view 'memory_events': offset must be between 0 and" in capsys.readouterr().err
    assert main([*argv, "--view", "kernels", "--param", "colour=red"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--param 'colour' is not a parameter of the views asked" in err
    assert "(kernels: group_by, device, stream)" in err
    assert main([*argv, "--view", "memory_events", "--param", "offset=1"]) == 0
    assert json.loads(capsys.readouterr().out)["memory_events"]["offset"] == 1


def _server_answering(reply: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A TCP server on 127.0.0.1 that sends `reply` on each connection (None: nothing,
    as an HTTP server waiting for a request) and holds it open."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return  # closed
            held.append(conn)
            if reply is not None:
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "are not a Dask handshake"),  # 3.07 EiB to Dask
        (b"\xff" * 64, "are not a Dask handshake"),
        (None, "sent no handshake within 2 s"),
    ],
    ids=["http_reply", "garbage", "silent"],
)
def test_dask_pointed_at_something_else_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reply: bytes | None,
    said: str,
) -> None:
    """`--dask` at a server that is not a Dask scheduler: a clear error, exit 3, within
    the connect timeout (not an allocation of exabytes, not a hang)."""
    pytest.importorskip("distributed")
    monkeypatch.setenv("KINETOSCOPE_DASK_CONNECT_TIMEOUT_S", "2")
    for worker in ("rank0", "rank1"):
        _gpu_trace().write(tmp_path / f"{worker}.1.pt.trace.json")
    server, thread = _server_answering(reply)
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        started = time.monotonic()
        code = main(["report", str(tmp_path), "--no-cache", "--dask", address])
        elapsed = time.monotonic() - started
    finally:
        server.close()
        thread.join(timeout=5)
    err = capsys.readouterr().err
    assert code == EXIT_LOAD and elapsed < 20, (code, elapsed, err)
    assert f"the Dask scheduler at {address} (--dask) is not a Dask scheduler" in err
    assert said in err and "Traceback" not in err


def test_a_step_whose_ts_is_nan_prints_as_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The only step with `"ts": "NaN"`: its time is unknown (null in the JSON), and
    every door prints it as `-`, never a traceback: report (text and JSON), check,
    flamegraph."""
    t = TraceBuilder()
    t.step(1, 1000, 500)
    t.events[-1]["ts"] = "NaN"
    op = t.op("aten::mm", 1010, 50)
    t.launch(1020, 5, op, gpu_ts=1030, gpu_dur=40)
    t.write(tmp_path / "w.1.pt.trace.json")
    assert main(["report", str(tmp_path), "--no-cache", "--format", "json"]) == 0
    overview = json.loads(capsys.readouterr().out)["overview"]
    assert overview["steps"][0]["duration_us"] is None  # unknown, not 0
    assert main(["report", str(tmp_path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    step_line = next(line for line in out.splitlines() if line.startswith("ProfilerStep#1"))
    assert step_line.split()[1] == "-"
    assert next(line for line in out.splitlines() if line.startswith("share %")).split()[2] == "-"
    for argv in (["check"], ["flamegraph"], ["flamegraph", "--metric", "gpu"]):
        assert main([argv[0], str(tmp_path), "--no-cache", *argv[1:]]) in (0, 1), argv
    assert "Traceback" not in capsys.readouterr().err
