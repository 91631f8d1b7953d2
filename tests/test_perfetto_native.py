"""The compiled Perfetto reader (ingest/perfetto/_native.c) against the protobuf runtime's
reader (ingest/perfetto/events.py): the same model, every column and table, the args
text, memory rows, metadata, header and warnings (tests/perfetto_compare.py), for real
traces in their protobuf form and for built packets that reach each of the reader's
rules; and its text helpers against Python's own (UTF-8 replacement, msgspec's floats,
int division, the packet stream's framing). The Perfetto tests' own files are read both
ways too (test_perfetto_reader and test_perfetto_bombs: their `_both_readers` fixture)."""

from __future__ import annotations

import gzip
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import perfetto_bombs as pb
import pytest
from corpus import corpus_path
from fuzz_perfetto_native import Findings, fuzz
from kinetoscope.ingest import text_blocks
from kinetoscope.ingest.perfetto import chunks, events, native, read, rules, stream
from kinetoscope.ingest.perfetto.rules import native_module
from perfetto_compare import disagreement, load, model_facts
from perfetto_writer import write_perfetto_file
from test_perfetto_corpus import TRACES

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled reader is not built")

DATA = Path(__file__).parent / "data"
# Seconds of the short compare-fuzz run (the long one is by hand:
# `python tests/fuzz_perfetto_native.py --minutes N --asan`); at most a minute.
FUZZ_BUDGET = min(float(os.environ.get("KINETOSCOPE_PERFETTO_FUZZ_SECONDS", "6")), 60.0)


def same_both_ways(path: Path) -> None:
    said = disagreement(str(path))
    assert said is None, said


def test_the_tiny_trace_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "trace.pftrace.gz"
    write_perfetto_file(str(DATA / "tiny.pt.trace.json"), str(path))
    same_both_ways(path)


@pytest.mark.parametrize("rel", TRACES, ids=lambda r: r.rsplit("/", 1)[-1][:40])
def test_corpus_traces_read_the_same(rel: str, tmp_path: Path) -> None:
    """Every vendor and schema of test_perfetto_corpus (the H100 test data and the device
    backends' built traces are read both ways by test_perfetto_reader)."""
    path = tmp_path / "trace.pftrace"
    write_perfetto_file(str(corpus_path(rel)), str(path))
    same_both_ways(path)


