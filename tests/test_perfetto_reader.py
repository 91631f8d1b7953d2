"""The Perfetto protobuf reader: the same trace in its JSON and its protobuf form gives
the same numbers in every span view (real H100 traces here, every vendor's corpus traces
in test_perfetto_corpus.py); packets built by hand check each rule of the mapping."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import PluginClient
from kinetoscope.analysis.core.devices import device_identities
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.ingest.formats import FORMATS
from kinetoscope.ingest.perfetto.schema import (
    COUNTER,
    INSTANT,
    SLICE_BEGIN,
    SLICE_END,
    Trace,
)
from kinetoscope.ingest.text_blocks import TraceDecodeError
from kinetoscope.model.categories import Kind, Phase
from perfetto_compare import compare_each_load
from perfetto_writer import write_perfetto, write_perfetto_file
from test_device_kinds import BACKENDS, EXPECTED, backend_trace
from view_compare import differences, span_views

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _both_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Perfetto file these tests load is read by both readers, which must agree."""
    compare_each_load(monkeypatch, sys.modules[__name__])


H100_RUNS = sorted(p.parent.name for p in (DATA / "h100").glob("*/*.pt.trace.json.gz"))
# Row numbers point into a model: the protobuf form's rows come in another order.
ROW_KEYS = frozenset({"row", "first_row"})


def same_views(json_path: Path, pb_path: Path) -> None:
    a, b = build_model(str(json_path)), build_model(str(pb_path))
    assert len(a) == len(b)
    assert a.header == b.header
    assert (a.process_names, a.thread_names) == (b.process_names, b.thread_names)
    assert (a.process_labels, a.process_sort, a.thread_sort) == (
        b.process_labels,
        b.process_sort,
        b.thread_sort,
    )
    va, vb = span_views(a), span_views(b)
    assert set(va) == set(vb)
    found = {k: differences(va[k], vb[k], ignore=ROW_KEYS) for k in va}
    assert {k: v[:5] for k, v in found.items() if v} == {}


@pytest.mark.parametrize("run", H100_RUNS)
def test_h100_trace_gives_the_same_views_as_protobuf(run: str, tmp_path: Path) -> None:
    # The run folder is copied whole: the compiled runs' Inductor files sit beside them.
    folder = shutil.copytree(DATA / "h100" / run, tmp_path / run)
    (json_path,) = sorted(Path(folder).glob("*.pt.trace.json.gz"))
    pb_path = json_path.parent / "gpu0.pftrace.gz"
    write_perfetto_file(str(json_path), str(pb_path))
    same_views(json_path, pb_path)


# --- packets built by hand --------------------------------------------------------------


class Packets:
    """A Perfetto trace written packet by packet."""

    def __init__(self) -> None:
        self.trace = Trace()

    def add(self, seq: int = 1, ts: int | None = None, **flags: Any) -> Any:
        packet = self.trace.packet.add(trusted_packet_sequence_id=seq, **flags)
        if ts is not None:
            packet.timestamp = ts
        return packet

    def thread(self, uuid: int, pid: int, tid: int, name: str = "") -> None:
        desc = self.add().track_descriptor
        desc.uuid = uuid
        desc.thread.pid, desc.thread.tid = pid, tid
        if name:
            desc.thread.thread_name = name

    def slice(self, track: int, begin: int, end: int, name: str, cat: str, **args: Any) -> Any:
        event = self.add(ts=begin).track_event
        event.type, event.track_uuid, event.name = SLICE_BEGIN, track, name
        event.categories.append(cat)
        for key, value in args.items():
            annotation = event.debug_annotations.add(name=key)
            if isinstance(value, int):
                annotation.int_value = value
            else:
                annotation.string_value = str(value)
        end_event = self.add(ts=end).track_event
        end_event.type, end_event.track_uuid = SLICE_END, track
        return event

    def write(self, path: Path) -> Path:
        path.write_bytes(self.trace.SerializeToString())
        return path


def args(model: Any, row: int) -> Any:
    return json.loads(model.raw_args(row))


def rows(model: Any) -> list[tuple[str, str, float, float, Any, Any]]:
    ev = model.events
    out = []
    for i in range(len(ev["ts"])):
        if ev["ph"][i] == Phase.COMPLETE:
            out.append(
                (
                    model.names[ev["name"][i]],
                    model.categories[ev["cat"][i]],
                    float(ev["ts"][i]),
                    float(ev["dur"][i]),
                    model.pids[ev["pid"][i]],
                    model.tids[ev["tid"][i]],
                )
            )
    return sorted(out, key=lambda r: (r[2], -r[3]))


