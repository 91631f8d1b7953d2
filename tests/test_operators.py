"""Operator view and call stacks: exact answers on hand-built traces, the old plugin's
goldens, every corpus trace, real torch traces, the report contract."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import CPU_PID, TraceBuilder
from corpus import CORPUS, corpus_model, corpus_path, corpus_trace_model, corpus_traces
from kinetoscope.analysis.core.optree import op_tree
from kinetoscope.analysis.core.tree_arrays import previous_at_least, previous_reaching
from kinetoscope.analysis.kernels.endpoint import supports as kernels_supported
from kinetoscope.analysis.operators.view import (
    NO_KERNELS_CPU,
    callstacks,
    operators,
    shape_codes,
)
from kinetoscope.api.endpoints import VIEWS, ViewParamError, supported_views
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel


def rows_by_name(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in view["rows"]}


def python_frame(t: TraceBuilder, name: str, ts: float, dur: float, tid: int = 100) -> None:
    t.python(name, ts, dur, tid)


# --- hand-built traces ---------------------------------------------------------------------


def nested_trace() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0, 1000)
    linear = t.op("aten::linear", 10, 100)
    # linear's own runtime: a memcpy launched directly by it
    t.launch(12, 3, linear, kind="gpu_memcpy", gpu_ts=200, gpu_dur=7, name="Memcpy HtoD")
    addmm = t.op("aten::addmm", 20, 60)
    t.launch(30, 5, addmm, gpu_ts=300, gpu_dur=50, name="volta_sgemm_128x64_nn")
    t.launch(40, 4, addmm, gpu_ts=360, gpu_dur=20, name="ampere_fp16_s16816gemm_fp16_64x64")
    t.op("aten::t", 85, 10)
    t.op("aten::relu", 120, 30)
    return t


def test_self_and_total_by_hand(tmp_path: Path) -> None:
    view = operators(nested_trace().model(tmp_path))
    rows = rows_by_name(view)
    assert "ProfilerStep#1" not in rows
    linear, addmm, tee = rows["aten::linear"], rows["aten::addmm"], rows["aten::t"]
    # linear [10,110): children addmm [20,80) and t [85,95); own runtime 3 us.
    assert linear["host_total_us"] == 100
    assert linear["host_self_us"] == 100 - 60 - 10 - 3
    # addmm: two runtime calls of 5 and 4 us.
    assert addmm["host_total_us"] == 60 and addmm["host_self_us"] == 60 - 9
    assert tee["host_self_us"] == tee["host_total_us"] == 10
    # Device: addmm launched 50 + 20; linear itself launched the 7 us memcpy.
    assert addmm["device_self_us"] == addmm["device_total_us"] == 70
    assert linear["device_self_us"] == 7 and linear["device_total_us"] == 77
    assert tee["device_total_us"] == 0
    # Tensor cores: addmm and linear are eligible by name, t and relu are not; only the
    # s16816 kernel runs on tensor cores.
    assert addmm["tensor_core_eligible"] and linear["tensor_core_eligible"]
    assert not tee["tensor_core_eligible"] and not rows["aten::relu"]["tensor_core_eligible"]
    assert addmm["tensor_core_self_us"] == 20 and linear["tensor_core_total_us"] == 20
    assert linear["calls"] == 1 and linear["host_total_avg_us"] == 100
    # rows sorted by device self time
    assert [r["name"] for r in view["rows"]][:2] == ["aten::addmm", "aten::linear"]
    assert view["kernel_view_absent_reason"] is None
    assert view["op_count"] == 4 and view["device_self_us"] == 77


def test_eligible_through_a_child(tmp_path: Path) -> None:
    t = TraceBuilder()
    outer = t.annotation("my_block", 0, 100)
    inner = t.op("aten::matmul", 10, 50)
    t.op("aten::mm", 20, 30)
    t.op("aten::add", 70, 10)
    del outer, inner
    rows = rows_by_name(operators(t.model(tmp_path)))
    assert rows["my_block"]["tensor_core_eligible"]  # via its matmul child
    assert not rows["aten::add"]["tensor_core_eligible"]
    # an op that launched a tensor-core kernel is eligible whatever its name
    t2 = TraceBuilder()
    op = t2.op("my::custom_gemm", 0, 50)
    t2.launch(10, 2, op, gpu_ts=60, gpu_dur=5, name="sm90_xmma_gemm_bf16bf16_bf16f32")
    assert operators(t2.model(tmp_path, "b.pt.trace.json"))["rows"][0]["tensor_core_eligible"]


def test_overlapping_ranges_do_not_break_the_tree(tmp_path: Path) -> None:
    """Rule: a range that ends after the range it starts in is not its child; it goes
    under the innermost range that contains it. Parents subtract the union of their
    children, so overlapping siblings are not subtracted twice. The old plugin dropped
    such a range."""
    t = TraceBuilder()
    t.op("parent", 0, 100)
    t.op("a", 10, 40)  # [10, 50)
    t.op("crossing", 45, 15)  # [45, 60): starts in a, ends after it
    t.op("inside_crossing", 50, 5)  # [50, 55): in both a and crossing: innermost is crossing
    t.op("b", 70, 20)
    rows = rows_by_name(operators(t.model(tmp_path)))
    assert {r["calls"] for r in rows.values()} == {1}
    # parent's children: a, crossing, b; union [10,60) + [70,90) = 70
    assert rows["parent"]["host_self_us"] == 30
    assert rows["a"]["host_self_us"] == 40  # nothing is its child
    assert rows["crossing"]["host_self_us"] == 10


def test_siblings_touching_and_zero_length_ops(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("first", 0, 10)
    t.op("second", 10, 10)  # starts when first ends: a sibling, not a child
    t.op("instant_at_end", 20, 0)  # zero length at second's end: not inside second
    t.op("instant_inside", 15, 0)  # strictly inside second
    rows = rows_by_name(operators(t.model(tmp_path)))
    assert rows["first"]["host_self_us"] == 10
    assert rows["second"]["host_self_us"] == 10  # zero-length child subtracts nothing
    model = t.model(tmp_path, "b.pt.trace.json")
    tree = op_tree(model)
    names = model.names_of(tree.rows)
    parent_of = {n: (names[p] if p >= 0 else None) for n, p in zip(names, tree.parent.tolist())}
    assert parent_of == {
        "first": None,
        "second": None,
        "instant_inside": "second",
        "instant_at_end": None,
    }


def test_same_named_single_child_is_folded(tmp_path: Path) -> None:
    t = TraceBuilder()
    outer = t.op("aten::add_", 0, 20)
    t.op("aten::add_", 2, 15)  # the dispatcher's redispatch: one call, as torch counts it
    t.launch(5, 2, outer, gpu_ts=30, gpu_dur=4)
    t.op("aten::copy_", 40, 20)
    t.op("aten::copy_", 42, 5)  # two same-named children: not folded
    t.op("aten::copy_", 50, 5)
    rows = rows_by_name(operators(t.model(tmp_path)))
    add = rows["aten::add_"]
    assert add["calls"] == 1 and add["host_total_us"] == 20
    assert add["host_self_us"] == 20 - 2  # the folded child's time is the op's own
    assert add["device_self_us"] == 4
    assert rows["aten::copy_"]["calls"] == 3


def test_a_chain_of_same_named_single_children_folds_into_its_top(tmp_path: Path) -> None:
    t = TraceBuilder()
    outer = t.op("aten::to", 0, 40)
    t.op("aten::to", 2, 30)  # each the single same-named child of the one before
    t.op("aten::to", 4, 20)
    t.op("aten::to", 6, 10)
    t.launch(7, 2, outer, gpu_ts=50, gpu_dur=4)
    model = t.model(tmp_path)
    tree = op_tree(model)
    assert int(tree.folded.sum()) == 3
    add = rows_by_name(operators(model))["aten::to"]
    assert add["calls"] == 1 and add["host_total_us"] == 40
    assert add["host_self_us"] == 40 - 2 and add["device_self_us"] == 4


def test_runtime_attachment_rules(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("aten::mm", 0, 50, external_id=500)
    t.op("aten::add", 100, 50, external_id=600)
    # A 2022-style runtime: its External id is the correlation id, which names aten::mm
    # by chance, but the call lies inside aten::add: time decides.
    corr = 500
    t.events.append(
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": CPU_PID,
            "tid": 100,
            "ts": 110,
            "dur": 5,
            "args": {"External id": 500, "correlation": corr},
        }
    )
    t.events.append(
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k_add",
            "pid": 0,
            "tid": 7,
            "ts": 120,
            "dur": 9,
            "args": {"External id": 500, "correlation": corr, "device": 0, "stream": 7},
        }
    )
    # A runtime outside every op belongs to none.
    t.launch(300, 5, 0, gpu_ts=310, gpu_dur=11, name="k_orphan")
    rows = rows_by_name(operators(t.model(tmp_path)))
    assert rows["aten::add"]["device_self_us"] == 9
    assert rows["aten::add"]["host_self_us"] == 45
    assert rows["aten::mm"]["device_self_us"] == 0 and rows["aten::mm"]["host_self_us"] == 50


def test_runtime_inside_an_annotation_is_subtracted_once(tmp_path: Path) -> None:
    """A runtime call belongs to its op (External id) for device time, a collective's to
    the innermost communication op around it; its host time is subtracted once, from the
    innermost range containing it: the annotation between the op and the call."""
    t = TraceBuilder()
    allreduce = t.op("c10d::allreduce_", 0, 100)
    t.op("record_param_comms", 10, 80)  # [10, 90)
    t.launch(20, 30, allreduce, gpu_ts=200, gpu_dur=40, name="ncclDevKernel_AllReduce")
    compiled = t.op("CompiledFunction", 300, 100)
    t.annotation("Torch-Compiled Region", 310, 60)  # [310, 370)
    t.annotation("## Call CompiledFxGraph abc ##", 320, 40)  # [320, 360)
    t.launch(330, 10, compiled, gpu_ts=400, gpu_dur=25, name="triton_poi_fused_add_0")
    t.launch(380, 5, compiled, gpu_ts=430, gpu_dur=5, name="triton_poi_fused_mul_1")
    rows = rows_by_name(operators(t.model(tmp_path)))
    # allreduce [0,100): child [10,90) covers its runtime call; nothing else to subtract.
    assert rows["c10d::allreduce_"]["host_self_us"] == 100 - 80
    assert rows["record_param_comms"]["host_self_us"] == 80 - 30
    # A collective's kernel belongs to the innermost communication op around its launch
    # (optree.collective_owner), whatever op the External id names.
    assert rows["c10d::allreduce_"]["device_self_us"] == 0
    assert rows["record_param_comms"]["device_self_us"] == 40
    # CompiledFunction [300,400): child [310,370), own call [380,385) directly inside it.
    assert rows["CompiledFunction"]["host_self_us"] == 100 - 60 - 5
    assert rows["Torch-Compiled Region"]["host_self_us"] == 60 - 40
    assert rows["## Call CompiledFxGraph abc ##"]["host_self_us"] == 40 - 10
    assert rows["CompiledFunction"]["device_self_us"] == 30
    # Every runtime call is subtracted once: self times add up to the roots' totals.
    assert sum(r["host_self_us"] for r in rows.values()) == 100 + 100 - 30 - 10 - 5


def test_backward_thread_is_its_own_tree(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 1000)
    t.annotation("## backward ##", 100, 500)
    bwd = 24922
    t.op("autograd::engine::evaluate_function: AddmmBackward0", 200, 145, tid=bwd)
    t.op("AddmmBackward0", 202, 102, tid=bwd)
    mm = t.op("aten::mm", 208, 58, tid=bwd)
    t.launch(250, 10, mm, gpu_ts=400, gpu_dur=45)
    t.events[-2]["tid"] = bwd  # the runtime call runs on the backward thread
    rows = rows_by_name(operators(t.model(tmp_path)))
    assert rows["## backward ##"]["host_self_us"] == 500  # nothing of the other thread
    assert rows["## backward ##"]["device_total_us"] == 0
    assert rows["aten::mm"]["device_self_us"] == 45
    assert rows["AddmmBackward0"]["device_total_us"] == 45
    assert rows["autograd::engine::evaluate_function: AddmmBackward0"]["host_self_us"] == 43


def test_hta_backward_thread_trace() -> None:
    model = corpus_model("hta/tests/data/call_stack/backward_thread.json")
    rows = rows_by_name(operators(model))
    assert rows["aten::mm"]["device_self_us"] == 45
    assert rows["aten::mm"]["host_self_us"] == 58 - 10  # its launch, matched by time
    assert rows["AddmmBackward0"]["device_total_us"] == 45
    assert rows["autograd::engine::evaluate_function: AddmmBackward0"]["device_total_us"] == 45
    assert rows["## backward ##"]["device_total_us"] == 0
    assert rows["AddmmBackward0"]["tensor_core_eligible"]


def test_group_by_shape(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("aten::mm", 0, 10, **{"Input Dims": [[2, 3], [3, 4]]})
    t.op("aten::mm", 20, 30, **{"Input Dims": [[2, 3], [3, 4]]})
    t.op("aten::mm", 60, 5, **{"Input Dims": [[8, 8], [8, 8]]})
    t.op("aten::mm", 70, 1)  # no shape recorded
    t.op("aten::add", 80, 2, **{"Input dims": [[5], []]})  # 2020-21 spelling
    path = t.write(tmp_path / "w.pt.trace.json")
    # Whitespace and newlines inside the list do not make another shape.
    text = path.read_text().replace("[[2, 3], [3, 4]]", "[ [2,3],\n [3, 4] ]", 1)
    path.write_text(text)
    view = operators(build_model(str(path)), "shape")
    assert view["group_by"] == "shape"
    got = {(r["name"], json.dumps(r["input_shape"])): r["calls"] for r in view["rows"]}
    assert got == {
        ("aten::mm", "[[2, 3], [3, 4]]"): 2,
        ("aten::mm", "[[8, 8], [8, 8]]"): 1,
        ("aten::mm", "null"): 1,
        ("aten::add", "[[5], []]"): 1,
    }
    mm = next(r for r in view["rows"] if r["input_shape"] == [[2, 3], [3, 4]])
    assert mm["host_total_us"] == 40 and mm["host_total_avg_us"] == 20


def test_shapes_by_regex_equal_decoded_args() -> None:
    """Shapes are read with one regex pass over the raw args; they must equal what
    decoding each op's args gives."""
    import msgspec

    class Dims(msgspec.Struct):
        a: Any = msgspec.field(default=None, name="Input Dims")
        b: Any = msgspec.field(default=None, name="Input dims")

    for rel in (
        "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_fp16_dp/worker0_round1.pt.trace.json.gz",
        "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    ):
        model = corpus_model(rel)
        rows = op_tree(model).rows
        codes, shapes = shape_codes(model, rows)
        decoded = [a.a if a.a is not None else a.b for a in model.args_of(rows, Dims)]
        assert [shapes[c] for c in codes.tolist()] == decoded, rel


def test_python_stacks_by_hand(tmp_path: Path) -> None:
    t = TraceBuilder()
    python_frame(t, "train.py(10): <module>", 0, 1000)
    python_frame(t, "train.py(5): step", 10, 400)
    python_frame(t, "nn.Module: Linear_0", 20, 100)
    python_frame(t, "torch/nn/modules/linear.py(124): forward", 21, 98)
    python_frame(t, "<built-in function linear>", 22, 96)
    first = t.op("aten::linear", 23, 90)
    t.launch(30, 2, first, gpu_ts=40, gpu_dur=10)
    python_frame(t, "nn.Module: Linear_1", 200, 100)  # another layer, same code
    python_frame(t, "torch/nn/modules/linear.py(124): forward", 201, 98)
    python_frame(t, "<built-in function linear>", 202, 96)
    t.op("aten::linear", 203, 90)
    python_frame(t, "train.py(7): other", 500, 100)
    t.op("aten::linear", 510, 10)
    t.op("aten::linear", 2000, 10)  # outside every frame: no stack
    model = t.model(tmp_path)
    view = operators(model)
    assert view["call_stack_source"] == "python_function"
    assert rows_by_name(view)["aten::linear"]["has_call_stack"]
    stacks = callstacks(model, "aten::linear")
    assert stacks["source"] == "python_function" and stacks["calls"] == 4
    by_calls = sorted(stacks["stacks"], key=lambda s: -s["calls"])
    layer = by_calls[0]
    assert layer["calls"] == 2 and layer["host_total_us"] == 180
    assert layer["device_self_us"] == 10
    assert layer["frames"] == [
        {"file": None, "line": None, "function": "<built-in function linear>"},
        {"file": "torch/nn/modules/linear.py", "line": 124, "function": "forward"},
        {"file": None, "line": None, "function": "nn.Module: Linear"},
        {"file": "train.py", "line": 5, "function": "step"},
        {"file": "train.py", "line": 10, "function": "<module>"},
    ]
    frames = sorted(len(s["frames"]) for s in stacks["stacks"])
    assert frames == [0, 2, 5]
    assert sum(s["calls"] for s in stacks["stacks"]) == 4


def test_call_stack_arg_by_hand(tmp_path: Path) -> None:
    t = TraceBuilder()
    stack_a = "/x/model.py(40): forward;/x/train.py(9): main;train.py(3): <module>"
    stack_b = "/x/model.py(41): forward;/x/train.py(9): main"
    t.op("aten::conv2d", 0, 10, **{"Call stack": stack_a, "Input Dims": [[1, 3, 8, 8]]})
    t.op("aten::conv2d", 20, 20, **{"Call stack": stack_a, "Input Dims": [[1, 3, 8, 8]]})
    t.op("aten::conv2d", 50, 5, **{"Call stack": stack_b, "Input Dims": [[2, 3, 8, 8]]})
    t.op("aten::conv2d", 60, 5)  # backward-like: no stack
    t.op("aten::relu", 70, 5)
    model = t.model(tmp_path)
    view = operators(model)
    assert view["call_stack_source"] == "call_stack_arg"
    rows = rows_by_name(view)
    assert rows["aten::conv2d"]["has_call_stack"] and not rows["aten::relu"]["has_call_stack"]
    stacks = callstacks(model, "aten::conv2d")
    assert stacks["source"] == "call_stack_arg"
    got = {len(s["frames"]): (s["calls"], s["host_total_us"]) for s in stacks["stacks"]}
    assert got == {3: (2, 30), 2: (1, 5), 0: (1, 5)}
    top = next(s for s in stacks["stacks"] if len(s["frames"]) == 3)
    assert top["frames"][0] == {"file": "/x/model.py", "line": 40, "function": "forward"}
    assert top["frames"][-1] == {"file": "train.py", "line": 3, "function": "<module>"}
    shaped = callstacks(model, "aten::conv2d", [[2, 3, 8, 8]], by_shape=True)
    assert shaped["calls"] == 1 and shaped["input_shape"] == [[2, 3, 8, 8]]
    assert [len(s["frames"]) for s in shaped["stacks"]] == [2]
    assert callstacks(model, "no::such_op")["stacks"] == []


def test_stack_flag_is_set_at_ingest_for_non_empty_text_only(tmp_path: Path) -> None:
    """The flag the Operators page reads is a column filled while decoding (no scan of the
    raw args per view): only a non-empty text value counts as a recorded stack."""
    t = TraceBuilder()
    t.op("aten::a", 0, 5, **{"Call stack": "m.py(1): f"})
    t.op("aten::b", 10, 5, **{"Call stack": ""})
    t.op("aten::c", 20, 5, **{"Call stack": ["m.py(1): f"]})
    t.op("aten::d", 30, 5, **{"Input Dims": [[1]], "note": '"Call stack": "not a key"'})
    model = t.model(tmp_path)
    flags = zip(model.events["name"], model.events["has_stack"])
    by_name = {model.names[code]: bool(flag) for code, flag in flags}
    assert {k: v for k, v in by_name.items() if k.startswith("aten::")} == {
        "aten::a": True,
        "aten::b": False,
        "aten::c": False,
        "aten::d": False,
    }
    rows = rows_by_name(operators(model))
    assert [n for n in sorted(rows) if rows[n]["has_call_stack"]] == ["aten::a"]


def test_view_parameters(tmp_path: Path) -> None:
    model = nested_trace().model(tmp_path)
    ops = VIEWS["operators"]
    assert ops.compute(model, {})["group_by"] == "name"
    assert ops.compute(model, {"group_by": "shape"})["group_by"] == "shape"
    with pytest.raises(ViewParamError):
        ops.compute(model, {"group_by": "stack"})
    stacks = VIEWS["callstacks"]
    assert not stacks.in_report
    with pytest.raises(ViewParamError):
        stacks.compute(model, {})
    with pytest.raises(ViewParamError):
        stacks.compute(model, {"name": "aten::mm", "input_shape": "[[1,"})
    out = stacks.compute(model, {"name": "aten::addmm", "input_shape": "null"})
    assert out["calls"] == 1  # no Input Dims recorded: the shape group is null
    assert "operators" in supported_views(model) and "callstacks" not in supported_views(model)


# --- previous_at_least (the parent search) ------------------------------------------------


def test_previous_at_least_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 31, 32, 33, 64, 65, 500, 3000):
        values = rng.integers(0, 30, n).astype(float)
        values[rng.random(n) < 0.1] = -np.inf
        targets = rng.integers(0, 30, n).astype(float)
        expected = np.full(n, -1)
        for i in range(n):
            for j in range(i - 1, -1, -1):
                if values[j] >= targets[i]:
                    expected[i] = j
                    break
        assert previous_at_least(values, targets).tolist() == expected.tolist(), n


