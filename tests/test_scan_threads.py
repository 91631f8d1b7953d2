"""How many threads scan a big JSON file's slices: one core is left to the threads that
inflate the text and merge the slices, unless KINETOSCOPE_SCAN_THREADS set the count."""

from __future__ import annotations

import pytest
from kinetoscope.ingest import scan_threads as rule


@pytest.mark.parametrize(
    ("cores", "threads", "scanners"), [(2, 2, 1), (3, 3, 2), (8, 4, 4), (1, 2, 1)]
)
def test_one_core_is_left_to_inflating_and_merging(
    monkeypatch: pytest.MonkeyPatch, cores: int, threads: int, scanners: int
) -> None:
    monkeypatch.delenv("KINETOSCOPE_SCAN_THREADS", raising=False)
    monkeypatch.setattr(rule.os, "cpu_count", lambda: cores)
    assert rule.scanners_beside(threads) == scanners


def test_a_count_set_is_taken_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", "2")
    monkeypatch.setattr(rule.os, "cpu_count", lambda: 2)
    assert rule.scanners_beside(rule.scan_threads(rule.THREADS_MIN_TEXT)) == 2
