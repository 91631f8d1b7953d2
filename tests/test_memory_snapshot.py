"""The `memory_snapshot` view on built snapshots with known answers (see
`snapshot_builders.known_snapshot`), and on the real H100 snapshot with an OOM."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.memory.snapshot import device_views
from kinetoscope.analysis.memory.snapshot_alignment import align, alloc_times
from kinetoscope.analysis.memory.snapshot_view import memory_snapshot_view
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.ingest.snapshot import read_snapshot
from kinetoscope.store.run_context import RunContext
from kinetoscope.store.trace_store import TraceStore
from snapshot_builders import T0_US, SnapshotBuilder, known_snapshot

H100 = Path(__file__).parent / "data" / "h100" / "memory_snapshot"


def _device(snapshot: dict, device: int) -> dict:
    return next(d for d in device_views(snapshot) if d["device"] == device)


def test_peak_and_its_time_are_exact() -> None:
    d = _device(known_snapshot().snapshot(), 0)
    assert d["peak_allocated_bytes"] == 832
    assert d["peak_time_us"] == T0_US + 40
    assert d["baseline_bytes"] == 182
    assert d["history_entries"] == 11 and d["skipped_entries"] == 0


def test_stacks_at_the_peak_largest_first_with_fx_frames() -> None:
    d = _device(known_snapshot().snapshot(), 0)
    stacks = [
        (s["bytes"], s["count"], [f["name"] for f in s["frames"]]) for s in d["top_stacks_at_peak"]
    ]
    assert stacks == [
        (400, 2, ["alloc_c", "forward", "train"]),
        (300, 1, ["alloc_d", "train"]),
        (132, 2, []),  # A and H: allocated before the history, no stack
    ]
    first = d["top_stacks_at_peak"][0]["frames"][0]
    assert first == {
        "filename": "model.py",
        "line": 10,
        "name": "alloc_c",
        "fx": {"fx_node_op": "call_function", "fx_node_name": "mm_1"},
    }
    assert d["top_stacks_at_peak"][0]["frames"][1]["fx"] is None


def test_icicle_from_the_outermost_frame_largest_first() -> None:
    d = _device(known_snapshot().snapshot(), 0)
    nodes = [(n["parent"], n["depth"], n["name"], n["bytes"]) for n in d["icicle"]]
    assert nodes == [
        (-1, 0, "train", 700),
        (0, 1, "forward", 400),
        (1, 2, "alloc_c", 400),
        (0, 1, "alloc_d", 300),
        (-1, 0, "(no stack recorded)", 132),
    ]


def test_allocated_active_reserved_and_fragmentation_at_the_snapshot() -> None:
    d = _device(known_snapshot().snapshot(), 0)
    assert d["allocated_bytes_at_snapshot"] == 620
    assert d["active_bytes_at_snapshot"] == 652
    assert d["requested_bytes_at_snapshot"] == 596
    assert d["reserved_bytes"] == 9216
    assert d["inactive_bytes"] == 9216 - 652
    assert d["largest_inactive_block_bytes"] == 1000
    assert d["segments"] == 2


def test_timeline_ends_at_the_segments_state() -> None:
    d = _device(known_snapshot().snapshot(), 0)
    tl = d["timeline"]
    t = [None if x is None else int(x - T0_US) for x in tl["t_us"]]
    assert t == [10, 10, 20, 25, 30, 40, 60, 80]
    assert tl["active_bytes"] == [182, 382, 682, 682, 632, 832, 532, 596]
    assert tl["reserved_bytes"] == [8192] * 3 + [9216] * 5
    assert tl["active_bytes"][-1] == d["requested_bytes_at_snapshot"]
    assert tl["reserved_bytes"][-1] == d["reserved_bytes"]
    streams = {s["stream"]: s for s in tl["streams"]}
    assert streams[7]["active_bytes"] == [64]
    assert streams[7]["t_us"] == [T0_US + 80]
    assert streams[0]["active_bytes"] == [182, 382, 682, 632, 832, 532]


def test_ooms_with_the_free_memory_they_report() -> None:
    d = _device(known_snapshot().snapshot(), 0)
    assert d["oom_count"] == 1
    (oom,) = d["ooms"]
    assert oom["requested_bytes"] == 10**12
    assert oom["device_free"] == 12345
    assert oom["time_us"] == T0_US + 70
    assert [f["name"] for f in oom["frames"]] == ["alloc_f"]


def test_a_device_without_history_has_no_peak() -> None:
    d = _device(known_snapshot().snapshot(), 1)
    assert d["peak_allocated_bytes"] is None and d["peak_time_us"] is None
    assert d["top_stacks_at_peak"] == [] and d["icicle"] == []
    assert d["allocated_bytes_at_snapshot"] == 512
    assert d["reserved_bytes"] == 2048
    assert d["oom_count"] == 0


def test_wrong_shapes_are_skipped_and_counted() -> None:
    b = SnapshotBuilder()
    b.entry(0, "alloc", 0x10, 8, 1)
    b.entry(0, "alloc", 0x20, 8, 2)
    snap = b.snapshot()
    snap["device_traces"][0] += ["not an entry", {"action": "alloc", "addr": 0x30, "size": "8"}]
    snap["segments"] = [{"device": 0, "total_size": 64, "blocks": [None, {"size": True}]}]
    d = _device(snap, 0)
    assert d["skipped_entries"] == 2
    assert d["peak_allocated_bytes"] == 16
    assert d["reserved_bytes"] == 64 and d["allocated_bytes_at_snapshot"] == 0


def test_real_h100_snapshot() -> None:
    (d,) = device_views(read_snapshot(str(H100 / "snapshot.pickle")))
    assert d["history_entries"] == 2169
    assert d["oom_count"] == 1
    assert d["ooms"][0]["requested_bytes"] == 32 << 40  # the 32 TiB request
    assert d["ooms"][0]["device_free"] == 83999522816
    # The replay starts from the end state and must come back to it.
    assert d["timeline"]["active_bytes"][-1] == d["requested_bytes_at_snapshot"]
    assert d["peak_allocated_bytes"] == max(d["timeline"]["active_bytes"])
    assert d["top_stacks_at_peak"][0]["bytes"] >= d["top_stacks_at_peak"][1]["bytes"]
    assert sum(n["bytes"] for n in d["icicle"] if n["parent"] == -1) == d["peak_allocated_bytes"]


def test_real_snapshot_aligns_with_its_trace() -> None:
    (run,) = [r for r in scan_logdir(str(H100.parent)) if r.name == "memory_snapshot"]
    store = TraceStore(None)
    try:
        view = memory_snapshot_view(RunContext.of(run, store=store))
    finally:
        store.close()
    (snapshot,) = view["snapshots"]
    alignment = snapshot["alignment"]
    assert alignment["state"] == "aligned"
    # The trace's own GPU allocations are in the snapshot's history, on one clock.
    assert alignment["matched_allocations"] > 100
    assert abs(alignment["clock_offset_us"]) < 1000


def _trace_with_allocation(tmp_path: Path, base_ns: int | None, ts: float) -> TraceBuilder:
    t = TraceBuilder()
    if base_ns is not None:
        t.header["baseTimeNanoseconds"] = base_ns
    t.op("aten::empty", ts - 5, 10)
    t.memory(ts, 200, 0x3000, 200)
    return t


def test_alignment_states(tmp_path: Path) -> None:
    trace = known_snapshot().snapshot()["device_traces"][0]
    times = [float(e["time_us"]) for e in trace]
    allocs = alloc_times(trace)
    # The trace's allocation of 0x3000 at snapshot time +10 us, 3 us later on its clock.
    base_ns = (T0_US - 1_000_000) * 1000
    model = _trace_with_allocation(tmp_path, base_ns, 1_000_013).model(tmp_path, "a.json")
    a = align("w", "1", model, times, allocs)
    assert a["state"] == "aligned"
    assert a["trace_origin_us"] == T0_US - 1_000_000
    assert a["matched_allocations"] == 1 and a["clock_offset_us"] == -3.0
    later = _trace_with_allocation(tmp_path, base_ns + 10**12, 1_000_013).model(tmp_path, "b.json")
    assert align("w", "1", later, times, allocs)["state"] == "no_overlap"
    relative = _trace_with_allocation(tmp_path, None, 13).model(tmp_path, "c.json")
    unknown = align("w", "1", relative, times, allocs)
    assert unknown["state"] == "unknown" and "baseTimeNanoseconds" in unknown["reason"]


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_protocol_reads_the_same(tmp_path: Path, protocol: int) -> None:
    path = known_snapshot().write(tmp_path / "s.pickle", protocol=protocol)
    assert read_snapshot(str(path)) == pickle.loads(pickle.dumps(known_snapshot().snapshot()))
