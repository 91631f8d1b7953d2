"""The host-range index (one enclosing-op lookup for the op tree and memory attribution)
against the definitions written out by brute force, on random ranges with ties, zero
lengths and overlaps that do not nest."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from builders import CPU_PID, CPU_TID, TraceBuilder
from kinetoscope.analysis.core import comms, tree_arrays
from kinetoscope.analysis.core.common import thread_keys
from kinetoscope.analysis.core.host_ranges import HostRanges, host_ranges, op_ranges
from kinetoscope.analysis.core.optree import op_tree
from kinetoscope.analysis.core.python_ranges import python_frames_at, python_ranges
from kinetoscope.analysis.memory.index import memory_index
from kinetoscope.analysis.memory.view import memory
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.trace_view.workers import WorkerTrace

THREADS = (100, 101)


def random_trace(seed: int) -> TraceBuilder:
    rng = random.Random(seed)
    b = TraceBuilder()
    for _ in range(60):
        start = rng.randrange(0, 50)
        b.op(
            f"op{rng.randrange(4)}",
            start,
            rng.choice([0, 1, 2, 5, 10, 30]),
            tid=rng.choice(THREADS),
        )
    for _ in range(10):
        b.annotation("note", rng.randrange(0, 50), rng.randrange(0, 20), tid=rng.choice(THREADS))
    b.step(1, 0, 60)
    for _ in range(30):
        b.memory(rng.randrange(0, 60), 8, 1, 8, tid=rng.choice(THREADS))
    return b


def latest(ranges: HostRanges, ok: np.ndarray) -> int:
    found = np.flatnonzero(ok)
    return int(found[-1]) if found.size else -1


def brute_parent(r: HostRanges, i: int) -> int:
    target = r.end[i] if r.end[i] > r.start[i] else np.nextafter(r.end[i], np.inf)
    before = np.arange(len(r)) < i
    return latest(r, before & (r.thread == r.thread[i]) & (r.end >= target))


def brute_enclosing(r: HostRanges, thread: int, t0: float, t1: float) -> int:
    target = t1 if t1 > t0 else np.nextafter(t1, np.inf)
    sorts_before = (r.start < t0) | ((r.start == t0) & (r.end >= t1))
    return latest(r, (r.thread == thread) & sorts_before & (r.end >= target))


def brute_containing(
    r: HostRanges, thread: int, t: float, before: int | None = None, closed: bool = False
) -> int:
    ok = (r.thread == thread) & (r.start <= t) & ((t <= r.end) if closed else (t < r.end))
    if before is not None:
        ok &= np.arange(len(r)) < before
    return latest(r, ok)


def brute_around(r: HostRanges, thread: int, t: float, closed: bool) -> list[int]:
    """Every range of the thread containing t, latest (innermost) first."""
    ok = (r.thread == thread) & (r.start <= t) & ((t <= r.end) if closed else (t < r.end))
    return np.flatnonzero(ok)[::-1].tolist()


def test_lookups_match_their_definitions(tmp_path: Path) -> None:
    for seed in range(8):
        model = random_trace(seed).model(tmp_path, f"w{seed}.pt.trace.json")
        for ranges in (host_ranges(model), op_ranges(model)):
            assert [brute_parent(ranges, i) for i in range(len(ranges))] == ranges.parent.tolist()
            keys = np.unique(ranges.thread)
            rng = np.random.default_rng(seed)
            thread = rng.choice(np.append(keys, keys.max() + 1), 200)  # one with no ranges
            t0 = rng.integers(0, 60, 200).astype(np.float64)
            t0[::37] = np.nan  # inside no range
            t1 = t0 + rng.choice([0, 1, 3, 20], 200)
            expected = [brute_enclosing(ranges, k, a, b) for k, a, b in zip(thread, t0, t1)]
            assert ranges.enclosing(thread, t0, t1).tolist() == expected
            inner = ranges.containing(thread, t0)
            assert inner.tolist() == [brute_containing(ranges, k, a) for k, a in zip(thread, t0)]
            outer = ranges.containing_before(inner, t0)
            expected_outer = [
                brute_containing(ranges, k, a, before=int(p)) if p >= 0 else -1
                for k, a, p in zip(thread, t0, inner)
            ]
            assert outer.tolist() == expected_outer
            for closed in (False, True):
                inner = ranges.containing(thread, t0, closed)
                expected = [
                    brute_containing(ranges, k, a, closed=closed) for k, a in zip(thread, t0)
                ]
                assert inner.tolist() == expected
                query, at = ranges.outwards(inner, t0, closed)
                chains: list[list[int]] = [[] for _ in thread]
                for q, a in zip(query.tolist(), at.tolist()):
                    chains[q].append(a)
                assert chains == [brute_around(ranges, k, a, closed) for k, a in zip(thread, t0)]


def test_enclosing_by_blocks_of_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big lookup answered a block of queries at a time gives each query the answer
    it has alone (blocks of 7 here, threads and ties cut between blocks)."""
    model = random_trace(3).model(tmp_path, "w.pt.trace.json")
    ranges = host_ranges(model)
    rng = np.random.default_rng(3)
    thread = rng.choice(np.unique(ranges.thread), 300)
    t0 = rng.integers(0, 60, 300).astype(np.float64)
    t1 = t0 + rng.choice([0, 1, 3, 20], 300)
    expected = [brute_enclosing(ranges, k, a, b) for k, a, b in zip(thread, t0, t1)]
    monkeypatch.setattr(tree_arrays, "_QUERY_BLOCK", 7)
    assert ranges.enclosing(thread, t0, t1).tolist() == expected