def brute_previous_at_least(values: np.ndarray, targets: np.ndarray) -> list[int]:
    found = [np.flatnonzero(values[:i] >= targets[i]) for i in range(values.size)]
    return [int(f[-1]) if f.size else -1 for f in found]


def test_previous_reaching_matches_brute_force() -> None:
    """The parent search's chain skipping: targets at a value or the float just above it,
    +inf sentinels, nesting deeper than its passes, and NaN (the block search answers)."""
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 33, 500, 3000):
        values = rng.integers(0, 30, n).astype(float)
        values[rng.random(n) < 0.1] = np.inf
        targets = np.where(rng.random(n) < 0.5, values, np.nextafter(values, np.inf))
        assert previous_reaching(values, targets).tolist() == brute_previous_at_least(
            values, targets
        ), n
    chain = np.arange(300, 0, -1.0)  # each nested in the one before, then a sibling of all
    deep = np.concatenate([[np.inf], chain, [300.5], chain])
    assert previous_reaching(deep, deep).tolist() == brute_previous_at_least(deep, deep)
    with_nan = np.array([5.0, np.nan, 3.0, 4.0])
    assert previous_reaching(with_nan, with_nan).tolist() == [-1, -1, 0, 0]


# --- the old plugin's answers ----------------------------------------------------------------

