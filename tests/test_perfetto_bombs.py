"""Hostile Perfetto traces and loads (issue 44), each under a memory and a time bound:
a load stops at its caps (open slices and every pending structure count against
KINETOSCOPE_LOAD_MEMORY_MB; compressed packets inflate under the text limit; the args
spill under KINETOSCOPE_MAX_ARGS_MB), gives its memory back when it is refused, keeps
every packet before damage, skips a packet it cannot read, and a file named as a
Perfetto trace is listed even when its first bytes are odd."""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import perfetto_bombs as pb
import pytest
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.ingest.text_blocks import TraceDecodeError
from perfetto_compare import compare_each_load

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _both_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Perfetto file these tests load is read by both readers, which must agree."""
    compare_each_load(monkeypatch, sys.modules[__name__])


CAP_MB = 64
EVENT = b'{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 5, "dur": 1}'


def in_subprocess(paths: list[Path], **env: str) -> dict:
    """tests/bomb_memory.py on `paths` in a fresh process, under `env`."""
    full = {**os.environ, "KINETOSCOPE_NO_CACHE": "1", **env}
    done = subprocess.run(
        [sys.executable, str(TESTS / "bomb_memory.py"), *map(str, paths)],
        env=full,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def column_bomb(path: Path, events: int = 2_000_000) -> Path:
    """A small gzip of valid JSON events whose columns pass the cap (about 80 bytes a
    row, held once: 2 M rows are 160 MB)."""
    text = b'{"traceEvents": [' + b",".join([EVENT] * events) + b"]}"
    path.write_bytes(gzip.compress(text, 6))
    return path


@pytest.mark.parametrize("scan_threads", ["1", "2"])
def test_slices_that_never_end_stop_at_the_cap_and_memory_goes_back(
    tmp_path: Path, scan_threads: str
) -> None:
    """Before: 5 M begins (243 KB gzipped) grew to 4.0 GB, since only columns counted;
    after a refusal 3 to 7 GB stayed held. Now the open slices count, the load stops near
    the cap, and after each refusal (in a loader thread, as the store loads) the process
    is back near where it started: bombs in a row never add up. Also with the JSON
    scanned in threads (as files of 48 MB of text and more are): before glibc's
    thresholds were pinned (ingest/heap.py), each scanning thread's arena kept up to
    37 MB of freed pages after the refusal."""
    opened = tmp_path / "open.pftrace.gz"
    opened.write_bytes(gzip.compress(pb.open_slices(200_000), 6))
    assert opened.stat().st_size < 1 << 20
    columns = column_bomb(tmp_path / "cols.pt.trace.json.gz")
    began = time.monotonic()
    result = in_subprocess(
        [opened, columns, opened, columns],
        KINETOSCOPE_LOAD_MEMORY_MB=str(CAP_MB),
        KINETOSCOPE_SCAN_THREADS=scan_threads,
    )
    assert time.monotonic() - began < 120
    before = result["before"]["VmRSS"]
    for load in result["loads"]:
        assert load["kind"] == "too_large", load
        assert "KINETOSCOPE_LOAD_MEMORY_MB" in load["message"]
        # Given back at the refusal (measured: within 5 MB; before the fix 75 % of the
        # cap stayed held, in a loader thread's arena).
        assert load["memory"]["VmRSS"] - before < 32, load
    # The peak of the four stays near one load's bound (measured: 118 MB, the cap and
    # the run of packets being decoded; before: 341 MB).
    assert result["loads"][-1]["memory"]["VmHWM"] - before < 3 * CAP_MB + 64, result


def test_millions_of_slices_that_never_end_stop_as_they_pass_the_count(tmp_path: Path) -> None:
    """Before: 5 M begins that never end (243 KB gzipped) took 2.5 GB and 133 s of CPU
    under the default memory cap (a quarter of RAM), then loaded `ready`. No trace holds
    that many slices open at once (a thread's stack is a few hundred deep): past
    KINETOSCOPE_MAX_OPEN_SLICES (default 250,000) both readers stop at once. Here 400,000
    under the default settings."""
    opened = tmp_path / "open.pftrace.gz"
    opened.write_bytes(gzip.compress(pb.open_slices(400_000), 6))
    assert opened.stat().st_size < 1 << 20
    began = time.monotonic()
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(opened))
    assert time.monotonic() - began < 10
    assert err.value.kind == "too_large", err.value.message
    assert "KINETOSCOPE_MAX_OPEN_SLICES" in err.value.message
    assert "more than 250000 slices" in err.value.message


def test_slices_open_under_the_count_still_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count is of slices open at once, not of slices: many begun and ended load, and
    under the count the unended ones end at the file's end, as before."""
    monkeypatch.setenv("KINETOSCOPE_MAX_OPEN_SLICES", "5000")
    path = tmp_path / "fine.pftrace"
    path.write_bytes(
        pb.small_trace(20_000) + pb.open_slices(4_000)[len(pb.thread_track(1, 10, 11)) :]
    )
    model = build_model(str(path))
    assert _rows(model) == 24_000  # 20,000 ended, 4,000 ended at the last timestamp
    assert any("4000 slices had no end" in w for w in model.warnings), model.warnings
    path.write_bytes(
        pb.small_trace(10) + pb.open_slices(6_000 * 2)[len(pb.thread_track(1, 10, 11)) :]
    )
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(path))
    assert "KINETOSCOPE_MAX_OPEN_SLICES" in err.value.message


