"""The module view: a hand-built trace with every number worked out by hand, traces
without module information, and the corpus H100 traces recorded with every flag on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.tree_arrays import inherit_missing_at, inherit_missing_by_jumps
from kinetoscope.analysis.modules.endpoint import has_modules
from kinetoscope.analysis.modules.text import render_modules
from kinetoscope.analysis.modules.view import NO_MODULES, NO_PYTHON, modules
from kinetoscope.analysis.operators.view import operators
from kinetoscope.api.endpoints import span_pages, supported_views
from kinetoscope.model.categories import Kind

H100 = "tracelens/tests/traces/h100/"
H100_TRACES = [
    H100 + "gaunernst_bert-small-uncased__1016001.json.gz",
    H100 + "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
]


def op_with_kernel(t: TraceBuilder, name: str, ts: float, dur: float, kernel_us: float) -> int:
    """An op whose runtime call (at ts + 2, 1 µs) launches a kernel of `kernel_us`."""
    ext = t.op(name, ts, dur)
    t.launch(ts + 2, 1, ext, gpu_ts=ts + 5, gpu_dur=kernel_us)
    return ext


def nested_modules_trace() -> TraceBuilder:
    """Net_0 [0, 1000) holds Block_0 twice (the second call without the Python frame in
    between) and Head_0; Linear_0 sits in both Block_0 calls, so it is one path with
    two calls. aten::addmm is nested in aten::linear; aten::mul is outside every module."""
    t = TraceBuilder()
    t.python("nn.Module: Net_0", 0, 1000)
    t.python("nn.Module: Block_0", 100, 300)
    t.python("model.py(12): forward", 110, 280)  # a plain frame between two modules
    t.python("nn.Module: Linear_0", 120, 100)
    t.op("aten::linear", 130, 70)
    op_with_kernel(t, "aten::addmm", 140, 50, kernel_us=20)
    op_with_kernel(t, "aten::relu", 250, 20, kernel_us=4)
    t.python("nn.Module: Block_0", 500, 200)
    t.python("nn.Module: Linear_0", 510, 50)
    op_with_kernel(t, "aten::linear", 515, 40, kernel_us=10)
    op_with_kernel(t, "aten::add", 800, 50, kernel_us=3)
    t.python("nn.Module: Head_0", 900, 50)
    op_with_kernel(t, "aten::mul", 1100, 50, kernel_us=7)
    return t


def test_module_tree_by_hand(tmp_path: Path) -> None:
    model = nested_modules_trace().model(tmp_path)
    assert has_modules(model)
    view = modules(model)
    assert view["available"] and view["reason"] is None
    rows = {r["path"]: r for r in view["modules"]}
    # Depth first, siblings by host total: Block_0 (500) before Head_0 (50).
    assert [r["path"] for r in view["modules"]] == [
        "Net_0",
        "Net_0/Block_0",
        "Net_0/Block_0/Linear_0",
        "Net_0/Head_0",
    ]
    assert [(r["id"], r["parent"], r["depth"]) for r in view["modules"]] == [
        (0, -1, 0),
        (1, 0, 1),
        (2, 1, 2),
        (3, 0, 1),
    ]
    numbers = {
        path: (r["calls"], r["host_self_us"], r["host_total_us"])
        + (r["device_self_us"], r["device_total_us"])
        for path, r in rows.items()
    }
    assert numbers == {
        # 1000 - the Block_0 calls (300 + 200) - Head_0 (50); aten::add's 3 µs kernel
        # plus Block_0's 34 and Head_0's 0.
        "Net_0": (1, 450.0, 1000.0, 3.0, 37.0),
        # (300 - 100) + (200 - 50); aten::relu's 4 µs plus Linear_0's 30.
        "Net_0/Block_0": (2, 350.0, 500.0, 4.0, 34.0),
        # Two calls of 100 and 50 µs, no module inside; the kernels of 20 and 10 µs.
        "Net_0/Block_0/Linear_0": (2, 150.0, 150.0, 30.0, 30.0),
        "Net_0/Head_0": (1, 50.0, 50.0, 0.0, 0.0),
    }
    linear = rows["Net_0/Block_0/Linear_0"]
    assert (linear["name"], linear["module_type"]) == ("Linear_0", "Linear")
    # aten::addmm is inside aten::linear: counted in it, not listed beside it.
    assert linear["ops"] == [
        {"name": "aten::linear", "calls": 2, "host_total_us": 110.0, "device_total_us": 30.0}
    ]
    assert rows["Net_0/Block_0"]["ops"] == [
        {"name": "aten::relu", "calls": 1, "host_total_us": 20.0, "device_total_us": 4.0}
    ]
    assert rows["Net_0/Head_0"]["ops"] == []
    block = rows["Net_0/Block_0"]
    assert (block["first_start_us"], block["first_end_us"]) == (100.0, 400.0)
    assert model.names[model.events["name"][block["first_row"]]] == "nn.Module: Block_0"
    # Roots: Net_0 only; aten::mul's 7 µs kernel is outside every module.
    assert (view["module_count"], view["call_count"]) == (4, 6)
    assert (view["host_total_us"], view["device_total_us"]) == (1000.0, 37.0)
    assert operators(model)["device_self_us"] == 44.0


def test_same_module_on_two_threads_is_one_path(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.python("nn.Module: Net_0", 0, 100, tid=1)
    t.python("nn.Module: Net_0", 0, 60, tid=2)
    view = modules(t.model(tmp_path))
    assert [(r["path"], r["calls"], r["host_total_us"]) for r in view["modules"]] == [
        ("Net_0", 2, 160.0)
    ]


def test_python_frames_without_modules(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.python("train.py(3): main", 0, 100)
    op_with_kernel(t, "aten::add", 10, 20, kernel_us=5)
    model = t.model(tmp_path)
    assert not has_modules(model)
    view = modules(model)
    assert (view["available"], view["reason"], view["modules"]) == (False, NO_MODULES, [])


def test_trace_without_python_frames(tmp_path: Path) -> None:
    t = TraceBuilder()
    op_with_kernel(t, "aten::add", 10, 20, kernel_us=5)
    model = t.model(tmp_path)
    view = modules(model)
    assert (view["available"], view["reason"]) == (False, NO_PYTHON)
    assert (view["module_count"], view["host_total_us"], view["device_total_us"]) == (0, 0.0, 0.0)
    # The page is offered only where there is a tree (as Kernels and Memory are).
    assert "modules" not in span_pages(model) and "modules" not in supported_views(model)


# --- the corpus --------------------------------------------------------------------------


@pytest.mark.parametrize("rel", H100_TRACES)
def test_corpus_h100_sums(rel: str) -> None:
    model = corpus_model(rel)
    assert has_modules(model) and "modules" in span_pages(model)
    view = modules(model)
    assert view["available"]
    ev = model.events
    py = model.complete_rows(Kind.PYTHON)
    is_module = np.array([model.names[c].startswith("nn.Module: ") for c in ev["name"][py]])
    assert view["call_count"] == int(is_module.sum())
    assert sum(r["calls"] for r in view["modules"]) == view["call_count"]
    roots = [r for r in view["modules"] if r["parent"] < 0]
    # These traces have one forward call at the top: the root's time is its call's.
    assert len(roots) == 1 and roots[0]["calls"] == 1
    assert roots[0]["host_total_us"] == pytest.approx(float(ev["dur"][py[is_module]].max()))
    by_id = {r["id"]: r for r in view["modules"]}
    for r in view["modules"]:
        children = [c for c in view["modules"] if c["parent"] == r["id"]]
        assert r["device_total_us"] == pytest.approx(
            r["device_self_us"] + sum(c["device_total_us"] for c in children), abs=0.01
        )
        assert r["host_self_us"] <= r["host_total_us"] + 1e-6
        if r["parent"] >= 0:
            assert r["path"] == f"{by_id[r['parent']]['path']}/{r['name']}"
    # Every kernel of these inference traces is launched inside the model's forward: the
    # root's device time is the Operators view's device self time, all of it.
    assert view["device_total_us"] == pytest.approx(operators(model)["device_self_us"], abs=0.01)


@pytest.mark.parametrize("rel", H100_TRACES)
def test_corpus_module_ops_agree_with_operators(rel: str) -> None:
    """A module's listed ops are operator rows: summed over every module, each name's calls
    and device time are at most the Operators view's, and the same where every call of
    the name is listed (each one at a module's top level)."""
    model = corpus_model(rel)
    view = modules(model)
    ops_rows = {r["name"]: r for r in operators(model)["rows"]}
    listed: dict[str, list[float]] = {}
    for r in view["modules"]:
        for op in r["ops"]:
            sums = listed.setdefault(op["name"], [0, 0.0])
            sums[0] += op["calls"]
            sums[1] += op["device_total_us"]
    assert listed
    for name, (calls, device) in listed.items():
        assert calls <= ops_rows[name]["calls"]
        assert device <= ops_rows[name]["device_total_us"] + 0.01
        if calls == ops_rows[name]["calls"]:
            assert device == pytest.approx(ops_rows[name]["device_total_us"], abs=0.01)


def test_text_report_indents_the_first_levels(tmp_path: Path) -> None:
    text = render_modules(modules(nested_modules_trace().model(tmp_path)), depth=1)
    lines = text.splitlines()
    assert lines[0] == "Modules (3 of 4, to depth 1)"
    body = [line.split() for line in lines[3:]]
    # name, calls, host self/total ms, device self/total ms
    assert body == [
        ["Net_0", "1", "0.450", "1.000", "0.003", "0.037"],
        ["Block_0", "2", "0.350", "0.500", "0.004", "0.034"],
        ["Head_0", "1", "0.050", "0.050", "0.000", "0.000"],
    ]
    assert lines[4].startswith("  Block_0")
    assert NO_PYTHON in " ".join(render_modules(modules(TraceBuilder().model(tmp_path))).split())


def test_owner_jumps_match_a_walk_up() -> None:
    """Each Python frame's module call (`inherit_missing_by_jumps`; `inherit_missing_at`
    for some nodes): a node's own value, else the nearest ancestor's, else its root's own,
    as a walk up the parents gives it (random forests, nodes in any order, deep chains
    included)."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(1, 200))
        # Each node's parent an earlier node (or none), then the nodes shuffled.
        up = np.array(
            [int(rng.integers(-1, i)) if i and rng.random() < 0.9 else -1 for i in range(n)]
        )
        if trial % 3 == 0:  # a chain: the deepest nesting
            up = np.arange(-1, n - 1)
        perm = rng.permutation(n)
        place = np.argsort(perm)
        parent = np.where(up[perm] >= 0, place[np.maximum(up[perm], 0)], -1)
        values = np.where(rng.random(n) < 0.2, rng.integers(0, 50, n), -1 - (trial % 2))
        want = []
        for i in range(n):
            cur = i
            while values[cur] < 0 and parent[cur] >= 0:
                cur = parent[cur]
            want.append(int(values[cur]))
        assert inherit_missing_by_jumps(parent, values).tolist() == want
        # Some nodes only, walked up (a chain of 200: past the walk's passes, then jumps).
        nodes = np.flatnonzero(rng.random(n) < 0.3)
        assert inherit_missing_at(parent, values, nodes).tolist() == [want[i] for i in nodes]
    # A chain of 300 valued at its root only: walked 64 parents up, then the jumps.
    chain = np.arange(-1, 299)
    values = np.full(300, -1)
    values[0] = 7
    assert inherit_missing_at(chain, values, np.array([299, 150, 64, 0])).tolist() == [7] * 4
