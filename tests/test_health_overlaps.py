"""`overlapping_events` (analysis/core/health/checks.py) counts every slice that starts inside
an earlier slice of its lane and ends after it (by more than the 1 µs tolerance each
side), also where both sit inside a longer slice: hand-computed small lanes."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core.health.checks import overlapping_events

T = 1000.0


def _crossing_names(tmp_path: Path, slices: list[tuple[str, float, float]]) -> list[str]:
    t = TraceBuilder()
    for name, ts, dur in slices:
        t.op(name, T + ts, dur)
    model = t.model(tmp_path)
    rows = overlapping_events(model).rows
    return sorted(model.names[int(model.events["name"][r])] for r in rows.tolist())


CASES = {
    "alone": ([("a", 0, 10), ("b", 5, 10)], ["b"]),
    "nested in a longer slice": ([("outer", 0, 100), ("a", 10, 10), ("b", 15, 10)], ["b"]),
    "three crossing in a row": (
        [("outer", 0, 100), ("a", 10, 10), ("b", 15, 10), ("c", 22, 10)],
        ["b", "c"],
    ),
    # b crosses a, and c crosses a too though it sits inside b.
    "inside the crossing one": ([("a", 0, 10), ("b", 5, 20), ("c", 6, 9)], ["b", "c"]),
    "nested and disjoint only": (
        [("outer", 0, 100), ("a", 10, 10), ("a1", 11, 2), ("b", 20, 10), ("c", 40, 60)],
        [],
    ),
    "same start: nests": ([("a", 0, 10), ("b", 0, 20)], []),
    "within the tolerance": ([("outer", 0, 100), ("a", 10, 10), ("b", 19.5, 1.3)], []),
    "just past the tolerance": ([("outer", 0, 100), ("a", 10, 10), ("b", 18.5, 3)], ["b"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_crossing_counts(tmp_path: Path, case: str) -> None:
    slices, want = CASES[case]
    assert _crossing_names(tmp_path, slices) == want


def test_lanes_are_apart(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("outer", T, 100)
    t.op("a", T + 10, 10, tid=2)
    t.op("b", T + 15, 10)
    assert overlapping_events(t.model(tmp_path)).total == 0