SAMPLES = "pytorch-kineto/tb_plugin/samples"
GOLDEN_FILES = {
    2: f"{SAMPLES}/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    7: f"{SAMPLES}/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
}


@pytest.mark.parametrize("line", sorted(GOLDEN_FILES))
def test_matches_the_old_plugin_goldens(line: int) -> None:
    golden_path = corpus_path("goldens/tb_plugin_result_check_file.txt")
    lines = golden_path.read_text().splitlines()
    table = json.loads(lines[line])["data"]
    pies = json.loads(lines[line - 1])
    ours = rows_by_name(operators(corpus_model(GOLDEN_FILES[line])))
    for g in table:
        o = ours[g["name"]]
        assert o["calls"] == g["calls"], g["name"]
        for old, new in (
            ("host_self_duration", "host_self_us"),
            ("host_total_duration", "host_total_us"),
            ("device_self_duration", "device_self_us"),
            ("device_total_duration", "device_total_us"),
        ):
            assert o[new] == pytest.approx(g[old], rel=0.005, abs=0.5), (g["name"], old)
        assert o["tensor_core_eligible"] == (g["tc_eligible"] == "Yes"), g["name"]
        assert o["has_call_stack"] == g["has_call_stack"], g["name"]
        ratio = o["tensor_core_self_us"] / o["device_self_us"] if o["device_self_us"] else 0
        assert ratio == pytest.approx(g["tc_self_ratio"], abs=1e-6)
    # The old plugin hid these ranges from its table; we keep them as rows.
    assert set(ours) - {g["name"] for g in table} == {
        n for n in ours if n.startswith(("Optimizer.", "enumerate(DataLoader)#"))
    }
    # Its pie charts: the top rows by each measure.
    for pie, key in (
        ("device_self_time", "device_self_us"),
        ("host_total_time", "host_total_us"),
    ):
        for name, value in pies[pie]["rows"]:
            assert ours[name][key] == pytest.approx(value, rel=0.005, abs=0.5)


