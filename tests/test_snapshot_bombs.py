"""Snapshot pickles that cost far more than their size, each read in a child process under
a memory bound (RLIMIT_AS) and a time bound: a memo index far out, int keys that all
collide, shared references multiplied into a cross product, a size past int64, a frame
name nested a thousand deep. Each ends in a clear per-file answer or error, fast and
small; and through every door (HTTP route, `kinetoscope report`, notebook, MCP) one
such file is its own `error` while the run's good snapshot still answers."""

from __future__ import annotations

import json
import pickle
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kinetoscope.cli.main import main
from kinetoscope.ingest.snapshot import decode_snapshot
from kinetoscope.notebook.run import open_run
from snapshot_builders import frame, known_snapshot

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

TESTS = Path(__file__).resolve().parent
P61 = (1 << 61) - 1
MEMORY_MB = 768  # address space the child may add to what it holds after its imports
SECONDS = 30  # the child's wall-clock bound (each read below takes well under a second)

# The child: RLIMIT_AS set once kinetoscope is imported, then the read and the summary;
# `peak_mb`: how far the read raised the process's peak RSS.
_CHILD = """
import json, resource, sys, time
from kinetoscope.analysis.memory.snapshot_view import summarise
from kinetoscope.ingest.snapshot import SnapshotError, read_snapshot
import numpy.ma
held = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (held + int(sys.argv[2]) * 2**20, resource.RLIM_INFINITY))
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    data = read_snapshot(sys.argv[1], started + 60)
    devices, total, _, _ = summarise(data, len(open(sys.argv[1], "rb").read()), started + 60)
    out = {"kind": None, "answer_bytes": len(json.dumps(devices)), "devices": devices}
except SnapshotError as exc:
    out = {"kind": exc.kind, "error": str(exc)}
out["seconds"] = time.monotonic() - started
out["peak_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
print(json.dumps(out))
"""


def read_bounded(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(MEMORY_MB)],
        capture_output=True,
        text=True,
        timeout=SECONDS,
        cwd=TESTS,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def memo_bomb() -> bytes:
    # 24 bytes: an empty snapshot whose list is memoised at index 2**27.
    body = b"}(\x8c\x08segments]r" + struct.pack("<I", 1 << 27) + b"u."
    return b"\x80\x04" + body


def colliding_keys(count: int = 100_000) -> bytes:
    # {"segments": [], "ids": {k * (2**61 - 1): 0, ...}}: every key's hash is 0, so each
    # insert walks every key before it. Written by hand: a dict of them would take
    # minutes to build here.
    keys = b"".join(_long1(k * P61) + b"K\x00" for k in range(1, count))
    return b"\x80\x04}(\x8c\x08segments]\x8c\x03ids}(" + keys + b"uu."


def _long1(value: int) -> bytes:
    data = pickle.encode_long(value)  # type: ignore[attr-defined]
    return b"\x8a" + bytes([len(data)]) + data


