"""Each rank's steps from a batch of ranks (`steps.batch_steps`): the same as each rank's
own `find_steps`, on built ranks of every rule's shape (by hand too) and on the corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import joinable_corpus_traces
from kinetoscope.analysis.core.steps import Steps, batch_steps, find_steps
from kinetoscope.ingest.build import build_model
from kinetoscope.model.rank_batch import join_ranks
from kinetoscope.model.trace_model import TraceModel
from synthetic_job import Layout, write_traces
from test_overview import backlog_trace, two_step_trace


def _as_values(steps: Steps) -> tuple[object, ...]:
    return (
        steps.names,
        steps.numbers,
        steps.source,
        steps.starts.tolist(),
        steps.ends.tolist(),
        steps.gpu_counts.tolist(),
        steps.dropped,
    )


def _assert_batch_is_each_rank(models: list[TraceModel]) -> list[Steps]:
    batched = batch_steps(join_ranks(models))
    assert len(batched) == len(models)
    for k, (steps, model) in enumerate(zip(batched, models)):
        alone = find_steps(model)
        assert _as_values(steps) == _as_values(alone), k
    return batched


def _incomplete_tail() -> TraceBuilder:
    t = TraceBuilder()
    for i, start in enumerate((0, 100)):
        t.step(i + 1, start, 100)
        op = t.op("aten::mm", start + 10, 50)
        for k in range(5 if i == 0 else 3):  # 3 < 0.8 * 5: the last step is dropped
            t.launch(start + 11 + k, 1, op, gpu_ts=start + 20 + k, gpu_dur=1)
    return t


def _no_steps() -> TraceBuilder:
    t = TraceBuilder()
    op = t.op("aten::mm", 10, 20)
    t.launch(12, 2, op, gpu_ts=25, gpu_dur=30)
    return t


def _host_only() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0, 50)
    t.op("aten::add", 5, 10)
    return t


def test_ranks_of_every_rule_by_hand(tmp_path: Path) -> None:
    """A backlog before profiling, device work of an unrecorded thread, an incomplete last
    step, no ProfilerStep at all, no GPU work, and two plain steps: one batch, each rank
    its own rule, with the hand values of the rules' own tests."""
    shapes = {
        "backlog": backlog_trace(backlog_correlation=1),
        "unrecorded thread": backlog_trace(backlog_correlation=1000),
        "incomplete tail": _incomplete_tail(),
        "no steps": _no_steps(),
        "host only": _host_only(),
        "two steps": two_step_trace(),
    }
    models = [t.model(tmp_path, f"{i}.pt.trace.json") for i, t in enumerate(shapes.values())]
    steps = dict(zip(shapes, _assert_batch_is_each_rank(models)))
    bounds = {name: list(zip(s.starts.tolist(), s.ends.tolist())) for name, s in steps.items()}
    assert bounds["backlog"] == [(400, 450), (450, 500), (500, 550)]
    assert bounds["unrecorded thread"][0] == (100, 450)
    assert steps["incomplete tail"].names == ["ProfilerStep#1"]
    assert "0.8x" in str(steps["incomplete tail"].dropped[0]["reason"])
    assert steps["no steps"].source == "whole_trace" and bounds["no steps"] == [(10, 55)]
    assert bounds["host only"] == [(0, 50)] and steps["host only"].gpu_counts.tolist() == [0]


def test_the_same_step_numbers_in_every_rank_stay_apart(tmp_path: Path) -> None:
    """A job's ranks all have ProfilerStep#1..N: each keeps its own (merged by name, 16
    ranks of 2 steps read as 2)."""
    run = write_traces(Layout(2, 1, 8, steps=2), tmp_path / "job")
    models = [build_model(str(run / f"rank{r}.pt.trace.json")) for r in range(16)]
    batched = _assert_batch_is_each_rank(models)
    assert [len(s) for s in batched] == [2] * 16


@pytest.mark.corpus
def test_every_corpus_trace_the_join_takes_in_one_batch() -> None:
    """Traces of every kind side by side (not one job's: only the steps are compared)."""
    models = [build_model(str(path)) for path in joinable_corpus_traces()]
    assert len(models) >= 30
    batched = _assert_batch_is_each_rank(models)
    assert sum(s.source == "profiler_steps" for s in batched) >= 20
    assert any(len(s.dropped) for s in batched) and np.isfinite(batched[0].starts).all()