def test_slices_nest_and_launches_link_to_kernels(tmp_path: Path) -> None:
    t = Packets()
    t.thread(1, 100, 101, "main")
    t.thread(2, 0, 7, "stream 7")
    op = t.slice(1, 1_000, 9_000, "aten::mm", "cpu_op", **{"External id": 5})
    launch = t.slice(1, 2_000, 3_500, "cudaLaunchKernel", "cuda_runtime", correlation=9)
    kernel = t.slice(2, 4_000, 8_000, "sm90_gemm", "kernel", correlation=9, device=0, stream=7)
    launch.flow_ids.append(77)
    kernel.terminating_flow_ids.append(77)
    del op
    model = build_model(str(t.write(tmp_path / "w.pftrace")))
    assert rows(model) == [
        ("aten::mm", "cpu_op", 1.0, 8.0, 100, 101),
        ("cudaLaunchKernel", "cuda_runtime", 2.0, 1.5, 100, 101),
        ("sm90_gemm", "kernel", 4.0, 4.0, 0, 7),
    ]
    assert model.thread_names == {"100/101": "main", "0/7": "stream 7"}
    ev = model.events
    flows = [
        (int(ev["ph"][i]), float(ev["ts"][i]), int(model.column_at("flow_id", i)))
        for i in range(len(ev["ts"]))
        if ev["kind"][i] == Kind.FLOW
    ]
    assert sorted(flows) == [(Phase.FLOW_START, 2.0, 77), (Phase.FLOW_END, 4.0, 77)]
    assert {
        model.names[ev["name"][i]] for i in range(len(ev["ts"])) if ev["kind"][i] == Kind.FLOW
    } == {"ac2g"}
    kernel_row = [i for i in range(len(ev["ts"])) if ev["kind"][i] == Kind.KERNEL][0]
    assert (
        int(model.column_at("correlation", kernel_row)),
        int(model.column_at("device", kernel_row)),
        int(model.column_at("stream", kernel_row)),
    ) == (9, 0, 7)


def test_perfettos_correlation_id_is_the_correlation_arg(tmp_path: Path) -> None:
    t = Packets()
    t.thread(1, 100, 101)
    t.thread(2, 0, 7)
    t.slice(1, 2_000, 3_000, "cudaLaunchKernel", "cuda_runtime").correlation_id = 9
    kernel = t.slice(2, 4_000, 8_000, "gemm", "kernel", device=0, stream=7)
    kernel.correlation_id = 9
    model = build_model(str(t.write(tmp_path / "w.pftrace")))
    assert sorted(int(c) for c in model.full_column("correlation")) == [9, 9]
    (row,) = model.complete_rows(Kind.KERNEL).tolist()
    assert args(model, row) == {"device": 0, "stream": 7, "correlation": 9}


def test_interned_names_are_per_sequence_and_reset_when_cleared(tmp_path: Path) -> None:
    t = Packets()
    t.thread(1, 10, 11)
    first = t.add(seq=3, ts=1_000, sequence_flags=1)
    first.interned_data.event_names.add(iid=1, name="aten::add")
    first.interned_data.event_categories.add(iid=1, name="cpu_op")
    first.interned_data.debug_annotation_names.add(iid=1, name="Input Dims")
    first.trace_packet_defaults.track_event_defaults.track_uuid = 1  # no track_uuid below
    event = first.track_event
    event.type, event.name_iid = SLICE_BEGIN, 1
    event.category_iids.append(1)
    dims = event.debug_annotations.add(name_iid=1)
    for shape in ([2, 3], [3]):
        inner = dims.array_values.add()
        for size in shape:
            inner.array_values.add(int_value=size)
    t.add(seq=3, ts=2_000).track_event.type = SLICE_END
    # Sequence 4 uses iid 1 for another name: tables are per sequence.
    other = t.add(seq=4, ts=3_000, sequence_flags=1)
    other.interned_data.event_names.add(iid=1, name="aten::mul")
    other.track_event.type, other.track_event.name_iid, other.track_event.track_uuid = INSTANT, 1, 1
    # Sequence 3 clears its state and names iid 1 anew.
    again = t.add(seq=3, ts=4_000, incremental_state_cleared=True)
    again.interned_data.event_names.add(iid=1, name="aten::sub")
    again.track_event.type, again.track_event.name_iid, again.track_event.track_uuid = INSTANT, 1, 1
    model = build_model(str(t.write(tmp_path / "w.pftrace")))
    assert rows(model) == [("aten::add", "cpu_op", 1.0, 1.0, 10, 11)]
    complete = int(model.complete_rows(Kind.CPU_OP)[0])
    assert args(model, complete) == {"Input Dims": [[2, 3], [3]]}
    names = sorted(
        model.names[n]
        for n, ph in zip(model.events["name"], model.events["ph"])
        if ph == Phase.INSTANT
    )
    assert names == ["aten::mul", "aten::sub"]


