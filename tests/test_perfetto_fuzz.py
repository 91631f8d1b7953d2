"""The Perfetto reader's fuzzer inside the test command: a short run (the long one is by
hand: `python tests/fuzz_perfetto.py --minutes N`), and every input it has found so far
(tests/data/perfetto_fuzz/: each took the reader before issue 44 down with an exception
other than its own error) as a regression case, under the same memory and time bounds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fuzz_perfetto import Findings, fuzz, limits, run_one

FOUND = Path(__file__).parent / "data" / "perfetto_fuzz"
# Seconds of the short run: a few in the test command, at most a minute.
BUDGET = min(float(os.environ.get("KINETOSCOPE_PERFETTO_FUZZ_SECONDS", "6")), 60.0)


@pytest.mark.parametrize(
    "path", sorted(FOUND.glob("*.pftrace*")), ids=lambda p: p.name.split(".")[0]
)
def test_every_input_the_fuzzer_found_gives_a_model_or_a_reader_error(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in limits().items():
        monkeypatch.setenv(key, value)
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    outcome = run_one(copy)
    assert outcome.kind != "exception" and not outcome.problem, outcome.problem


def test_a_short_fuzz_run_finds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in limits():  # fuzz() sets them; they go back after the test
        monkeypatch.setenv(key, os.environ.get(key, ""))
    seed = int.from_bytes(os.urandom(2), "little")  # another part of the space each run
    stats, findings = fuzz(BUDGET, seed=seed, findings=Findings(tmp_path))
    assert stats.executions > 0
    assert not findings.found, f"seed {seed}, {stats.line()}: {list(findings.found)}"
    # The mutations reach both outcomes: models (most, partial ones among them) and errors.
    assert stats.outcomes.get("model", 0) > 0