def _profile_goldens() -> list[tuple[str, str]]:
    out = []
    for path in sorted(glob.glob(str(CORPUS / "goldens" / "*..profile.json"))):
        run = Path(path).name.split("..")[0]
        for worker in ("worker0", "worker1"):
            found = glob.glob(
                str(
                    CORPUS
                    / "gaoteng-git-kineto/tb_plugin/test/data/tracing"
                    / run
                    / f"{worker}_*.pt.trace.json.gz"
                )
            )
            if found:
                out.append((path, found[0]))
    return out


@pytest.mark.parametrize(
    "golden,trace", _profile_goldens(), ids=lambda p: Path(p).name if "/" in p else p
)
def test_matches_the_early_plugin_profiles(golden: str, trace: str) -> None:
    """The gaoteng goldens come from an early version of the plugin (2020), which did not
    yet subtract runtime calls from host self time: we compare host self + own runtime
    time there. Everything else is equal, by name and by name + input shape."""
    doc = json.loads(Path(golden).read_text())
    worker = Path(trace).name.split(".pt.trace")[0]
    (profile,) = [
        p["py/tuple"][1]
        for p in doc["profiles"]["py/reduce"][4]["py/tuple"]
        if p["py/tuple"][0] == worker
    ]
    model = build_model(trace)
    tree = op_tree(model)
    nodes = np.flatnonzero(tree.op_mask)
    names = model.names_of(tree.rows[nodes])
    self_plus_runtime: dict[str, float] = {}
    for n, v in zip(names, (tree.host_self + tree.runtime)[nodes].tolist()):
        self_plus_runtime[n] = self_plus_runtime.get(n, 0.0) + v
    by_name = rows_by_name(operators(model))
    for row in profile["operation_table_by_name"]["data"]["rows"]:
        values = row[1:]
        if len(values) == 3:  # CPU-only table: calls, host self, host total
            values = [values[0], 0, 0, values[1], values[2]]
        calls, dev_self, dev_total, host_self, host_total = values
        o = by_name[row[0]]
        assert o["calls"] == calls, row[0]
        assert o["device_self_us"] == pytest.approx(dev_self, abs=0.5)
        assert o["device_total_us"] == pytest.approx(dev_total, abs=0.5)
        assert o["host_total_us"] == pytest.approx(host_total, abs=0.5)
        assert self_plus_runtime[row[0]] == pytest.approx(host_self, abs=0.5)
    by_shape = {
        (r["name"], json.dumps(r["input_shape"] or [])): r
        for r in operators(model, "shape")["rows"]
    }
    for row in profile["operation_table_by_name_input"]["data"]["rows"]:
        o = by_shape[(row[0], row[1])]
        assert o["calls"] == row[2], row[:2]
        assert o["host_total_us"] == pytest.approx(row[-1], abs=0.5)