def test_annotation_values_of_every_encoding(tmp_path: Path) -> None:
    t = Packets()
    t.thread(1, 10, 11)
    packet = t.add(ts=1_000)
    packet.interned_data.debug_annotation_string_values.add(iid=4, str=b"float")
    event = packet.track_event
    event.type, event.track_uuid, event.name = INSTANT, 1, "[memory]"
    event.categories.append("cpu_instant_event")
    add = event.debug_annotations.add
    add(name="Bytes", int_value=-512)
    add(name="Addr", pointer_value=0xDEAD)
    add(name="dtype", string_value_iid=4)
    add(name="Total Allocated", double_value=2048.0)
    add(name="big", uint_value=2**64 - 1)
    add(name="ok", bool_value=True)
    add(name="legacy", legacy_json_value='{"a": [1, null]}')
    nested = add(name="nested").nested_value
    nested.nested_type = 1  # DICT
    nested.dict_keys.append("k")
    nested.dict_values.add(string_value="v")
    entries = add(name="entries")
    entries.dict_entries.add(name="x", int_value=1)
    model = build_model(str(t.write(tmp_path / "w.pb")))
    assert args(model, 0) == {
        "Bytes": -512,
        "Addr": "0xdead",
        "dtype": "float",
        "Total Allocated": 2048.0,
        "big": 2**64 - 1,
        "ok": True,
        "legacy": {"a": [1, None]},
        "nested": {"k": "v"},
        "entries": {"x": 1},
    }
    assert model.events["kind"][0] == Kind.MEMORY  # a [memory] instant, as in JSON


def test_counter_tracks_become_counter_events(tmp_path: Path) -> None:
    t = Packets()
    proc = t.add().track_descriptor
    proc.uuid, proc.process.pid, proc.process.process_name = 5, 42, "python"
    counter = t.add().track_descriptor
    counter.uuid, counter.parent_uuid, counter.name = 6, 5, "HBM bandwidth"
    counter.counter.SetInParent()
    for ts, value in ((1_000, 3.5), (2_000, 4.0)):
        event = t.add(ts=ts).track_event
        event.type, event.track_uuid, event.double_counter_value = COUNTER, 6, value
    model = build_model(str(t.write(tmp_path / "w.pb")))
    ev = model.events
    assert [int(k) for k in ev["kind"]] == [Kind.COUNTER, Kind.COUNTER]
    assert {model.names[n] for n in ev["name"]} == {"HBM bandwidth"}
    assert [args(model, i) for i in range(2)] == [{"value": 3.5}, {"value": 4.0}]
    assert model.pids[ev["pid"][0]] == 42 and model.process_names == {"42": "python"}


def test_metadata_packets_are_the_header(tmp_path: Path) -> None:
    t = Packets()
    bundle = t.add().chrome_events
    bundle.metadata.add(name="schemaVersion", int_value=1)
    bundle.metadata.add(
        name="deviceProperties",
        json_value='[{"id": 0, "name": "Intel(R) Data Center GPU Max 1550"}]',
    )
    bundle.metadata.add(name="with_stack", bool_value=False)
    bundle.metadata.add(name="trace_id", string_value="ab12")
    t.thread(1, 10, 11)
    t.slice(1, 1_000, 2_000, "step", "user_annotation")
    model = build_model(str(t.write(tmp_path / "w.pb")))
    assert model.header == {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "Intel(R) Data Center GPU Max 1550"}],
        "with_stack": False,
        "trace_id": "ab12",
    }


def test_damage_keeps_what_came_before_with_warnings(tmp_path: Path) -> None:
    t = Packets()
    t.thread(1, 10, 11)
    t.slice(1, 1_000, 2_000, "a", "cpu_op")
    t.slice(1, 3_000, 4_000, "b", "cpu_op")
    unended = t.add(ts=5_000).track_event
    unended.type, unended.track_uuid, unended.name = SLICE_BEGIN, 1, "open"
    stray = t.add(ts=5_500).track_event
    stray.type, stray.track_uuid = SLICE_END, 2  # a track with no descriptor, no begin
    data = t.trace.SerializeToString()
    whole = build_model(str(tmp_path.joinpath("w.pb").write_bytes(data) and tmp_path / "w.pb"))
    assert [r[0] for r in rows(whole)] == ["a", "b", "open"]
    assert rows(whole)[-1][3] == 0.5  # ends at the file's last timestamp, said so:
    assert any("had no end" in w for w in whole.warnings)
    assert any("had no begin" in w for w in whole.warnings)
    cut = tmp_path / "cut.pb.gz"
    cut.write_bytes(gzip.compress(data[: len(data) - 3]))
    partial = build_model(str(cut))
    assert partial.partial and any("ends inside a trace packet" in w for w in partial.warnings)
    assert [r[0] for r in rows(partial)][:2] == ["a", "b"]
    junk = tmp_path / "junk.pb"
    junk.write_bytes(b"\x0a\xff\xff\xff\xff\x0fnot a trace at all")
    with pytest.raises(TraceDecodeError):
        build_model(str(junk))


