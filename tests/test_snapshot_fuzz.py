"""The snapshot pickle fuzzer inside the test command: a few seconds of it in a child
process (its own memory bound, RLIMIT_AS, and a wall-clock bound), asserting that every
input gave a snapshot or a clear reader error, fast, small and without running anything
(tests/fuzz_snapshot.py). The long budget is by hand:
`python tests/fuzz_snapshot.py --minutes N`, or KINETOSCOPE_SNAPSHOT_FUZZ_SECONDS here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_snapshot import check

TESTS = Path(__file__).resolve().parent
SECONDS = float(os.environ.get("KINETOSCOPE_SNAPSHOT_FUZZ_SECONDS", "4"))


def test_a_short_fuzz_run_finds_nothing() -> None:
    seed = int.from_bytes(os.urandom(2), "little")  # another part of the space each run
    done = subprocess.run(
        [sys.executable, "fuzz_snapshot.py", "--seconds", str(SECONDS), "--seed", str(seed)],
        capture_output=True,
        text=True,
        timeout=SECONDS + 120,
        cwd=TESTS,
    )
    assert done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["findings"] == {}, report
    assert done.returncode == 0
    executions = int(report["stats"].split()[0])
    assert executions > 0, report


FOUND = TESTS / "data" / "snapshot_fuzz"


@pytest.mark.parametrize("path", sorted(FOUND.glob("*.pickle")), ids=lambda p: p.stem)
def test_every_input_the_fuzzer_found_meets_the_property(path: Path, tmp_path: Path) -> None:
    # Found by the long run: an int time past float (OverflowError), a length of 2**62
    # bytes the unpickler allocated before reading (MemoryError), histories shared among
    # 100 devices into a 1.3 MB answer from 1.5 KB.
    result, finding = check(path.read_bytes(), tmp_path / "canary")
    assert finding is None, (result, finding)