@pytest.mark.parametrize(
    "path", sorted((DATA / "perfetto_fuzz").glob("*.pftrace*")), ids=lambda p: p.name.split(".")[0]
)
def test_fuzzer_findings_read_the_same(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    same_both_ways(copy)


# --- built packets: each rule of the mapping ---------------------------------------------


def annotation(name: bytes | None = None, name_iid: int | None = None, **values: Any) -> bytes:
    """A DebugAnnotation; `values` by field: b=bool, u=uint, i=int, d=double, s=string,
    p=pointer, legacy=legacy JSON, siid=interned string, nested=NestedValue bytes,
    dict=[annotations], array=[annotations]."""
    out = b""
    if name_iid is not None:
        out += pb.number(1, name_iid)
    if name is not None:
        out += pb.field(10, name)
    for key, value in values.items():
        if key == "b":
            out += pb.number(2, int(value))
        elif key == "u":
            out += pb.number(3, value)
        elif key == "i":
            out += pb.number(4, value & (2**64 - 1))
        elif key == "d":
            out += pb.varint(5 << 3 | 1) + struct.pack("<d", value)
        elif key == "s":
            out += pb.field(6, value)
        elif key == "p":
            out += pb.number(7, value)
        elif key == "nested":
            out += pb.field(8, value)
        elif key == "legacy":
            out += pb.field(9, value)
        elif key == "dict":
            out += b"".join(pb.field(11, a) for a in value)
        elif key == "array":
            out += b"".join(pb.field(12, a) for a in value)
        elif key == "siid":
            out += pb.number(17, value)
    return out


def event(
    kind: int,
    ts: int,
    track: int = 1,
    name: bytes = b"op",
    *annotations: bytes,
    extra: bytes = b"",
    seq: int = 1,
    packet_extra: bytes = b"",
) -> bytes:
    body = pb.number(9, kind) + pb.number(11, track) + (pb.field(23, name) if name else b"")
    body += b"".join(pb.field(4, a) for a in annotations) + extra
    return pb.packet(pb.number(8, ts) + pb.number(10, seq) + pb.field(11, body) + packet_extra)


def interned(seq: int, table: int, iid: int, text: bytes, cleared: bool = False) -> bytes:
    """A packet of interned data: table 1 categories, 2 names, 3 annotation names, 29
    annotation strings."""
    entry = pb.number(1, iid) + pb.field(2, text)
    flags = pb.number(13, 1) if cleared else b""
    return pb.packet(pb.number(10, seq) + flags + pb.field(12, pb.field(table, entry)))


def check(tmp_path: Path, data: bytes, name: str = "t.pftrace") -> Any:
    """The model of `data` (the same both ways), read run by run as the file is inflated
    and with runs read in a thread of their own while the next one inflates."""
    path = tmp_path / name
    path.write_bytes(data)
    same_both_ways(path)
    with threads("2"):
        same_both_ways(path)
    return load(str(path), "native")


@contextmanager
def threads(count: str) -> Iterator[None]:
    """KINETOSCOPE_SCAN_THREADS set to `count` inside the block."""
    before = os.environ.get("KINETOSCOPE_SCAN_THREADS")
    os.environ["KINETOSCOPE_SCAN_THREADS"] = count
    try:
        yield
    finally:
        if before is None:
            del os.environ["KINETOSCOPE_SCAN_THREADS"]
        else:
            os.environ["KINETOSCOPE_SCAN_THREADS"] = before


def test_annotation_values_and_their_precedence(tmp_path: Path) -> None:
    nested_dict = pb.number(1, 1) + pb.field(2, b"k") + pb.field(3, pb.number(5, 3))
    nested_dict += pb.field(2, b"k") + pb.field(3, pb.number(7, 1)) + pb.field(2, b"lone")
    nested_array = pb.number(1, 2) + pb.field(4, pb.field(8, b"x")) + pb.field(4, b"")
    values = [
        annotation(b"b", b=True),
        annotation(b"u", u=2**64 - 1),
        annotation(b"i", i=-(2**63)),
        annotation(b"d", d=1.5e-7),
        annotation(b"nan", d=math.nan),
        annotation(b"neg0", d=-0.0),
        annotation(b"s", s=b'tab\tquote" \xff\xfe bad \xe2\x82'),
        annotation(b"p", p=0xDEADBEEF),
        annotation(b"none"),
        annotation(b"many", b=False, i=7, s=b"last wins: the highest field"),
        annotation(
            b"arr", array=[annotation(i=1, s=b"first wins"), annotation(), annotation(d=2.0)]
        ),
        annotation(
            b"dict", dict=[annotation(b"x", i=1), annotation(b"y", i=2), annotation(b"x", i=3)]
        ),
        annotation(b"nd", nested=nested_dict),
        annotation(b"na", nested=nested_array),
        annotation(b"nscalar", nested=pb.number(5, 9) + pb.field(8, b"not me")),
        annotation(b"legacy", legacy=b'{"a": [1, 2.50, "x"], "a": null}'),
        annotation(b"empty", legacy=b"[]"),
        annotation(b"notjson", legacy=b"{nope"),
        annotation(b"b", s=b"a name twice: its first place, its last value"),
        annotation(None, i=1),  # no name: ""
    ]
    data = pb.thread_track(1, 10, 11) + event(3, 1000, 1, b"all", *values)
    model = check(tmp_path, data)
    assert len(model) == 1


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ((annotation(b"Python id", i=7), annotation(b"Python parent id", i=3)), (7, 3)),
        ((annotation(b"Python id", u=2**63 - 1),), (2**63 - 1, -1)),
        (
            (annotation(b"Python id", i=-(2**63)), annotation(b"Python parent id", u=5)),
            (-(2**63), 5),
        ),
        # Past int64, a string, a float, a legacy null: read as PythonIds reads them.
        ((annotation(b"Python id", u=2**64 - 1), annotation(b"Python parent id", i=2)), (-1, 2)),
        ((annotation(b"Python id", s=b"7"), annotation(b"Python parent id", i=2)), (-1, -1)),
        ((annotation(b"Python id", d=7.0), annotation(b"Python parent id", i=2)), (-1, -1)),
        ((annotation(b"Python id", legacy=b"null"), annotation(b"Python parent id", i=2)), (-1, 2)),
        ((annotation(b"python id", i=7),), (-1, -1)),
    ],
)
def test_python_ids_are_read_into_their_columns(
    ids: tuple[bytes, ...], expected: tuple[int, int], tmp_path: Path
) -> None:
    """A python_function slice's `Python id` and `Python parent id` annotations fill the
    python_id / python_parent_id columns as the JSON form's args do (columns.python_id_columns)."""
    data = pb.thread_track(1, 10, 11) + event(1, 1000, 1, b"py", *ids) + event(2, 2000)
    data += event(3, 1500, 1, b"plain", annotation(b"Python id", i=9))
    model = check(tmp_path, data)
    columns = (
        model.full_column("python_id").tolist(),
        model.full_column("python_parent_id").tolist(),
    )
    assert (columns[0][0], columns[1][0]) == expected
    assert (columns[0][1], columns[1][1]) == (9, -1)


