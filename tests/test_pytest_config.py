"""The test run says why tests were skipped (pyproject's pytest options carry `-rs`), and
tests that bound a wall-clock time are marked to run alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_skipped_tests_are_listed_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "test_one_skip.py").write_text(
        "import pytest\n\n\ndef test_x():\n    pytest.skip('corpus file not available: x.json')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + ["-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKIPPED [1]" in done.stdout
    assert "corpus file not available: x.json" in done.stdout


# A wall-clock reading subtracted from another: a test that bounds how long something took.
_CLOCK_DIFFERENCE = re.compile(r"time\.(monotonic|perf_counter)\(\) - ")
_TIMED_MARK = re.compile(r"^pytestmark = pytest\.mark\.timed\b", re.M)


def test_every_test_that_times_something_is_marked_timed() -> None:
    """tests/run.sh runs `timed` tests alone, after the two workers' pass: a module whose
    tests bound a wall-clock time without the mark would share the machine with another
    test and could fail by load alone."""
    unmarked = [
        path.name
        for path in sorted((REPO / "tests").glob("test_*.py"))
        if _CLOCK_DIFFERENCE.search(text := path.read_text()) and not _TIMED_MARK.search(text)
    ]
    assert unmarked == []


def test_run_sh_runs_the_timed_tests_alone() -> None:
    run_sh = (REPO / "tests" / "run.sh").read_text()
    assert '--dist loadfile -m "not timed"' in run_sh
    assert 'pytest_pass -m timed "$@"' in run_sh
