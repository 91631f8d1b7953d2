"""The trend's per-trace summary against an independent computation from the raw JSON
(tests/independent/trends.py) over every corpus trace: the trace start, each kernel's
time, each memory device's peak and, without GPU work, the median step."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from corpus import corpus_trace_model, corpus_traces
from independent.raw import read_raw
from independent.trends import trend_facts
from kinetoscope.analysis.trends.summary import summarize_trace


def _close(a: float, b: float, rel: float = 1e-6, abs_tol: float = 0.01) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: Path(p).name)
def test_trend_summary_agrees_with_the_raw_json(path: Path) -> None:
    try:
        raw = read_raw(path)
    except (ValueError, EOFError, OSError):
        pytest.skip("not whole JSON (a damaged file of the corpus: tests/test_damaged_files.py)")
    facts = trend_facts(raw)
    summary = summarize_trace(corpus_trace_model(path))
    if facts.start_us is None:
        assert summary.start_us is None
    else:
        assert summary.start_us is not None and _close(summary.start_us, facts.start_us, 1e-12, 1)
    # Kernels: the product keeps µs per step of the top 50 (3 decimals).
    steps = summary.step_count or 1
    for name, per_step in summary.kernels.items():
        assert name in facts.kernel_total_us, name
        assert _close(per_step * steps, facts.kernel_total_us[name], 1e-5, 0.01 * steps), name
    if summary.kernels_complete:
        assert set(summary.kernels) == {k for k, v in facts.kernel_total_us.items() if v > 0}
    assert sorted(summary.memory_peak_bytes.values()) == pytest.approx(facts.memory_peaks)
    if facts.host_step_median_us is not None and summary.step_median_us is not None:
        assert _close(summary.step_median_us, facts.host_step_median_us, 1e-6, 0.01)
