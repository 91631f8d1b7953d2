"""The `health` view's counts and the flame graphs' totals against independent
recomputations from the raw JSON (tests/independent/health.py, flame.py: no kinetoscope
import), over every corpus trace.

Differences on purpose: a file the standard library cannot parse (the corpus's damaged
`derived/` files) has no raw counts; the product reads it in part (`truncated_file` 1) or
names the error. Agreement table (counts per trace) in the issue 43 report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_model, corpus_traces
from independent.flame import python_depth
from independent.health import Health, health, kernel_time_us
from independent.raw import RawTrace, read_raw
from kinetoscope.analysis.core.health.view import health as product_health
from kinetoscope.analysis.flamegraph.endpoint import supports
from kinetoscope.analysis.flamegraph.view import flamegraph

CORPUS_TRACES = corpus_traces()


def _raw(path: Path) -> RawTrace | None:
    try:
        return read_raw(path)
    except (ValueError, EOFError, OSError):  # damaged on purpose (corpus `derived/`)
        return None


def _outer_python_depth(view: Any) -> int:
    """The longest run of Python frames right under a thread frame (CPU flame graph)."""
    frames, parent, nf = view["frames"], view["node_parent"], view["node_frame"]
    kind = [frames[f]["kind"] for f in nf]
    run = [0] * len(parent)
    for i, p in enumerate(parent):  # pre-order: a parent before its children
        if kind[i] == "python" and p >= 0 and (kind[p] == "thread" or run[p] > 0):
            run[i] = run[p] + 1
    return max(run, default=0)


@pytest.mark.parametrize("path", CORPUS_TRACES, ids=lambda p: str(p).rsplit("corpus/", 1)[-1])
def test_health_and_flame_agree_with_the_raw_json(path: Path) -> None:
    raw = _raw(path)
    if raw is None:
        try:
            model = corpus_model(str(path).rsplit("corpus/", 1)[-1])
        except Exception:  # noqa: BLE001 - the product names the error: also a refusal
            return
        counts = {c["id"]: c["count"] for c in product_health(model)["checks"]}
        # read in part, and says so; or repaired whole (bare N/A, raw control characters:
        # lenient JSON, docs/formats.md), and says what it repaired
        assert counts["truncated_file"] == 1 or model.warnings
        return
    mine: Health = health(raw)
    model = corpus_model(str(path).rsplit("corpus/", 1)[-1])
    theirs = {c["id"]: c["count"] for c in product_health(model)["checks"]}
    assert {k: theirs[k] for k in mine.counts} == mine.counts
    if not supports(model):
        return
    kernels = kernel_time_us(raw, mine)
    gpu = flamegraph(model, "gpu") if kernels else {"total_us": 0.0}
    assert gpu["total_us"] == pytest.approx(
        kernel_time_us(raw, mine), abs=1e-3 + 1e-9 * gpu["total_us"]
    )
    depth = python_depth(raw, mine)
    if depth is not None:
        assert _outer_python_depth(flamegraph(model, "cpu")) == depth


GLOO_P2P = sorted((Path(__file__).parent / "data" / "gloo_p2p").glob("*.json.gz"))


@pytest.mark.parametrize("path", GLOO_P2P, ids=lambda p: p.name)
def test_a_cpu_backends_transfer_past_its_op_is_not_an_overlap(path: Path) -> None:
    """tests/data/gloo_p2p: each `gloo:recv` starts inside its `c10d::recv_` and ends when
    the data came, 8 ms after the op returned, on the same thread, by construction: a
    lane of its own, as Python frames are. The raw JSON's count agrees."""
    from kinetoscope.ingest.build import build_model

    theirs = {c["id"]: c["count"] for c in product_health(build_model(str(path)))["checks"]}
    mine = health(read_raw(path)).counts
    assert theirs["overlapping_events"] == mine["overlapping_events"] == 0
