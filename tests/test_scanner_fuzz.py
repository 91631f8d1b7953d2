"""The scanner fuzzer inside the test command: a short coverage-guided run (the long one
is by hand: `python tests/fuzz_scanner.py --minutes N --jobs J`), and every input it has
found so far (tests/data/scanner_fuzz/) as a regression case."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fuzz_scanner import Findings, fuzz
from kinetoscope.ingest import native_chunk
from scan_compare import disagreement

FOUND = Path(__file__).parent / "data" / "scanner_fuzz"
# Seconds of the short run; at most 2 minutes in the test command.
BUDGET = min(float(os.environ.get("KINETOSCOPE_FUZZ_SECONDS", "45")), 120.0)

pytestmark = pytest.mark.skipif(
    native_chunk._scan is None, reason="the compiled scanner is not built here"
)


@pytest.mark.parametrize("path", sorted(FOUND.glob("*.json")), ids=lambda p: p.stem)
def test_every_input_the_fuzzer_found_reads_the_same_both_ways(path: Path) -> None:
    assert disagreement(path.read_bytes()) is None


def test_a_short_fuzz_run_finds_no_disagreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fuzz() swaps an instrumented scanner in; the next tests get the installed one back.
    monkeypatch.setattr(native_chunk, "_scan", native_chunk._scan)
    seed = int.from_bytes(os.urandom(2), "little")  # another part of the space each run
    stats, findings = fuzz(BUDGET, seed=seed, findings=Findings(tmp_path))
    assert stats.executions > 0
    found = {reason: body[:2000] for reason, body in findings.found.items()}
    assert not found, f"seed {seed}, {stats.line()}: {found}"
