"""Python frames nest by the profiler's own parent ids, and by time compared in whole
nanoseconds where there are none (analysis/core/python_stacks.py, analysis/core/host_ranges.py).

Real H100 traces (tracelens) end outer frames at the nanosecond their parent ends, but the
float sum `ts + dur` of the child rounds ~0.1 ns past the parent's: compared as floats, the
child was not inside its parent and the chains lost their outer frames."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_model, corpus_path
from independent.raw import read_raw
from kinetoscope.analysis.core.optree import op_tree
from kinetoscope.analysis.core.python_ranges import python_ranges_unkept
from kinetoscope.analysis.core.python_stacks import (
    _file_order,
    _frames_file_order,
    _id_parents,
    _ids_in_file_order,
    _python_ids,
    python_stacks,
)
from kinetoscope.analysis.flamegraph.view import flamegraph

H100 = [
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
]
# Two frames of the Qwen trace as written: the same end nanosecond, 1428625781296.515,
# but 1428625731533.343 + 49763.172 = 1428625781296.5151 in float64.
OUTER = ("threading.py(655): wait", 1428625731522.203, 49774.312)
INNER = ("threading.py(359): wait", 1428625731533.343, 49763.172)


def _chains(path: str, key: str = "name") -> dict[str, list]:
    """Per python event (by `Python id`), its frames' names (or ids) outwards via the
    parent ids, from the raw JSON."""
    raw = read_raw(corpus_path(path))
    events = [e for e in raw.events if e.get("cat") == "python_function" and e.get("ph") == "X"]
    by_id = {e["args"]["Python id"]: e for e in events}
    out = {}
    for e in events:
        chain, cur = [], e
        while cur is not None:
            chain.append(cur["name"] if key == "name" else cur["args"]["Python id"])
            cur = by_id.get(cur["args"].get("Python parent id"))
        out[str(e["args"]["Python id"])] = chain
    return out


def _stack_names(model, stacks, i: int) -> list[str]:
    names = []
    while i >= 0:
        names.append(stacks.frame_text[stacks.frame[i]])
        i = int(stacks.parent[i])
    return names


@pytest.mark.parametrize("path", H100)
def test_chains_follow_the_parent_ids(path: str) -> None:
    model = corpus_model(path)
    stacks = python_stacks(model, op_tree(model))
    assert stacks is not None
    want = _chains(path, key="id")
    ids = [json.loads(model.raw_args(int(r)))["Python id"] for r in stacks.rows.tolist()]
    assert len(ids) == len(want)

    def chain(i: int) -> list[int]:
        out = []
        while i >= 0:
            out.append(ids[i])
            i = int(stacks.parent[i])
        return out

    wrong = [i for i, pid in enumerate(ids) if chain(i) != want[str(pid)]]
    assert wrong == []


@pytest.mark.parametrize("path", H100)
def test_flame_paths_start_at_a_root_frame(path: str) -> None:
    """Every Python frame right under a thread (CPU) or at the top (GPU) of the flame graph
    is a frame the profiler recorded with no parent: no outer frame is lost."""
    raw = read_raw(corpus_path(path))
    roots = {
        e["name"]
        for e in raw.events
        if e.get("cat") == "python_function" and e["args"].get("Python parent id") is None
    }
    for metric in ("cpu", "gpu"):
        view = flamegraph(corpus_model(path), metric)
        frames, parent = view["frames"], view["node_parent"]
        kind = [frames[f]["kind"] for f in view["node_frame"]]
        tops = {
            frames[view["node_frame"][i]]["name"]
            for i in range(len(parent))
            if kind[i] == "python" and (parent[i] < 0 or kind[parent[i]] == "thread")
        }
        assert tops and {t.split(": ")[-1] for t in tops} <= {r.split(": ")[-1] for r in roots}, (
            metric
        )


def _nested_pair(t: TraceBuilder, ids: bool) -> None:
    name, ts, dur = OUTER
    t.python(name, ts, dur, args={"Python id": 1, "Python parent id": None} if ids else None)
    name, ts, dur = INNER
    t.python(name, ts, dur, args={"Python id": 2, "Python parent id": 1} if ids else None)
    t.op("aten::mul", INNER[1] + 5, 10)


@pytest.mark.parametrize("ids", [False, True])
def test_a_frame_ending_with_its_parent_nests(tmp_path: Path, ids: bool) -> None:
    """Without ids, by time in whole ns; with them, by the ids."""
    assert INNER[1] + INNER[2] > OUTER[1] + OUTER[2]  # the float sums cross
    t = TraceBuilder()
    _nested_pair(t, ids)
    model = t.model(tmp_path)
    stacks = python_stacks(model, op_tree(model))
    assert stacks is not None
    inner = [i for i in range(stacks.rows.size) if "359" in _stack_names(model, stacks, i)[0]][0]
    assert _stack_names(model, stacks, inner) == [INNER[0], OUTER[0]]


def test_the_ids_win_over_time(tmp_path: Path) -> None:
    """A frame the profiler says is a root stays one even where an earlier frame encloses
    it in time; an id naming a later event (a loop) falls back to time nesting."""
    t = TraceBuilder()
    t.python("a.py(1): outer", 1000.0, 100.0, args={"Python id": 1, "Python parent id": None})
    t.python("b.py(1): root", 1010.0, 10.0, args={"Python id": 2, "Python parent id": None})
    t.python("c.py(1): loop", 1012.0, 2.0, args={"Python id": 3, "Python parent id": 4})
    t.python("d.py(1): later", 1050.0, 2.0, args={"Python id": 4, "Python parent id": 3})
    model = t.model(tmp_path)
    stacks = python_stacks(model, op_tree(model))
    assert stacks is not None
    chains = {_stack_names(model, stacks, i)[0]: _stack_names(model, stacks, i) for i in range(4)}
    assert chains["b.py(1): root"] == ["b.py(1): root"]
    assert chains["c.py(1): loop"] == ["c.py(1): loop", "b.py(1): root"]
    # d names c, which sorts before it: taken, though c does not enclose d in time.
    assert chains["d.py(1): later"] == ["d.py(1): later", "c.py(1): loop", "b.py(1): root"]


@pytest.mark.parametrize("base", [0, 10**12])
def test_ids_far_apart_and_repeated(tmp_path: Path, base: int) -> None:
    """Ids counted from 0 are looked up in a table, ids far apart by a search: both give
    the first frame carrying an id (a repeated id names the first)."""
    t = TraceBuilder()
    t.python(
        "a.py(1): outer", 1000.0, 100.0, args={"Python id": base + 7, "Python parent id": None}
    )
    t.python(
        "b.py(1): first", 1010.0, 20.0, args={"Python id": base + 9, "Python parent id": base + 7}
    )
    t.python("c.py(1): again", 1040.0, 20.0, args={"Python id": base + 9, "Python parent id": None})
    t.python(
        "d.py(1): inner", 1045.0, 2.0, args={"Python id": base + 3, "Python parent id": base + 9}
    )
    model = t.model(tmp_path)
    stacks = python_stacks(model, op_tree(model))
    assert stacks is not None
    chains = {_stack_names(model, stacks, i)[0]: _stack_names(model, stacks, i) for i in range(4)}
    assert chains["b.py(1): first"] == ["b.py(1): first", "a.py(1): outer"]
    assert chains["c.py(1): again"] == ["c.py(1): again"]
    # d names id 9: its first frame, b, sorts before d, though c encloses d in time.
    assert chains["d.py(1): inner"] == ["d.py(1): inner", "b.py(1): first", "a.py(1): outer"]


def test_distinct_ids_far_apart(tmp_path: Path) -> None:
    """Distinct ids far apart (a search, not a table): a parent id naming the frame that
    encloses it in time is taken from there, one naming another frame is searched for,
    one naming no frame leaves the frame nested by time."""
    base, step = 10**8, 10**6
    t = TraceBuilder()
    frames = (
        ("a.py(1): outer", 1000.0, 100.0, 0, None),
        ("b.py(1): inner", 1010.0, 20.0, 1, 0),
        ("c.py(1): other", 1200.0, 100.0, 2, None),
        ("d.py(1): named", 1210.0, 10.0, 3, 1),
        ("e.py(1): lost", 1230.0, 10.0, 4, 99),
    )
    for name, ts, dur, own, up in frames:
        parent = None if up is None else base + step * up
        t.python(name, ts, dur, args={"Python id": base + step * own, "Python parent id": parent})
    model = t.model(tmp_path)
    stacks = python_stacks(model, op_tree(model))
    assert stacks is not None
    chains = {_stack_names(model, stacks, i)[0]: _stack_names(model, stacks, i) for i in range(5)}
    assert chains["b.py(1): inner"] == ["b.py(1): inner", "a.py(1): outer"]
    assert chains["d.py(1): named"] == ["d.py(1): named", "b.py(1): inner", "a.py(1): outer"]
    assert chains["e.py(1): lost"] == ["e.py(1): lost", "c.py(1): other"]


@pytest.mark.parametrize("path", H100)
def test_frames_places_from_a_table_are_the_counted_ones(path: str) -> None:
    """The frames' index rows placed by a table of the frames' rows (`_frames_file_order`)
    and by marking and counting every row (`_file_order`): the same rows and places."""
    model = corpus_model(path)
    rows = python_ranges_unkept(model).rows
    table = _frames_file_order(model, rows, np.dtype(np.int32))
    counted = _file_order(len(model), rows, np.dtype(np.int32))
    assert rows.size > 0
    for got, want in zip(table, counted):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _parents_both_ways(model) -> tuple:
    """The parent positions `_id_parents` finds with the ids known sorted in file order
    (`_ids_in_file_order`) and by the general search, from the same inputs."""
    ranges = python_ranges_unkept(model)
    py, file_pos = _file_order(len(model), ranges.rows, np.dtype(np.int32))
    by_id = _ids_in_file_order(model, py, file_pos)
    fast = _id_parents(_python_ids(model, ranges.rows), ranges.parent.astype(np.int32), by_id)
    general = _id_parents(_python_ids(model, ranges.rows), ranges.parent.astype(np.int32))
    return by_id, fast, general


@pytest.mark.parametrize("path", H100)
def test_ids_counting_up_need_no_search(path: str) -> None:
    """Python ids counting up in file order (every trace seen) are looked up in file
    order, with no sort and no table: the same parents, bit for bit, as the search."""
    by_id, fast, general = _parents_both_ways(corpus_model(path))
    assert by_id == []  # taken (and emptied) where the ids count up
    assert fast.dtype == general.dtype and fast.tobytes() == general.tobytes()


@pytest.mark.parametrize("base", [0, 10**9])
def test_ids_counting_up_with_gaps(tmp_path: Path, base: int) -> None:
    """Frames without ids among those with, an id naming no frame and a root: the ids
    known sorted give the search's parents."""
    t = TraceBuilder()
    frames = (
        ("a.py(1): outer", 1000.0, 100.0, 1, None),
        ("b.py(1): no id", 1005.0, 50.0, None, None),
        ("c.py(1): inner", 1010.0, 20.0, 5, 1),
        ("d.py(1): lost", 1012.0, 2.0, 6, 99),
        ("e.py(1): root", 1060.0, 10.0, 9, None),
        ("f.py(1): named", 1062.0, 2.0, 12, 5),
    )
    for name, ts, dur, own, up in frames:
        args = None if own is None else {"Python id": base + own, "Python parent id": up}
        if args is not None and up is not None:
            args["Python parent id"] = base + up
        t.python(name, ts, dur, args=args)
    model = t.model(tmp_path)
    by_id, fast, general = _parents_both_ways(model)
    assert by_id == []
    assert fast.tobytes() == general.tobytes()
    assert fast.tolist() != python_ranges_unkept(model).parent.tolist()  # the ids mattered