# --- every corpus trace --------------------------------------------------------------------


def _loadable(path: Path) -> TraceModel:
    if "derived" in path.parts:
        pytest.skip("bad input: covered by test_decode")
    return corpus_trace_model(path)


@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_every_corpus_trace(path: Path) -> None:
    model = _loadable(path)
    view = operators(model)
    has_kernels = kernels_supported(model)
    assert ("kernels" in supported_views(model)) == has_kernels
    assert (view["kernel_view_absent_reason"] is None) == has_kernels
    for row in view["rows"]:
        assert row["calls"] > 0
        assert 0 <= row["host_self_us"] <= row["host_total_us"] + 1e-6
        assert 0 <= row["device_self_us"] <= row["device_total_us"] + 1e-6
        assert not row["name"].startswith("ProfilerStep#")
    tree = op_tree(model)
    # Device self time adds up to the GPU time the tree attributes (some of it to
    # ProfilerStep ranges, which are not rows).
    owned = tree.gpu_node >= 0
    attributed = model.events["dur"][tree.gpu[owned]].sum()
    in_steps = tree.device_self[tree.is_step].sum()
    assert view["device_self_us"] + in_steps == pytest.approx(attributed, rel=1e-9, abs=1e-2)


@pytest.mark.parametrize(
    "rel",
    [
        "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_cpu/worker0_round1.pt.trace.json.gz",
        "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
        "hta/tests/data/rank_unavailable/rank_not_found.json.gz",
    ],
)
def test_cpu_only_traces(rel: str) -> None:
    model = corpus_model(rel)
    view = operators(model)
    assert view["rows"] and view["kernel_view_absent_reason"] == NO_KERNELS_CPU
    assert "kernels" not in supported_views(model) and "operators" in supported_views(model)
    assert all(r["device_total_us"] == 0 for r in view["rows"])