def test_python_ids_of_a_real_trace_are_read_in_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A torch 2.x trace's Python ids (ints; null for a root frame's parent) are read by
    the compiled reader itself, no chunk left to the column builder's reading, into the
    columns its JSON form gives."""
    source = DATA / "h100" / "gemm_bf16" / "gpu0.1795404600847.pt.trace.json.gz"
    path = tmp_path / "trace.pftrace"
    write_perfetto_file(str(source), str(path))
    left_to_python = []

    def chunk_of(raw: dict[str, Any]) -> Any:
        left_to_python.append(raw["python_core"])
        return chunks.chunk_of(raw)

    monkeypatch.setattr(native, "chunk_of", chunk_of)
    model, json_model = load(str(path), "native"), load(str(source), "native")
    assert left_to_python and not any(left_to_python)
    ids = model.full_column("python_id")
    roots = (ids >= 0) & (model.full_column("python_parent_id") == -1)  # the null parent
    assert (ids >= 0).sum() > 100 and roots.sum() == 1
    # The same ids (the protobuf form's rows are in the order their slices begin, the
    # JSON's in file order: compared as sets of pairs).
    pairs = {(a, b) for a, b in zip(ids.tolist(), model.full_column("python_parent_id").tolist())}
    json_ids = json_model.full_column("python_id").tolist()
    json_pairs = set(zip(json_ids, json_model.full_column("python_parent_id").tolist()))
    assert pairs == json_pairs


def test_interned_names_strings_and_sequences(tmp_path: Path) -> None:
    data = pb.thread_track(1, 10, 11)
    data += (
        interned(1, 2, 5, b"interned name") + interned(1, 3, 6, b"arg") + interned(1, 29, 7, b"val")
    )
    data += interned(1, 1, 8, b"cpu_op")
    te = (
        pb.number(9, 3)
        + pb.number(11, 1)
        + pb.number(10, 5)
        + pb.number(3, 8)
        + pb.field(22, b"extra")
    )
    te += pb.field(4, annotation(name_iid=6, siid=7)) + pb.field(
        4, annotation(name_iid=99, siid=98)
    )
    data += pb.packet(pb.number(8, 1) + pb.number(10, 1) + pb.field(11, te))
    # the same annotation bytes after the iid is given another text: read anew
    data += interned(1, 3, 6, b"renamed")
    data += pb.packet(pb.number(8, 2) + pb.number(10, 1) + pb.field(11, te))
    # iid 99 defined after an event used it: read anew too
    data += interned(1, 3, 99, b"late")
    data += pb.packet(pb.number(8, 3) + pb.number(10, 1) + pb.field(11, te))
    # another sequence does not see them; a cleared one forgets them
    data += pb.packet(pb.number(8, 4) + pb.number(10, 2) + pb.field(11, te))
    data += interned(1, 2, 1, b"after clear", cleared=True)
    data += pb.packet(pb.number(8, 5) + pb.number(10, 1) + pb.field(11, te))
    check(tmp_path, data)


def test_slices_flows_and_their_order(tmp_path: Path) -> None:
    def flows(field: int, *ids: int) -> bytes:
        return b"".join(pb.varint(field << 3 | 1) + struct.pack("<Q", i) for i in ids)

    data = pb.thread_track(1, 10, 11) + pb.thread_track(2, 10, 12)
    data += event(1, 1000, 1, b"outer", annotation(b"a", i=1), extra=flows(47, 5, 6))
    data += event(1, 1100, 1, b"inner", extra=pb.field(22, b"cuda_runtime") + flows(47, 7))
    data += event(3, 1200, 2, b"instant", extra=pb.field(22, b"kernel") + flows(48, 7))
    data += event(2, 1300, 1, b"", annotation(b"a", i=2), annotation(b"b", i=3))  # inner ends
    data += event(2, 1250, 1, b"", extra=flows(48, 5))  # ends before it began
    data += event(3, 1400, 2, b"self", extra=flows(47, 9, 9) + pb.number(52, 77))
    data += event(2, 1500, 3, b"")  # no begin on its track
    data += event(1, 1600, 4, b"unknown track", extra=flows(36, 6) + flows(42, 11))
    data += event(4, 1700, 2, b"", extra=pb.varint(44 << 3 | 1) + struct.pack("<d", 2.5))
    data += event(4, 1800, 2, b"ctr", extra=pb.number(30, 12))
    data += event(7, 1900, 2, b"other kind")
    model = check(tmp_path, data)
    assert model.partial is False and any("no end" in w for w in model.warnings)


def test_large_timestamps_divide_as_python_does(tmp_path: Path) -> None:
    data = pb.thread_track(1, 10, 11)
    for ts in (2**53 + 1, 2**63 + 12345, 2**64 - 1, 1_700_000_000_123_456_789):
        data += event(1, ts, 1, b"s") + event(2, ts - 999_999_999_999, 1)
    check(tmp_path, data)


def test_tracks_processes_threads_and_names(tmp_path: Path) -> None:
    def descriptor(uuid: int, parent: int = 0, name: bytes = b"", extra: bytes = b"") -> bytes:
        body = pb.number(1, uuid) + (pb.number(5, parent) if parent else b"")
        return pb.packet(body + (pb.field(2, name) if name else b"") + extra)

    process = pb.field(
        3,
        pb.number(1, 42)
        + pb.field(6, b"proc")
        + pb.field(8, b"l1")
        + pb.field(8, b"l2")
        + pb.number(3, 4),
    )
    thread = pb.field(
        4, pb.number(1, 42) + pb.number(2, 2**40) + pb.field(5, b"th") + pb.number(3, 2)
    )
    data = pb.packet(pb.field(60, pb.number(1, 1) + process))
    data += pb.packet(pb.field(60, pb.number(1, 2) + pb.number(5, 1) + thread))
    data += pb.packet(pb.field(60, pb.number(1, 3) + pb.field(2, b"Spans") + pb.number(12, 3)))
    data += pb.packet(
        pb.field(60, pb.number(1, 4) + pb.number(5, 3) + pb.field(2, b"0007") + pb.number(12, 1))
    )
    data += pb.packet(pb.field(60, pb.number(1, 5) + pb.number(5, 3) + pb.field(2, b"9" * 20)))
    data += pb.packet(pb.field(60, pb.number(1, 6) + pb.number(5, 7) + pb.field(2, b"orphan")))
    data += pb.packet(pb.field(60, pb.number(1, 8) + pb.number(5, 9) + pb.field(2, b"loop")))
    data += pb.packet(pb.field(60, pb.number(1, 9) + pb.number(5, 8) + pb.field(2, b"pool")))
    data += pb.packet(
        pb.field(60, pb.number(1, 10) + pb.number(5, 1) + pb.field(2, b"ctr") + pb.field(8, b""))
    )
    for track in (1, 2, 3, 4, 5, 6, 8, 10, 77):
        data += event(3, 1000 + track, track, b"e")
    data += event(4, 2000, 10, b"", extra=pb.number(30, 5))
    data += descriptor(77, 1, b"late")  # a parent described late changes its children's places
    data += event(3, 3000, 77, b"e")
    model = check(tmp_path, data)
    assert model.process_names and model.thread_names


def test_metadata_compressed_packets_and_damage(tmp_path: Path) -> None:
    meta = pb.field(2, pb.field(1, b"distributedInfo") + pb.field(6, b'{"rank": 3}'))
    meta += pb.field(2, pb.field(1, b"n") + pb.number(4, 2**64 - 5))
    meta += pb.field(2, pb.field(1, b"flag") + pb.number(3, 1))
    meta += pb.field(2, pb.field(1, b"\xffbad") + pb.field(6, b"{not json"))
    inner = pb.small_trace(5) + pb.packet(pb.field(50, zlib.compress(pb.small_trace(1))))
    data = pb.packet(pb.field(5, meta)) + pb.small_trace(3)
    data += pb.packet(pb.field(50, zlib.compress(inner)))
    data += pb.packet(pb.field(50, b"not zlib"))
    data += pb.packet(pb.field(50, zlib.compress(pb.small_trace(2) + b"\x0b")[:-4]))
    data += pb.packet(b"\x0b")  # a bad packet: skipped
    deep = pb.field(10, b"k") + pb.field(6, b"v")
    for _ in range(120):
        deep = pb.field(11, pb.field(10, b"k") + deep)
    data += event(3, 5, 1, b"deep", deep)
    check(tmp_path, data)
    check(tmp_path, gzip.compress(data + b"\x0b\x01"), "cut.pftrace.gz")


def test_compressed_packets_between_many_runs_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of a few packets, read in the reading thread one after another while the runs
    before them merge: a run's compressed packets read between it and the next, damage in
    a compressed packet and in the framing (met inflating a run ahead) keeping every run
    before it, as one reader reads them."""
    monkeypatch.setattr(stream, "RUN_BYTES", 200)
    monkeypatch.setattr(text_blocks, "READ_BLOCK", 256)  # the file read and inflated so
    monkeypatch.setattr(text_blocks, "INFLATE_BLOCK", 256)  # (else one block: one run)
    monkeypatch.setattr(native, "BATCH", 5)
    data = pb.thread_track(1, 10, 11) + event(1, 1, 1, b"long")
    for i in range(60):
        data += event(1, 10 + 10 * i, 1, b"x", annotation(b"n", i=i)) + event(2, 15 + 10 * i, 1)
        if i % 7 == 3:
            data += pb.packet(pb.field(50, zlib.compress(pb.small_trace(2))))
        if i == 40:
            data += pb.packet(pb.field(50, b"not zlib"))
    data += event(2, 9000, 1)
    check(tmp_path, data)
    check(tmp_path, gzip.compress(data + b"\x0b\x01" + data), "damaged.pftrace.gz")


