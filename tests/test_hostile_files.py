"""Hostile and odd files: blank-run and gzip bombs, values without end, FIFOs, slow loads.

Each ends in a clear per-file error or a partial load with a warning, in bounded time and
memory, and never holds back the other traces.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.decode import TraceDecodeError
from kinetoscope.store.load_pool import LoadPool
from kinetoscope.store.trace_store import ERROR, READY, TraceStore, describe_error

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

EVENT = b'{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":2}'
MiB = 1 << 20


def gzip_with_run(path: Path, head: bytes, fill: bytes, size: int, tail: bytes) -> Path:
    """`head`, `size` bytes of `fill` repeated, `tail`, gzipped without holding it all."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    parts = [packer.compress(head)]
    block = fill * (MiB // len(fill))
    parts += [packer.compress(block) for _ in range(size // MiB)]
    parts += [packer.compress(tail), packer.flush()]
    path.write_bytes(b"".join(parts))
    return path


BLANK_PLACES = {
    "after_the_open_bracket": (b'{"traceEvents":[', b"" + EVENT + b"," + EVENT + b"]}"),
    "between_events": (b'{"traceEvents":[' + EVENT + b",", EVENT + b"]}"),
    "before_a_comma": (b'{"traceEvents":[' + EVENT, b"," + EVENT + b"]}"),
    "after_the_array": (b'{"traceEvents":[' + EVENT + b"," + EVENT + b"]", b"}"),
}


@pytest.mark.parametrize("place", sorted(BLANK_PLACES))
def test_long_blank_runs_load_in_linear_time(tmp_path: Path, place: str) -> None:
    # 64 MiB of blanks took 20-35 s before (each new block re-scanned the run).
    head, tail = BLANK_PLACES[place]
    path = gzip_with_run(tmp_path / "t.json.gz", head, b" \n", 64 * MiB, tail)
    started = time.monotonic()
    model = build_model(str(path))
    assert time.monotonic() - started < 10
    assert len(model) == 2 and not model.partial


def test_blank_gzip_bomb_loads_fast_in_bounded_memory(tmp_path: Path) -> None:
    """1 GiB of blanks inside a string, from a 1 MiB file."""
    head = b'{"traceEvents":[' + EVENT + b',{"ph":"X","name":"'
    tail = b'","ts":1,"dur":1,"pid":1,"tid":1},' + EVENT + b"]}"
    path = gzip_with_run(tmp_path / "bomb.json.gz", head, b" ", 1024 * MiB, tail)
    assert path.stat().st_size < 2 * MiB
    # VmHWM, not ru_maxrss: the latter keeps the parent's size across fork + exec.
    code = (
        "import sys; from kinetoscope.ingest.build import build_model; "
        "m = build_model(sys.argv[1]); "
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]; "
        "print(len(m), m.partial, hwm[0].split()[1])"
    )
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the peak memory of a process")
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    events, partial, max_rss_kib = out.stdout.split()
    assert time.monotonic() - started < 60
    assert events == "3" and partial == "False"
    assert int(max_rss_kib) < 400 * 1024


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_value_without_end_stops_at_the_event_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    monkeypatch.setenv("KINETOSCOPE_MAX_EVENT_MB", "16")
    head = b'{"traceEvents":[' + EVENT + b"," + EVENT + b',{"ph":"X","name":"'
    path = gzip_with_run(tmp_path / "t.json.gz", head, b"ab", 64 * MiB, b'"}]}')
    model = build_model(str(path))
    assert len(model) == 2
    assert model.partial
    assert any("KINETOSCOPE_MAX_EVENT_MB" in w for w in model.warnings)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_long_value_under_the_bound_is_read_whole_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    # Text without an event boundary is not joined and searched again at each block
    # (that grew as the square of its length: 16 s of CPU for this file).
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    head = b'{"traceEvents":[' + EVENT + b"," + EVENT + b',{"ph":"X","name":"'
    tail = b'"},' + b",".join([EVENT] * 1000) + b"]}"
    path = gzip_with_run(tmp_path / "t.json.gz", head, b"ab", 200 * MiB, tail)
    started = time.perf_counter()
    model = build_model(str(path))
    assert time.perf_counter() - started < 30
    assert len(model) == 1003 and not model.partial
    assert len(model.names[model.events["name"][2]]) == 200 * MiB


def test_inflated_size_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINETOSCOPE_MAX_TEXT_GB", str(8 / 1024))
    many = b",".join([EVENT] * 200_000)  # about 15 MiB of text
    path = gzip_with_run(tmp_path / "t.json.gz", b'{"traceEvents":[' + many, b" ", 0, b"]}")
    model = build_model(str(path))
    assert 0 < len(model) < 200_000
    assert model.partial
    assert any("KINETOSCOPE_MAX_TEXT_GB" in w for w in model.warnings)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_an_error_and_blocks_nothing(tmp_path: Path) -> None:
    fifo = tmp_path / "w.1.pt.trace.json"
    os.mkfifo(fifo)
    with pytest.raises(TraceDecodeError) as info:
        build_model(str(fifo))
    assert info.value.kind == "not_a_file"
    store = TraceStore(cache=None, workers=1)
    try:
        good = TraceBuilder()
        good.op("aten::add", 0, 1)
        good_path = good.write(tmp_path / "good.pt.trace.json")
        store.status(str(fifo))
        assert len(store.wait(str(good_path), timeout=30)) == 1
        assert store.state_for(str(fifo)).error["kind"] == "not_a_file"
    finally:
        store.close()


def test_symlinked_non_json_is_not_echoed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    link = tmp_path / "w.1.pt.trace.json"
    link.symlink_to(secret)
    with pytest.raises(TraceDecodeError) as info:
        build_model(str(link))
    assert info.value.kind == "not_json"
    assert "hunter2" not in str(info.value) and "password" not in str(info.value)


def test_error_texts_do_not_quote_data() -> None:
    secret = b"password=hunter2\xff"
    try:
        secret.decode("utf-8")
    except UnicodeDecodeError as exc:
        error = describe_error("w.1.pt.trace.json", exc)
    assert "hunter2" not in error["message"] and "UnicodeDecodeError" in error["message"]


def test_a_load_past_its_deadline_is_marked_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = b'{"traceEvents":[' + EVENT + b","
    path = gzip_with_run(tmp_path / "slow.json.gz", head, b" ", 512 * MiB, EVENT + b"]}")
    monkeypatch.setenv("KINETOSCOPE_LOAD_TIMEOUT_S", "0.05")
    store = TraceStore(cache=None)
    try:
        store.state_for(str(path)).done.wait(60)
        state = store.state_for(str(path))
        assert state.state == ERROR
        assert state.error is not None and state.error["kind"] == "timeout"
        assert "KINETOSCOPE_LOAD_TIMEOUT_S" in state.error["message"]
    finally:
        store.close()


def test_slow_loads_give_their_slot_to_the_next() -> None:
    pool = LoadPool(workers=2, max_slow=2)
    release = threading.Event()
    order: list[str] = []

    def slow(name: str) -> None:
        pool.release_slot()  # what a load's progress callback does once it runs long
        order.append(name)
        release.wait(30)

    def quick() -> None:
        order.append("quick")

    for name in ("slow1", "slow2"):
        pool.submit(lambda name=name: slow(name))  # type: ignore[misc]
    pool.submit(quick)
    deadline = time.monotonic() + 10
    while "quick" not in order and time.monotonic() < deadline:
        time.sleep(0.01)
    release.set()
    assert "quick" in order


def test_bounded_slow_loads_keep_the_rest_waiting() -> None:
    pool = LoadPool(workers=1, max_slow=1)
    release = threading.Event()
    started: list[str] = []

    def slow(name: str) -> None:
        started.append(name)
        pool.release_slot()
        release.wait(30)

    for name in ("a", "b", "c"):
        pool.submit(lambda name=name: slow(name))  # type: ignore[misc]
    time.sleep(0.3)
    # a went slow and freed the slot; b could not (one slow load at most): c waits.
    assert started == ["a", "b"]
    release.set()
    deadline = time.monotonic() + 10
    while len(started) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert started == ["a", "b", "c"]


def test_two_bombs_do_not_hold_back_a_small_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINETOSCOPE_SLOW_LOAD_S", "0.01")
    head = b'{"traceEvents":[' + EVENT + b","
    bombs = [
        gzip_with_run(tmp_path / f"bomb{i}.json.gz", head, b" ", 512 * MiB, EVENT + b"]}")
        for i in range(2)
    ]
    good = TraceBuilder()
    good.op("aten::add", 0, 1)
    good_path = str(good.write(tmp_path / "good.pt.trace.json"))
    store = TraceStore(cache=None, workers=2)
    try:
        for bomb in bombs:
            store.status(str(bomb))
        time.sleep(0.2)  # both bombs hold the two slots, then give them up
        assert len(store.wait(good_path, timeout=60)) == 1
        assert any(store.state_for(str(b)).state != READY for b in bombs), "bombs too fast"
        for bomb in bombs:
            store.state_for(str(bomb)).done.wait(60)
    finally:
        store.close()