def test_op_tree_and_memory_attribution_read_the_index(tmp_path: Path) -> None:
    """The op tree's parents are the index's; a memory event's op is the innermost
    positive-length cpu_op (ProfilerStep aside) containing it, its parent the next one out."""
    model = random_trace(3).model(tmp_path)
    tree, ranges = op_tree(model), host_ranges(model)
    assert tree.rows.tolist() == ranges.rows.tolist()
    index, ops = memory_index(model), op_ranges(model)
    inner = ops.containing(index.thread, index.ts)
    assert index.op.tolist() == np.where(inner >= 0, ops.rows[inner], -1).tolist()
    names = {model.names[int(c)] for c in model.events["name"][index.op[index.op >= 0]]}
    assert "ProfilerStep#1" not in names and "note" not in names


def test_memory_event_in_ops_that_overlap_without_nesting(tmp_path: Path) -> None:
    """Drift fix: among ops that overlap without nesting (a random trace's thread), the
    event at 50 belongs to the latest-started op containing it, [48, 58), as the memory
    index's rule says; its depth count used to pick [46, 76), and its parent [43, 53).
    The parent op is now the latest-started op around that one: [46, 76)."""
    ops = [(0, 30), (2, 30), (5, 30), (10, 10), (14, 5), (14, 30), (20, 10), (30, 2), (32, 5),
           (33, 1), (36, 30), (37, 5), (39, 5), (43, 10), (44, 1), (45, 5), (46, 30), (48, 2),
           (48, 10), (49, 1)]  # fmt: skip
    b = TraceBuilder()
    for start, dur in ops:
        b.op(f"[{start}, {start + dur})", start, dur)
    b.memory(50, 8, 1, 8)
    model = b.model(tmp_path)
    index = memory_index(model)
    op, parent = (model.names[int(model.events["name"][r])] for r in (index.op[0], index.parent[0]))
    assert (op, parent) == ("[48, 58)", "[46, 76)")


