"""A rank summarised under several changes (a run's top gains): a summary made from the
first change's reduced graph (`reduce_again.py`) is, byte for byte, the one a full
reduction under that change alone makes, on every corpus trace; and where a change moves a
local path's origin, the rank is reduced in full."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from corpus import corpus_model, corpus_trace_model, corpus_traces
from kinetoscope.analysis.core.common import complete_rows
from kinetoscope.analysis.core.kernel_classes import kernel_classes
from kinetoscope.analysis.critical_path import each_change
from kinetoscope.analysis.critical_path.changes import change_of
from kinetoscope.analysis.critical_path.each_change import summarize_each
from kinetoscope.analysis.critical_path.parts import part_of
from kinetoscope.analysis.critical_path.reduce import reduce_part, reduce_shaped
from kinetoscope.analysis.critical_path.reduce_again import reduced_again
from kinetoscope.analysis.critical_path.summaries import summarize
from kinetoscope.ingest.text_blocks import TraceDecodeError
from kinetoscope.model.categories import Kind
from kinetoscope.model.trace_model import TraceModel

SMALL = 8 << 20  # the corpus traces whose graphs build in about a second


def _longest(model: TraceModel, kind: Kind) -> str | None:
    """The name of `kind` with the most recorded time."""
    rows = complete_rows(model, kind)
    if rows.size == 0:
        return None
    codes = model.events["name"][rows]
    total = np.bincount(codes, weights=model.events["dur"][rows].astype(np.float64))
    return model.names[int(np.argmax(total))]


def _changes(model: TraceModel) -> list[dict[str, Any]]:
    """Changes a user of the trace would try: its longest kernel and op made twice as fast
    and twice as slow, its first collective type faster, the whole rank faster."""
    out: list[dict[str, Any]] = [{"rank_all": 1, "factor": 0.5}]
    kernel, op = _longest(model, Kind.KERNEL), _longest(model, Kind.CPU_OP)
    for factor in (0.5, 2.0):
        out += [{"kernel": kernel, "factor": factor}] if kernel else []
        out += [{"op": op, "factor": factor}] if op else []
    collectives = [c for c in kernel_classes(model).collective if c]
    out += [{"collective": collectives[0], "factor": 0.25}] if collectives else []
    return out


def _encoded(summaries: Any) -> list[bytes]:
    return [msgspec.msgpack.encode(s) for s in summaries]


@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_a_summary_made_again_is_the_full_reductions(path: Path) -> None:
    """Under each change after the first, the summary from the first's reduced graph
    (where the change keeps its shape) equals the full reduction's, byte for byte; the
    whole rank's summaries under every change equal those made one change at a time."""
    if path.stat().st_size > SMALL:
        pytest.skip("a larger trace: the same code, more time")
    try:
        model = corpus_trace_model(path)
    except TraceDecodeError:
        pytest.skip("refused at load: test_decode says why")
    changes = _changes(model)
    part = part_of(model, "", "pinned")
    first, shape = reduce_shaped(part, change_of(changes[0]), False)
    for query in changes[1:]:
        change = change_of(query)
        assert change is not None
        again = reduced_again(part, first, shape, change)
        full = reduce_part(part, change, False, finished=True)
        assert again is None or _encoded([again]) == _encoded([full]), query
    each = summarize_each(tuple(changes), model)
    alone = [summarize(c, model) for c in changes]
    assert _encoded(each.summary(k) for k in range(len(each))) == _encoded(alone)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each further change's summary was made again (True) or in full."""
    made: list[bool] = []
    real = each_change.reduced_again

    def counting(*args: Any) -> Any:
        out = real(*args)
        made.append(out is not None)
        return out

    monkeypatch.setattr(each_change, "reduced_again", counting)
    return made


TRACING = "gaoteng-git-kineto/tb_plugin/test/data/tracing"
RESNET_RANK = f"{TRACING}/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz"
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
ALL_REDUCE = "ncclAllReduceRingLLKernel_sum_f32(ncclColl)"


def test_a_change_that_moves_a_local_paths_origin_is_reduced_in_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ResNet DDP rank (V100, default settings): halving its DataLoader keeps the paths
    the first change found (only their lengths move), so its summary is made again; the
    all-reduce twice as slow moves where a local path starts, so the rank is reduced in
    full. Both give what each change alone gives."""
    model = corpus_model(RESNET_RANK)
    changes = (
        {"rank_all": 1, "factor": 0.5},
        {"op": DATALOADER, "factor": 0.5},
        {"kernel": ALL_REDUCE, "factor": 2.0},
    )
    made = _counted(monkeypatch)
    each = summarize_each(changes, model)
    alone = [summarize(c, model) for c in changes]
    assert _encoded(each.summary(k) for k in range(len(each))) == _encoded(alone)
    assert made == [True, False]
