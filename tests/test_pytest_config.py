"""The test run says why tests were skipped (pyproject's pytest options carry `-rs`), and
tests that bound a wall-clock time are marked to run alone."""

from __future__ import annotations

import os
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


# A wall-clock reading subtracted from another: a test that bounds how long something took
# (`time.monotonic()`, or `monotonic()` imported from time; `_ns` too). `time.time()` is
# left out: the tests subtract from it only to date a file back.
_CLOCK_DIFFERENCE = re.compile(r"\b(monotonic|perf_counter)(_ns)?\(\) - ")
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


def test_the_clock_pattern_finds_each_way_of_reading_the_clock() -> None:
    # Each line joined here: written whole, this module would read as one that times.
    reads = ["time.monotonic()", "monotonic()", "time.perf_counter_ns()", "perf_counter()"]
    assert all(_CLOCK_DIFFERENCE.search(f"took = {read} - start") for read in reads)
    assert not _CLOCK_DIFFERENCE.search("old = time.time() - 3 * 24 * 3600")


def test_run_sh_runs_the_timed_tests_alone() -> None:
    run_sh = (REPO / "tests" / "run.sh").read_text()
    assert 'bash tests/pytest_passes.sh "$@"' in run_sh
    passes = (REPO / "tests" / "pytest_passes.sh").read_text()
    assert '--dist loadfile -m "not timed" "$@"' in passes
    assert 'pytest_pass -m timed "$@"' in passes


def _passes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(REPO / "tests" / "pytest_passes.sh"), *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "KINETOSCOPE_TEST_WORKERS": "1"},
    )


def test_arguments_that_select_tests_of_one_kind_pass() -> None:
    """A test that is not timed: the timed pass selects none (pytest's exit 5), which is
    not a failure."""
    done = _passes("tests/test_pytest_config.py", "-k", "the_clock_pattern_finds")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_arguments_that_select_no_test_at_all_fail() -> None:
    """A mistyped name selects nothing in either pass: the run fails and says so, rather
    than passing having run nothing."""
    done = _passes("tests/test_pytest_config.py", "-k", "no_test_is_named_this")
    assert done.returncode != 0, done.stdout[-2000:]
    assert "pytest: no test selected by: tests/test_pytest_config.py -k no_test_is_named_this" in (
        done.stderr
    )
