"""The op tree's sums that views read once (host total, device and tensor-core self and
total, runtime time) are computed when asked from the durations and the owners the tree
holds (analysis/core/optree.py): here against the same sums written out with
`np.add.at` over the tree's own owners, bit for bit, on real traces; and the Python
frames' texts (python_stacks.py) against the substitution they stand for."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import corpus_model
from kinetoscope.analysis.core import python_stacks
from kinetoscope.analysis.core.optree import op_tree
from kinetoscope.analysis.core.tree_arrays import subtree_sum

TRACES = [
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
]


def _added_at(node: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    owned = node >= 0
    np.add.at(out, node[owned], values[owned])
    return out


def _same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float64 and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.rsplit("/", 1)[-1])
def test_sums_asked_are_the_sums_written_out(path: str) -> None:
    model = corpus_model(path)
    tree = op_tree(model)
    dur = model.events["dur"]
    n = len(tree)
    assert n > 0
    assert _same_floats(tree.host_total, dur[tree.rows].astype(np.float64))
    device_self = _added_at(tree.gpu_node, dur[tree.gpu], n)
    assert _same_floats(tree.device_self, device_self)
    assert _same_floats(tree.device_total, subtree_sum(tree.parent, tree.levels, device_self))
    tc_self = _added_at(np.where(tree.gpu_tc, tree.gpu_node, -1), dur[tree.gpu], n)
    assert _same_floats(tree.tc_self, tc_self)
    assert _same_floats(tree.tc_total, subtree_sum(tree.parent, tree.levels, tc_self))
    assert _same_floats(tree.runtime, _added_at(tree.runtime_inner, dur[tree.runtimes], n))
    # Host self: the duration less the children's union and the runtime calls inside.
    assert bool(np.all(tree.host_self <= tree.host_total + tree.host_total * 1e-12))
    assert bool(np.all(tree.host_self >= 0))
    # Node indices held in the narrow type (the tree is held through most views).
    for held in (tree.parent, tree.gpu_node, tree.runtime_node, tree.runtime_inner):
        assert held.dtype == np.int32


def test_device_self_adds_up_to_the_owned_gpu_time() -> None:
    model = corpus_model(TRACES[1])
    tree = op_tree(model)
    owned = tree.gpu_node >= 0
    total = float(model.events["dur"][tree.gpu[owned]].sum())
    assert float(tree.device_self.sum()) == pytest.approx(total, rel=1e-12)
    roots = tree.parent < 0
    assert float(tree.device_total[roots & ~tree.folded].sum()) == pytest.approx(total, rel=1e-9)


@pytest.mark.parametrize(
    "name",
    [
        "nn.Module: Linear_25",
        "nn.Module: Linear",
        "nn.Module: A_1_2",
        "nn.Module: A_12\n",
        "nn.Module: A\n_12",
        "nn.Module: _7",
        "nn.Module: Conv_٣",
        "nn.Module: Conv_²",
        "nn.Module:Linear_3",
        "torch/nn/modules/module.py(1501): _call_impl",
        "model.py(12): forward_3",
        "",
    ],
)
def test_frame_text_is_the_substitution(name: str) -> None:
    expected = python_stacks._MODULE_INSTANCE.sub(r"\1", name)
    assert python_stacks._frame_text(name) == expected


def test_every_frame_text_of_a_trace_is_the_substitution() -> None:
    model = corpus_model(TRACES[1])
    texts = [python_stacks._frame_text(n) for n in model.names]
    assert texts == [python_stacks._MODULE_INSTANCE.sub(r"\1", n) for n in model.names]
    assert any(n != t for n, t in zip(model.names, texts))  # some modules lost a number
