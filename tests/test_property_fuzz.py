"""The property fuzzers of the serving view and of the compile-log reader inside the test
command: a few seconds of each in a child process (its own memory bound, RLIMIT_AS, and a
wall-clock bound), asserting every input met its property (tests/fuzz_serving.py,
tests/fuzz_compile_log.py). The long budget is by hand (`--minutes N`), or
KINETOSCOPE_PROPERTY_FUZZ_SECONDS here; what a long run found is kept in
tests/data/*_fuzz/ and checked below."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_compile_log import check as check_compile_log

TESTS = Path(__file__).resolve().parent
SECONDS = float(os.environ.get("KINETOSCOPE_PROPERTY_FUZZ_SECONDS", "5"))


@pytest.mark.parametrize("script", ["fuzz_serving.py", "fuzz_compile_log.py"])
def test_a_short_fuzz_run_finds_nothing(script: str) -> None:
    seed = int.from_bytes(os.urandom(2), "little")  # another part of the space each run
    done = subprocess.run(
        [sys.executable, script, "--seconds", str(SECONDS), "--seed", str(seed)],
        capture_output=True,
        text=True,
        timeout=SECONDS + 120,
        cwd=TESTS,
    )
    assert done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["findings"] == {}, report
    assert done.returncode == 0
    assert int(report["stats"].split()[0]) > 0, report


@pytest.mark.parametrize(
    "path", sorted((TESTS / "data" / "compile_fuzz").glob("*.log")), ids=lambda p: p.stem
)
def test_every_compile_log_the_fuzzer_found_meets_the_property(path: Path, tmp_path: Path) -> None:
    # Found by a run: an artifact record whose name is a JSON object (`in` a set of
    # names raised TypeError, and the whole log was lost as `internal`).
    result, finding = check_compile_log(path.read_bytes(), tmp_path)
    assert finding is None, (result, finding)
    assert result == "log"
