"""`TraceModel.iter_args`: the same objects as `args_of`, decoded a chunk of rows at a time,
so a pass over every `Call stack` of a multi-GB trace (the flame graph, the operators'
stacks, the source paths) holds one chunk's text and objects, not all of them at once."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterable

import msgspec
import numpy as np
from corpus import corpus_path
from kinetoscope.analysis.core.python_stacks import StackArgs
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel

V100 = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


class _Shapes(msgspec.Struct):
    shapes: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Dims")


def _stacked_rows(model: TraceModel) -> np.ndarray:
    return np.flatnonzero(model.events["has_stack"])


def _peak_bytes(decode: Callable[[], Iterable[StackArgs]]) -> int:
    """Peak traced bytes while every object `decode` gives is read once, as a view does."""
    tracemalloc.start()
    try:
        for args in decode():
            bytes(args.stack)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_iter_args_gives_what_args_of_gives_in_any_chunk_size() -> None:
    model = build_model(str(corpus_path(V100)))
    rows = _stacked_rows(model)
    assert rows.size > 1000  # the V100 sample has `Call stack` args on its ops
    whole = [bytes(a.stack) for a in model.args_of(rows, StackArgs)]
    assert sum(1 for text in whole if len(text) > 2) > 1000
    for chunk in (1, 7, 4096, rows.size + 1):
        assert [bytes(a.stack) for a in model.iter_args(rows, StackArgs, chunk)] == whole
    # Rows without the field get the default; rows in any order, none at all.
    mixed = np.concatenate([rows[::50], np.arange(10)])[::-1]
    expected = [bytes(a.shapes) for a in model.args_of(mixed, _Shapes)]
    assert [bytes(a.shapes) for a in model.iter_args(mixed, _Shapes, 3)] == expected
    assert list(model.iter_args(np.array([], dtype=np.int64), StackArgs)) == []


def test_a_pass_over_every_stack_holds_one_chunk_not_all_of_them() -> None:
    model = build_model(str(corpus_path(V100)))
    rows = _stacked_rows(model)
    all_at_once = _peak_bytes(lambda: model.args_of(rows, StackArgs))
    by_chunks = _peak_bytes(lambda: model.iter_args(rows, StackArgs, 64))
    # The whole pass copies every row's text twice and keeps an object per row; by chunks
    # of 64 rows a few dozen of them (the sample: ~15,000 rows of ~0.8 KB stacks).
    assert all_at_once > 5_000_000
    assert by_chunks * 10 < all_at_once