def test_compressed_packets_are_read(tmp_path: Path) -> None:
    inner = Packets()
    inner.thread(1, 10, 11)
    inner.slice(1, 1_000, 3_000, "a", "cpu_op")
    outer = Packets()
    outer.add().compressed_packets = zlib.compress(inner.trace.SerializeToString())
    model = build_model(str(outer.write(tmp_path / "w.pftrace")))
    assert rows(model) == [("a", "cpu_op", 1.0, 2.0, 10, 11)]


# --- which files are Perfetto traces -----------------------------------------------------


def test_discovery_lists_perfetto_files_and_not_an_xspace(tmp_path: Path) -> None:
    run = tmp_path / "job"
    run.mkdir()
    t = Packets()
    t.thread(1, 10, 11)
    t.slice(1, 1_000, 3_000, "ProfilerStep#1", "user_annotation")
    data = t.trace.SerializeToString()
    (run / "libkineto_activities_4242.pb.gz").write_bytes(gzip.compress(data))
    (run / "rank1.pftrace").write_bytes(data)
    # A real XSpace (JAX's profiler on an H100) also starts with field 1: not listed.
    shutil.copy(DATA / "jax" / "vm.xplane.pb", run / "vm.xplane.pb")
    (run / "notes.pb").write_bytes(b"\x08\x01")
    (runs,) = scan_logdir(str(tmp_path))
    assert sorted(w.name for w in runs.workers) == ["libkineto_activities_4242", "rank1"]
    assert FORMATS["perfetto"].sniff(data) and not FORMATS["perfetto"].sniff(
        (DATA / "jax" / "vm.xplane.pb").read_bytes()
    )


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_device_kinds_read_the_same_from_protobuf(backend: str, tmp_path: Path) -> None:
    """A built trace of each backend (XPU, MTIA, HPU, Neuron, PrivateUse1, unknown) in its
    protobuf form: the same device identity, launch links and views as its JSON form."""
    json_path = backend_trace(backend).write(tmp_path / "w.pt.trace.json")
    pb_path = tmp_path / "w.pftrace"
    write_perfetto_file(str(json_path), str(pb_path))
    same_views(json_path, pb_path)
    ident = device_identities(build_model(str(pb_path)))[0]
    assert (ident.kind, ident.short_label, ident.label) == EXPECTED[backend]


def test_damaged_protobuf_gives_a_model_or_a_decode_error(tmp_path: Path) -> None:
    """Bytes changed at random places (names no longer UTF-8, lengths and tags broken) and
    files cut anywhere: each load ends in a model (partial, with warnings) or in the
    loader's own error, never in another exception."""
    source = next((DATA / "h100" / "gemm_bf16").glob("*.pt.trace.json.gz"))
    data, _ = write_perfetto(json.loads(gzip.decompress(source.read_bytes())))
    rng = random.Random(37)
    path = tmp_path / "damaged.pb"
    for _ in range(120):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[: rng.randrange(len(damaged))]
        path.write_bytes(bytes(damaged))
        try:
            model = build_model(str(path))
        except TraceDecodeError:
            continue
        for name in model.names:
            assert isinstance(name, str)


def test_plugin_serves_a_protobuf_worker(tmp_path: Path) -> None:
    """In TensorBoard's own WSGI app: the worker loads, its views and trace-view tracks
    answer, and its download is the protobuf file itself."""
    run = tmp_path / "logs" / "job"
    run.mkdir(parents=True)
    source = next((DATA / "h100" / "gemm_bf16").glob("*.pt.trace.json.gz"))
    pb_path = run / "libkineto_activities_4242.pb.gz"
    write_perfetto_file(str(source), str(pb_path))
    write_perfetto_file(str(source), str(run / "rank1.pftrace"))
    client = PluginClient(tmp_path / "logs")
    try:
        key = {"run": "job", "worker": "libkineto_activities_4242", "span": "1"}
        status = client.wait_ready(**key)
        assert status["state"] == "ready" and "trace" in status["views"]
        overview = client.json("overview", **key)
        assert overview["average_breakdown_us"]["kernel"] > 0
        tracks = client.json("tracks", **key)["tracks"]
        assert any(t["kind"] == "gpu" and t["label"] == "GPU 0 stream 7" for t in tracks)
        download = client.get("download", **key)
        assert download.status_code == 200
        assert download.get_data() == pb_path.read_bytes()
        assert download.headers["Content-Type"].startswith("application/gzip")
        plain = {**key, "worker": "rank1"}
        client.wait_ready(**plain)
        download = client.get("download", **plain)
        assert download.headers["Content-Type"].startswith("application/octet-stream")
    finally:
        client.close()