def cross_product() -> bytes:
    entry = {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": 1.0}
    history = [entry] * 2000
    return pickle.dumps({"segments": [], "device_traces": [history] * 2000}, protocol=4)


def oom_cross_product() -> bytes:
    stack = [frame(f"f{i}", "a.py", i) for i in range(2000)]
    oom = {"action": "oom", "addr": 0, "size": 1 << 30, "time_us": 1.0, "frames": stack}
    return pickle.dumps({"segments": [], "device_traces": [[oom] * 5000]}, protocol=4)


def huge_size() -> bytes:
    b = known_snapshot()
    b.entry(0, "alloc", 0x7000, 1 << 70, 90)
    b.segment(0, 0xA000, 1 << 70, [b.block(0xA000, 1 << 70)])
    return pickle.dumps(b.snapshot(), protocol=4)


def deep_name() -> bytes:
    name: Any = "leaf"
    for _ in range(1000):
        name = [name]
    b = known_snapshot()
    b.entry(0, "alloc", 0x7000, 1 << 20, 90, frames=[{"name": name, "filename": "a.py", "line": 1}])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        return pickle.dumps(b.snapshot(), protocol=4)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize(
    ("make", "kind", "match"),
    [
        (memo_bomb, "damaged", "memo index 134217728"),
        (colliding_keys, "refused", "collide"),
        (cross_product, "too_much_work", "describe"),
        (oom_cross_product, "too_much_work", "describe"),
    ],
    ids=["memo-2**27", "colliding-int-keys", "shared-histories", "shared-oom-stacks"],
)
def test_a_bomb_is_a_clear_error_in_bounded_time_and_memory(
    tmp_path: Path, make: Any, kind: str, match: str
) -> None:
    path = tmp_path / "bomb.pickle"
    path.write_bytes(make())
    out = read_bounded(path)
    assert out["kind"] == kind and match in out["error"], out
    assert out["seconds"] < 5 and out["peak_mb"] < 200, out


def test_a_size_past_int64_is_a_missing_size_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "huge.pickle"
    path.write_bytes(huge_size())
    out = read_bounded(path)
    assert out["kind"] is None, out
    (device,) = [d for d in out["devices"] if d["device"] == 0]
    # known_snapshot's answers, the 2**70 alloc skipped and its block counted as 0 bytes.
    assert device["peak_allocated_bytes"] == 832
    assert device["skipped_entries"] == 1
    assert device["reserved_bytes"] == 9216


def test_a_frame_name_nested_deep_is_shown_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "deep.pickle"
    path.write_bytes(deep_name())
    out = read_bounded(path)
    assert out["kind"] is None, out
    (device,) = [d for d in out["devices"] if d["device"] == 0]
    names = [f["name"] for s in device["top_stacks_at_peak"] for f in s["frames"]]
    assert "?" in names and all(isinstance(n, str) and len(n) < 100 for n in names)


def test_an_honest_snapshot_reads_under_the_same_bounds() -> None:
    out = read_bounded(TESTS / "data" / "h100" / "memory_snapshot" / "snapshot.pickle")
    assert out["kind"] is None and out["devices"][0]["history_entries"] == 2169, out


# -- every door: one bad file is its own error, the good one answers ------------------


def _run_with_bombs(root: Path) -> Path:
    run = root / "run"
    run.mkdir(parents=True)
    known_snapshot().write(run / "good.pickle")
    (run / "memo.pickle").write_bytes(memo_bomb())
    (run / "shared.pickle").write_bytes(cross_product())
    (run / "huge.pickle").write_bytes(huge_size())
    return run


EXPECTED_KINDS = {
    "good.pickle": None,
    "huge.pickle": None,
    "memo.pickle": "damaged",
    "shared.pickle": "too_much_work",
}


def _kinds(view: dict[str, Any]) -> dict[str, Any]:
    return {s["file"]: s["error_kind"] for s in view["snapshots"]}


def _good_peak(view: dict[str, Any]) -> int:
    (good,) = [s for s in view["snapshots"] if s["file"] == "good.pickle"]
    peak: int = good["devices"][0]["peak_allocated_bytes"]
    return peak


def test_the_http_route(tmp_path: Path, plugin_client: Any) -> None:
    run = _run_with_bombs(tmp_path / "logs")
    client = plugin_client(run.parent)
    deadline = time.monotonic() + 60
    while (response := client.get("memory_snapshot", run="run")).status_code == 202:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert response.status_code == 200, response.get_data(as_text=True)
    view = response.get_json()
    assert _kinds(view) == EXPECTED_KINDS and _good_peak(view) == 832


def test_the_report_and_its_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_with_bombs(tmp_path / "logs")
    assert main(["report", str(run), "--format", "json"]) == 0
    view = json.loads(capsys.readouterr().out)["memory_snapshot"]
    assert _kinds(view) == EXPECTED_KINDS and _good_peak(view) == 832
    assert main(["report", str(run)]) == 0
    text = capsys.readouterr().out
    assert "memory snapshot good.pickle" in text and "[too_much_work]" in text


def test_the_notebook(tmp_path: Path) -> None:
    with open_run(str(_run_with_bombs(tmp_path / "logs")), cache=False) as run:
        frame_ = run.memory_snapshots()
    kinds = frame_.groupby("file")["error_kind"].first().to_dict()
    assert {k: (None if v != v else v) for k, v in kinds.items()} == EXPECTED_KINDS
    good = frame_[(frame_["file"] == "good.pickle") & (frame_["device"] == 0)]
    assert good["peak_allocated_bytes"].iloc[0] == 832


def test_the_mcp_tool_answers_each_file_and_pages_its_lists(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from test_mcp import with_session

    run = _run_with_bombs(tmp_path / "logs")

    async def work(session: Any) -> Any:
        return await session.call_tool("memory_snapshot", {"run": "run", "limit": 1})

    result = with_session(run.parent, tmp_path / "cache", work)
    assert not result.is_error, result.content
    body = result.structured_content
    # limit 1: one snapshot of four, and the lists inside it cut to one row too.
    assert body["page"]["totals"]["snapshots"] == 4
    (first,) = body["snapshots"]
    assert first["file"] == "good.pickle"
    assert body["page"]["totals"]["snapshots[0].devices"] == 2
    assert len(first["devices"]) == 1 and len(first["devices"][0]["timeline"]["t_us"]) == 1


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_the_opcode_walk_passes_honest_pickles_of_every_protocol(protocol: int) -> None:
    # The H100 snapshot, its 2169-entry history copied 30 times over (memo indexes past
    # 2**16: LONG_BINPUT / LONG_BINGET in protocols 2 and 3), read as pickle reads it.
    h100 = pickle.loads(
        (TESTS / "data" / "h100" / "memory_snapshot" / "snapshot.pickle").read_bytes()
    )
    entries = h100["device_traces"][0]
    h100["device_traces"][0] = [
        dict(e, addr=e.get("addr", 0) + i) for i in range(30) for e in entries
    ]
    data = pickle.dumps(h100, protocol=protocol)
    assert decode_snapshot(data) == h100