def test_the_hold_bound_lets_events_go_past_an_open_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past HOLD_MAX events waiting behind an open slice, the done ones go out first."""
    monkeypatch.setattr(native, "HOLD_MAX", 50)
    monkeypatch.setattr(events, "HOLD_MAX", 50)
    monkeypatch.setattr(stream, "RUN_BYTES", 4096)
    data = pb.thread_track(1, 10, 11) + pb.thread_track(2, 10, 12)
    data += event(1, 1, 1, b"long")
    for i in range(400):
        data += (
            event(1, 10 + 10 * i, 1, b"x")
            + event(3, 11 + 10 * i, 2, b"y")
            + event(2, 15 + 10 * i, 1)
        )
    data += event(1, 9000, 2, b"open at the end")
    check(tmp_path, data)


def test_small_chunks_and_runs_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of a few events (a delivery's parts cut mid-way, chunks past `batch` rows)
    and runs of a few packets read as the defaults do, both ways."""
    source = DATA / "h100" / "gemm_bf16"
    path = tmp_path / "gemm.pftrace.gz"
    write_perfetto_file(str(next(source.glob("*.pt.trace.json.gz"))), str(path))
    for batch, run_bytes, count in ((7, 300, "1"), (64, 4096, "2"), (50_000, 300, "2")):
        monkeypatch.setattr(native, "BATCH", batch)
        monkeypatch.setattr(read, "BATCH", batch)
        monkeypatch.setattr(stream, "RUN_BYTES", run_bytes)
        with threads(count):
            same_both_ways(path)