def test_stacks_of_the_2021_samples() -> None:
    model = corpus_model(GOLDEN_FILES[2])
    row = rows_by_name(operators(model))["aten::cudnn_convolution"]
    stacks = callstacks(model, "aten::cudnn_convolution")
    assert stacks["source"] == "call_stack_arg"
    assert sum(s["calls"] for s in stacks["stacks"]) == row["calls"] == 318
    assert sum(s["device_self_us"] for s in stacks["stacks"]) == pytest.approx(
        row["device_self_us"]
    )
    frame = stacks["stacks"][0]["frames"][0]
    assert frame["file"].endswith("torch/nn/modules/conv.py") and frame["line"] == 440
    assert frame["function"] == "_conv_forward"


def test_stacks_of_a_2025_h100_trace() -> None:
    model = build_model(
        str(
            corpus_path("tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
        )
    )
    view = operators(model)
    assert view["call_stack_source"] == "python_function"
    row = rows_by_name(view)["aten::addmm"]
    assert row["has_call_stack"] and row["tensor_core_eligible"]
    stacks = callstacks(model, "aten::addmm")
    assert sum(s["calls"] for s in stacks["stacks"]) == row["calls"]
    # Layers that run the same code share a stack (module instance numbers dropped).
    assert len(stacks["stacks"]) < row["calls"]
    frames = stacks["stacks"][0]["frames"]
    assert frames[0]["function"] == "<built-in function linear>"
    assert {"file": "torch/nn/modules/linear.py", "line": 124, "function": "forward"} in frames


def test_real_torch_trace_with_stacks_and_shapes(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from kinetoscope.handlers import tensorboard_trace_handler

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        record_shapes=True,
        with_stack=True,
        on_trace_ready=tensorboard_trace_handler(str(tmp_path)),
    ):
        for _ in range(3):
            with torch.profiler.record_function("my_forward"):
                model(torch.randn(16, 32)).sum().backward()
    (trace,) = tmp_path.glob("*.pt.trace.json*")
    m = build_model(str(trace))
    view = operators(m)
    rows = rows_by_name(view)
    assert rows["my_forward"]["calls"] == 3
    assert rows["aten::linear"]["calls"] == 6 and rows["aten::linear"]["tensor_core_eligible"]
    assert view["kernel_view_absent_reason"] == NO_KERNELS_CPU
    shapes = {
        json.dumps(r["input_shape"])
        for r in operators(m, "shape")["rows"]
        if r["name"] == "aten::linear"
    }
    assert shapes == {"[[16, 32], [64, 32], [64]]", "[[16, 64], [2, 64], [2]]"}
    if view["call_stack_source"] is not None:  # python tracer events (torch 2.x)
        stacks = callstacks(m, "aten::linear")
        assert sum(s["calls"] for s in stacks["stacks"]) == 6
        assert any(
            f["file"] and f["file"].endswith("test_operators.py")
            for s in stacks["stacks"]
            for f in s["frames"]
        )


# --- the report contract ----------------------------------------------------------------------


def test_report_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "logs" / "r1"
    run.mkdir(parents=True)
    nested_trace().write(run / "worker0.1.pt.trace.json.gz", gz=True)
    assert main(["report", str(tmp_path / "logs"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ops = doc["operators"]["rows"]
    assert {r["name"] for r in ops} == {"aten::linear", "aten::addmm", "aten::t", "aten::relu"}
    for row in ops:
        assert {
            "name",
            "calls",
            "host_self_us",
            "host_total_us",
            "device_self_us",
            "device_total_us",
        } <= set(row)
    kernels = doc["kernels"]["rows"]
    assert {r["name"] for r in kernels} == {
        "volta_sgemm_128x64_nn",
        "ampere_fp16_s16816gemm_fp16_64x64",
    }
    for row in kernels:
        assert {
            "name",
            "calls",
            "total_us",
            "mean_us",
            "min_us",
            "max_us",
            "blocks_per_sm",
            "occupancy_pct",
            "tensor_cores_used",
        } <= set(row)
    assert "callstacks" not in doc
    assert main(["report", str(tmp_path / "logs"), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "Operators (top" in text and "Kernels (top" in text


def test_routes(tmp_path: Path, plugin_client: Any) -> None:
    run = tmp_path / "logs" / "r1"
    run.mkdir(parents=True)
    nested_trace().write(run / "worker0.1.pt.trace.json.gz", gz=True)
    client = plugin_client(tmp_path / "logs")
    status = client.wait_ready("r1", "worker0")
    assert {"operators", "kernels"} <= set(status["views"])
    assert "callstacks" not in status["views"]
    where = {"run": "r1", "worker": "worker0", "span": "1"}
    ops = client.json("operators", **where, group_by="shape")
    assert ops["group_by"] == "shape" and ops["rows"][0]["name"] == "aten::addmm"
    stacks = client.json("callstacks", **where, name="aten::addmm")
    assert stacks["calls"] == 1 and stacks["stacks"][0]["frames"] == []
    kernels = client.json("kernels", **where, group_by="op", device="0")
    assert {r["op_name"] for r in kernels["rows"]} == {"aten::addmm"}
    assert client.get("callstacks", **where).status_code == 400
    assert client.get("operators", **where, group_by="nope").status_code == 400
    assert client.get("kernels", **where, stream="seven").status_code == 400