def test_comm_ops_around_a_launch(tmp_path: Path) -> None:
    """A communication kernel is described by the comm ops around its launch on the
    launching thread (closed: a launch at an op's last tick is inside it), innermost
    first: the first op that says a fact wins."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    # Launch at 50: an outer op, a nested one, one overlapping that without nesting
    # (starts later, ends after the outer one) and a zero-length one at the launch.
    b.op("c10d::allreduce_", 10, 100, **{"Process Group Name": "outer"})
    b.op("nccl:all_reduce", 40, 20, Seq=7)
    b.op("record_param_comms", 45, 155, Seq=9, **{"Group size": 4})
    b.launch(50, 5, b.new_id(), gpu_ts=60, gpu_dur=10, name="ncclDevKernel_Generic")
    b.op("record_param_comms", 50, 0, Seq=11)
    # Launch at 300, the last tick of the only op around it.
    b.op("nccl:broadcast", 250, 50)
    b.launch(300, 5, b.new_id(), gpu_ts=310, gpu_dur=10, name="ncclDevKernel_Generic")
    # Launch at 420 inside two ops that start together: the shorter is the inner one,
    # whatever the file order (the old per-thread search took the later in the file).
    b.op("nccl:all_gather", 400, 50)
    b.op("c10d::broadcast_", 400, 100)
    b.launch(420, 5, b.new_id(), gpu_ts=430, gpu_dur=10, name="ncclDevKernel_Generic")
    c = comms.extract(b.model(tmp_path))
    assert c.kind == ["all_reduce", "broadcast", "all_gather"]
    assert c.seq.tolist() == [11, -1, -1]  # the zero-length op at the launch is innermost
    assert c.pg == ["outer", "", ""]
    assert c.group_size.tolist() == [4, -1, -1]  # from the op that overlaps without nesting


def test_peak_op_chain_and_python_stack(tmp_path: Path) -> None:
    """The memory view's op at the peak lists every op of its thread containing the peak
    event (half-open; zero-length ops and ProfilerStep aside), outermost first, ops that
    overlap without nesting included; its Python stack the python_function events
    containing it, outermost first (equal starts: the longer outside)."""
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("a", 10, 50)
    b.op("b", 20, 20)  # inside a
    b.op("c", 30, 40)  # overlaps a and b without nesting
    b.op("e", 30, 20)  # starts with c, shorter: inside it
    b.op("zero", 35, 0)
    b.op("ended", 25, 10)  # ends at the event: not around it
    b.op("py_outer", 0, 100, cat="python_function")
    b.op("py_b", 30, 10, cat="python_function")
    b.op("py_a", 30, 30, cat="python_function")
    b.op("py_zero", 35, 0, cat="python_function")
    b.memory(35, 8, 1, 8)
    b.memory(80, -8, 1, 0)
    model = b.model(tmp_path)
    (device,) = memory(model, {})["devices"]
    peak = device["peak_op"]
    assert peak is not None
    assert (peak["name"], peak["ops"]) == ("e", ["a", "b", "c", "e"])
    assert (peak["stack"], peak["stack_source"]) == (
        ["py_outer", "py_a", "py_b"],
        "python_function",
    )


def test_flow_ends_bind_to_the_innermost_slice_around_them(tmp_path: Path) -> None:
    """A flow end binds to the latest-starting slice of its track containing it, closed
    (at a slice's end still inside it), by the host-range rule on the track's slices:
    overlaps without nesting, zero-length slices and equal starts included."""
    b = TraceBuilder()
    b.op("outer", 0, 100)
    b.op("a", 10, 40)
    b.op("b", 30, 40)  # overlaps a without nesting
    b.op("z", 40, 0)
    b.op("tie_short", 80, 10)  # written first, starts with tie_long: inside it
    b.op("tie_long", 80, 15)
    b.op("source", 0, 300, tid=CPU_TID + 1)
    ends = {40: "z", 45: "b", 85: "tie_short", 100: "outer", 150: None}
    for ident, ts in enumerate(ends, start=1):
        for ph, tid in (("s", CPU_TID + 1), ("f", CPU_TID)):
            event = {"ph": ph, "cat": "ac2g", "name": "ac2g", "id": ident, "pid": CPU_PID}
            b.events.append({**event, "tid": tid, "ts": ts, **({"bp": "e"} if ph == "f" else {})})
    model = b.model(tmp_path)
    endpoint = ENDPOINTS["flows"]
    view = endpoint.of_traces([WorkerTrace(None, model)], endpoint.decode({"tracks": "all"}))
    cols = view["flows"]
    bound = {
        ts: (model.names[int(model.events["name"][row])] if row >= 0 else None)
        for ts, row in zip(cols["dst_ts"], cols["dst_row"])
    }
    assert bound == ends
    assert {model.names[int(model.events["name"][r])] for r in cols["src_row"]} == {"source"}


def test_python_frames_at_one_time_are_the_index_chain(tmp_path: Path) -> None:
    """`python_frames_at` (the memory view's Python stack, read from one thread's frames)
    lists what the whole index's `outwards(containing(...))` lists: ties, zero lengths,
    frames that overlap without nesting and times on their ends included."""
    nested = 0
    for seed in range(6):
        rng = random.Random(seed)
        b = TraceBuilder()
        for _ in range(50):
            start = rng.randrange(0, 50) + rng.choice([0.0, 0.25, 0.0004])
            dur = rng.choice([0, 1, 2, 5, 10, 30]) + rng.choice([0.0, 0.0006])
            b.python(f"f{rng.randrange(6)}", 1000 + start, dur, tid=rng.choice(THREADS))
        model = b.model(tmp_path, f"p{seed}.pt.trace.json")
        ranges = python_ranges(model)
        times = [1000 + rng.randrange(0, 60) + rng.choice([0.0, 0.25, 0.0004]) for _ in range(40)]
        times += [float(s) for s in ranges.start[:20]] + [float(e) for e in ranges.end[:20]]
        for thread in np.unique(ranges.thread).tolist():
            for t in times:
                at = np.array([t])
                _, chain = ranges.outwards(ranges.containing(np.array([thread]), at), at)
                want = ranges.rows[chain[::-1]].tolist()
                assert python_frames_at(model, thread, t).tolist() == want, (seed, thread, t)
                nested += len(want) >= 2
    assert nested > 50  # times inside several frames at once were asked


def test_a_thread_written_as_text_and_as_number_is_one(tmp_path: Path) -> None:
    """Thread keys: tid "101" and 101 (2021 traces wrote op tids as text, memory tids as
    numbers) are one thread, pid likewise; distinct threads stay apart."""
    b = TraceBuilder()
    for name, ts, pid, tid in (
        ("a", 0, CPU_PID, "101"),
        ("b", 1, CPU_PID, 101),
        ("c", 20, CPU_PID, 102),
        ("d", 30, str(CPU_PID), 101),
    ):
        b.events.append(
            {"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": 1}
        )
    model = b.model(tmp_path)
    rows = np.flatnonzero(np.isin(model.events["name"], [model.name_code(n) for n in "abcd"]))
    key = dict(zip(model.names_of(rows), thread_keys(model, rows).tolist()))
    assert key["a"] == key["b"] == key["d"] != key["c"]