def test_compressed_packets_inflate_under_the_text_limit(tmp_path: Path) -> None:
    """Before: a compressed packet was inflated whole (1 MB → GBs, "Arena alloc failed",
    the whole file lost). Now it inflates step by step, its output counts against the
    text limit, and the events before the limit are kept."""
    path = tmp_path / "z.pftrace"
    path.write_bytes(pb.small_trace(1000) + pb.compressed_bomb(300) + pb.small_trace(10))
    assert path.stat().st_size < 1 << 20
    result = in_subprocess([path], KINETOSCOPE_MAX_TEXT_GB="0.05")
    (load,) = result["loads"]
    assert load["kind"] == "ready" and load["partial"], load
    assert load["events"] >= 1000  # every slice before the bomb
    assert any("KINETOSCOPE_MAX_TEXT_GB" in w for w in load["warnings"]), load
    assert load["memory"]["VmHWM"] - result["before"]["VmRSS"] < 400, load
    assert load["seconds"] < 60


def test_the_args_spill_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a 3 MB gzip of events with 100 KB args wrote 2 GB to disk and loaded
    `ready`. Now the spilled bytes count against KINETOSCOPE_MAX_ARGS_MB."""
    monkeypatch.setenv("KINETOSCOPE_MAX_ARGS_MB", str(CAP_MB))
    path = args_bomb(tmp_path / "args.pt.trace.json.gz")
    assert path.stat().st_size < 4 << 20
    spill = tmp_path / "args.bin"
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(path), args_path=str(spill))
    assert err.value.kind == "too_large" and "KINETOSCOPE_MAX_ARGS_MB" in err.value.message
    # At most the cap and the one chunk that passed it were written.
    assert spill.stat().st_size < 2 * (CAP_MB << 20) + (64 << 20)


def args_bomb(path: Path, events: int = 20_000) -> Path:
    """A 3 MB gzip of events with 100 KB args each: 2 GB of args."""
    event = EVENT[:-1] + b', "args": {"s": "' + b"x" * 100_000 + b'"}}'
    path.write_bytes(gzip.compress(b'{"traceEvents": [' + b",".join([event] * events) + b"]}"))
    return path


def test_args_past_what_the_file_can_hold_stop_early(tmp_path: Path) -> None:
    """Before, under the default settings: 2.5-4.1 GB written to the cache, `ready`. Now
    the args may be at most 200 times the file (KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE; real
    gzipped traces inflate at most ~45x), checked before each write."""
    path = args_bomb(tmp_path / "args.pt.trace.json.gz")
    size = path.stat().st_size
    spill = tmp_path / "args.bin"
    began = time.monotonic()
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(path), args_path=str(spill))
    assert time.monotonic() - began < 30
    assert err.value.kind == "too_large"
    assert "KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE" in err.value.message
    assert spill.stat().st_size <= 200 * size  # checked before writing: never past it


def test_args_stop_before_the_spill_disk_fills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spill's disk is asked its free space before the first write: a disk with
    300 MB free takes at most 300 - 256 MB (the reserve left free). A load that spills to
    a temporary file says so (`too_large`); one that spills into the cache gets the
    OSError of a full disk, on which the store loads again spilling elsewhere."""
    real = os.statvfs

    def small_disk(where: str) -> os.statvfs_result:
        found = real(where)
        fields = list(found)
        fields[4] = (300 << 20) // found.f_frsize  # f_bavail
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", small_disk)
    path = args_bomb(tmp_path / "args.pt.trace.json.gz", events=4_000)
    assert path.stat().st_size * 200 > 44 << 20  # the disk, not the file, bounds it
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(path))
    assert err.value.kind == "too_large"
    assert "free disk" in err.value.message and "44 MB" in err.value.message
    spill = tmp_path / "args.bin"
    with pytest.raises(OSError) as full:
        build_model(str(path), args_path=str(spill))
    assert full.value.errno == errno.ENOSPC and "free disk" in str(full.value)
    assert spill.stat().st_size <= 44 << 20


def _rows(model) -> int:  # type: ignore[no-untyped-def]
    return int((model.events["dur"] > 0).sum())


def test_damaged_framing_keeps_every_packet_before_it(tmp_path: Path) -> None:
    """Before: a bad field at a packet boundary lost the whole 4 MB run and the events
    not yet handed on (3,114 of 17,153 kept). Now every slice before it is kept."""
    good = pb.small_trace(60_000)  # about 1.6 MB of packets: damage inside a run
    path = tmp_path / "cut.pftrace"
    path.write_bytes(good + b"\x0b" + pb.small_trace(10))  # a group start: no trace field
    model = build_model(str(path))
    assert model.partial and _rows(model) == 60_000
    assert any("damaged" in w for w in model.warnings)