def test_a_load_over_the_memory_cap_stops_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINETOSCOPE_LOAD_MEMORY_MB", "16")
    path = tmp_path / "open.pftrace"
    path.write_bytes(pb.open_slices(60_000))
    for name in ("native", "python"):
        got = model_facts(load(str(path), name))
        assert got["error"][0] == "too_large", (name, got)


def test_a_limit_met_while_a_delivery_merges_stops_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builder refusing a chunk while the reading thread waits for room to hand over
    the next one stops the load with the builder's error: the reading thread is let
    finish, not left waiting (a slice open around 400 others delivers them at its end, in
    chunks of 7)."""
    monkeypatch.setattr(native, "BATCH", 7)
    monkeypatch.setenv("KINETOSCOPE_MAX_ARGS_MB", "0.001")  # ~1 KB: a few chunks' args
    data = pb.thread_track(1, 10, 11) + event(1, 1, 1, b"long")
    for i in range(400):
        data += event(1, 10 + 10 * i, 1, b"x", annotation(b"n", i=i)) + event(2, 15 + 10 * i, 1)
    data += event(2, 9000, 1)
    path = tmp_path / "refused.pftrace"
    path.write_bytes(data)
    got: list[Any] = []
    with threads("2"):
        loading = threading.Thread(target=lambda: got.append(load(str(path), "native")))
        loading.daemon = True  # a reading thread left waiting fails the test, not the run
        loading.start()
        loading.join(60)
    assert not loading.is_alive()
    assert got[0].kind == "too_large" and "KINETOSCOPE_MAX_ARGS_MB" in got[0].message


# --- the text helpers, against Python's own --------------------------------------------------


def test_replaced_text_is_pythons() -> None:
    module = native_module()
    rng = random.Random(7)
    pieces = [b"a", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"\xe0\x80"]
    pieces += [b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xff", b"\x80", b"\xe2\x82", b"\xf0\x9f\x98"]
    for _ in range(20_000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(4)))
        assert module.text(data) == data.decode("utf-8", "replace"), data


def test_floats_are_written_as_msgspec_writes_them() -> None:
    module = native_module()
    rng = random.Random(11)
    values = [0.1, 1e16, 1e15, 1e-5, 1e-6, 5e-324, 1.7976931348623157e308, 123456789.125, 2.5e-5]
    values += [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(50_000)
    ]
    values += [rng.uniform(-1e6, 1e6) for _ in range(20_000)] + [
        float(rng.randrange(10**9)) for _ in range(5000)
    ]
    for value in values:
        assert module.json_float(value) == msgspec.json.encode(value), value


def test_nanoseconds_become_microseconds_as_python_divides() -> None:
    module = native_module()
    rng = random.Random(3)
    for _ in range(50_000):
        a, b = (
            rng.getrandbits(rng.choice((40, 53, 54, 60, 64))),
            rng.getrandbits(rng.choice((0, 40, 64))),
        )
        assert module.micros(a, b) == (a - b) / 1000, (a, b)


_UNDER_A_COMMA_LOCALE = """
import locale, sys, msgspec, random, struct
from kinetoscope.ingest.perfetto.rules import native_module
sys.path.insert(0, sys.argv[2])
from perfetto_compare import disagreement
locale.setlocale(locale.LC_NUMERIC, "de_DE.UTF-8")
assert locale.localeconv()["decimal_point"] == ","
module = native_module()
rng = random.Random(1)
values = [0.1, 4.5, 1.5e-7, 123.456] + [rng.uniform(-1e6, 1e6) for _ in range(2000)]
values += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(2000)]
assert all(module.json_float(v) == msgspec.json.encode(v) for v in values)
assert all(module.micros(2**60 + k, 0) == (2**60 + k) / 1000 for k in range(1000))
assert disagreement(sys.argv[1]) is None, disagreement(sys.argv[1])
print("same")
"""


def comma_locale(folder: Path) -> bool:
    """de_DE.UTF-8 (its decimal point a comma) built into `folder`; whether it could be."""
    if not shutil.which("localedef"):
        return False
    folder.mkdir(parents=True, exist_ok=True)
    command = ["localedef", "-i", "de_DE", "-f", "UTF-8", str(folder / "de_DE.UTF-8")]
    subprocess.run(command, capture_output=True)
    return (folder / "de_DE.UTF-8").exists()


def test_floats_are_read_and_written_alike_under_a_decimal_comma_locale(tmp_path: Path) -> None:
    """A host that sets LC_NUMERIC to a locale writing 1,5 (printf and strtod follow it;
    msgspec and Python's float do not): the compiled reader's floats stay msgspec's."""
    if not comma_locale(tmp_path / "locales"):
        pytest.skip("no localedef, or no de_DE locale source, here")
    late = 2**60  # timestamps past 2**53 are divided through their decimal text
    kernel = annotation(b"blocks per SM", d=4.5), annotation(b"x", d=0.1)
    data = pb.thread_track(1, 10, 11) + event(3, late + 200, 1, b"k", *kernel)
    data += event(1, late + 300, 1, b"s", annotation(b"Total Reserved", d=1.25e9))
    data += event(2, late + 999, 1)
    path = tmp_path / "floats.pftrace"
    path.write_bytes(data)
    env = {**os.environ, "LOCPATH": str(tmp_path / "locales")}
    command = [sys.executable, "-c", _UNDER_A_COMMA_LOCALE, str(path), str(Path(__file__).parent)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-2000:]


def test_the_packet_stream_framing_is_the_python_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled walk of the packet stream (`stream.whole_packets`) against the Python
    one on damaged streams: the same end, packets and error (its words and place)."""
    module = native_module()
    rng = random.Random(5)
    good = pb.small_trace(30)

    def walk(whole: Any, data: bytes) -> Any:
        try:
            return whole(data, 0)
        except stream.PacketStreamError as err:
            return ("error", str(err), err.at)

    for _ in range(5000):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(data))
            noise = bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
            data[at : at + rng.randrange(1, 12)] = noise
        cut = bytes(data[: rng.randrange(len(data) + 1)])
        limit = rng.choice((5, 100, 1 << 20))
        monkeypatch.setattr(stream, "max_event_bytes", lambda limit=limit: limit)
        expected = walk(stream._whole_packets, cut)
        assert walk(stream.whole_packets, cut) == expected, cut
        assert module.whole_packets(cut, 0, limit)[2] == (expected[0] == "error")


def test_json_values_of_legacy_annotations_match(tmp_path: Path) -> None:
    """Legacy JSON values: the ones read in C (null, true, false, [], {}, ints in their one
    spelling) and the rest, read by Python, with their failures."""
    texts = [b"null", b"true", b"false", b"[]", b"{}", b"0", b"-0", b"12", b"-12", b"007", b"1e3"]
    texts += [b"123456789012345678", b"1234567890123456789012", b" []", b"[1,[2]]", b'"\\u00e9"']
    texts += [b"[" * 2000 + b"]" * 2000, b'"\xff"', b"", b"nul"]
    data = pb.thread_track(1, 10, 11)
    for i, text in enumerate(texts):
        data += event(3, 100 + i, 1, b"l", annotation(b"v", legacy=text))
        data += event(1, 200 + i, 1, b"b", annotation(b"v", legacy=text)) + event(2, 300 + i, 1)
    check(tmp_path, data)


def test_a_short_compare_fuzz_run_finds_no_disagreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled reader built with edge coverage and UBSan, against the other reader on
    mutated real traces (its bounds drawn small at random): no difference, no crash."""
    monkeypatch.setattr(rules, "_native", rules._native)  # fuzz() swaps its own build in
    monkeypatch.delenv("KINETOSCOPE_SCAN_THREADS", raising=False)  # and draws this
    seed = int.from_bytes(os.urandom(2), "little")  # another part of the space each run
    stats, findings = fuzz(FUZZ_BUDGET, seed=seed, findings=Findings(tmp_path))
    assert stats.executions > 0
    found = {reason: body[:200] for reason, body in findings.found.items()}
    assert not found, f"seed {seed}, {stats.line()}: {found}"
