"""The Diff's serving section: the same serving schedule on a GPU twice as fast (every
kernel half as long), per phase, with numbers worked by hand from tests/test_serving.py's
built trace; a side without iterations is said in the notes, not compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from kinetoscope.analysis.diff.view import diff
from kinetoscope.model.trace_model import TraceModel
from test_serving import annotated_vllm, training_trace


def twice_as_fast(tmp_path: Path) -> TraceModel:
    t = annotated_vllm()
    for e in t.events:
        if e["cat"] == "kernel":
            e["dur"] = e["dur"] / 2
    return t.model(tmp_path, "fast.pt.trace.json")


def test_serving_phases_compared(tmp_path: Path) -> None:
    base = annotated_vllm().model(tmp_path)
    view = diff(base, twice_as_fast(tmp_path))
    prefill, decode = view["serving"]
    assert (prefill["phase"], decode["phase"]) == ("prefill", "decode")
    # Prefill: kernels [150, 165] and [185, 205]: the GPU ends at 205 after the host's 200.
    assert prefill["median_us"] == {
        "base": 125.0,
        "target": 105.0,
        "delta": -20.0,
        "delta_pct": -16.0,
    }
    assert prefill["tokens_per_s"]["target"] == pytest.approx(40 / 105e-6, abs=1e-3)
    assert prefill["per_token_us"]["target"] == 105.0  # the first-token estimate
    # Decode: the first iteration stays host-bound (50), the second ends at 462.5.
    assert decode["median_us"]["base"] == 60.0 and decode["median_us"]["target"] == 56.25
    assert decode["iterations"] == {"base": 2.0, "target": 2.0, "delta": 0.0, "delta_pct": 0.0}
    attention = decode["classes_per_iteration_us"]["attention"]
    assert (attention["base"], attention["target"]) == (20.0, 10.0)
    assert decode["gpu_busy_median_us"]["target"] == pytest.approx((15 + 22.5) / 2)


def test_a_side_without_iterations_is_noted(tmp_path: Path) -> None:
    view = diff(
        annotated_vllm().model(tmp_path), training_trace().model(tmp_path, "t.pt.trace.json")
    )
    assert view["serving"] == []
    assert any(n.startswith("the target has no serving iterations") for n in view["notes"])


def test_no_serving_section_between_training_traces(tmp_path: Path) -> None:
    model = training_trace().model(tmp_path)
    view = diff(model, model)
    assert view["serving"] == [] and not any("serving" in n for n in view["notes"])