def test_a_packet_that_cannot_be_read_is_skipped(tmp_path: Path) -> None:
    """Before: one bad packet of any kind failed the whole file as `internal`. Now it is
    skipped with a warning and every other packet is read; odd track names are names."""
    deep = pb.field(10, b"k") + pb.field(6, b"v")
    for _ in range(1500):
        deep = pb.field(11, pb.field(10, b"k") + deep)
    bad = [
        pb.packet(pb.field(50, b"not zlib")),
        pb.track_event(3, 5, 1, b"deep", pb.field(4, pb.field(10, b"n") + deep)),
        # Three slices, then damaged framing, in a zlib stream that is cut: the slices kept.
        pb.packet(pb.field(50, zlib.compress(pb.small_trace(3) + b"\x0b")[:-6])),
    ]
    named = [
        pb.packet(pb.field(60, pb.number(1, 2) + pb.number(5, 1) + pb.field(2, name)))
        for name in ("²".encode(), b"7" * 5000)
    ]
    data = pb.small_trace(50) + b"".join(bad) + b"".join(named) + pb.track_event(3, 9, 2, b"i")
    path = tmp_path / "bad.pftrace"
    path.write_bytes(data + pb.small_trace(50))
    model = build_model(str(path))
    assert _rows(model) == 103
    assert model.partial
    (warning,) = [w for w in model.warnings if "could not be read" in w]
    assert warning.startswith("3 trace packets could not be read"), warning
    assert "7" * 5000 in model.tids  # a name of 5,000 digits stays a name


def test_files_named_as_perfetto_traces_are_listed(tmp_path: Path) -> None:
    """Before: a valid trace whose first packet is over 64 KiB, or wrapped in compressed
    packets, or damaged in its first 64 KiB, was not listed. Now a `*.pftrace` is listed
    whatever its bytes (a broken one as a worker with its error), and a `*.pb` when the
    bytes its head holds show a Perfetto packet field; an XSpace still is not."""
    run = tmp_path / "job"
    run.mkdir()
    big_meta = pb.packet(
        pb.field(
            5,
            pb.field(
                2, pb.field(1, b"deviceProperties") + pb.field(6, b"[" + b"1," * 50_000 + b"1]")
            ),
        )
    )
    (run / "bigfirst.pb").write_bytes(big_meta + pb.small_trace(10))
    (run / "wrapped.pb.gz").write_bytes(gzip.compress(pb.compressed(pb.small_trace(10))))
    damaged = bytearray(pb.small_trace(100))
    damaged[2000] = 0xFF
    (run / "damaged.pb").write_bytes(bytes(damaged))
    (run / "junk.pftrace").write_bytes(b"\x08\x01 not a trace")
    (run / "vm.xplane.pb").write_bytes((TESTS / "data" / "jax" / "vm.xplane.pb").read_bytes())
    (run / "notes.pb").write_bytes(b"\x08\x01")
    (runs,) = scan_logdir(str(tmp_path))
    assert sorted(w.name for w in runs.workers) == ["bigfirst", "damaged", "junk", "wrapped"]
    assert _rows(build_model(str(run / "bigfirst.pb"))) == 10
    assert _rows(build_model(str(run / "wrapped.pb.gz"))) == 10
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(run / "junk.pftrace"))
    assert err.value.kind == "unreadable"


def test_a_deadline_stops_compressed_packets_while_they_inflate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load's progress is told per inflate step of compressed packets, so its
    deadline (KINETOSCOPE_LOAD_TIMEOUT_S, raised from the progress callback) stops a
    packet that inflates for long, not only after it."""
    monkeypatch.setenv("KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE", "100000")  # a bomb on purpose
    path = tmp_path / "z.pftrace"
    path.write_bytes(pb.small_trace(10) + pb.compressed_bomb(300))
    calls = []

    class Deadline(Exception):
        pass

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        if len(calls) > 20:
            raise Deadline()

    with pytest.raises(Deadline):
        build_model(str(path), progress=progress)
    assert calls[-1] == (path.stat().st_size, path.stat().st_size)  # the file's progress


def test_events_of_one_big_compressed_packet_go_out_as_it_inflates(tmp_path: Path) -> None:
    """One packet of compressed packets holding 300 MB of events (1 MB args each) loads
    with a peak far below its 300 MB: its events go to the builder run by run as it
    inflates (their args spilled), they never pile up behind the one packet. (The spilled
    args count against the load memory cap, so the cap is set above them.)"""
    path = tmp_path / "z.pftrace"
    path.write_bytes(pb.small_trace(10) + pb.compressed_bomb(300))
    result = in_subprocess(
        [path],
        KINETOSCOPE_LOAD_MEMORY_MB="512",
        KINETOSCOPE_MAX_ARGS_MB="1024",
        KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE="100000",  # a bomb on purpose
    )
    (load,) = result["loads"]
    assert load["kind"] == "ready" and not load["partial"], load
    assert load["events"] == 10 + 300
    assert load["memory"]["VmHWM"] - result["before"]["VmRSS"] < 128 + 192, load
