"""Tests that need the corpus skip locally and say why, and fail in CI (`CI=true`): each
of the three ways a test meets the corpus is run in a child pytest pointed at a corpus
folder that does not exist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NEEDS_CORPUS = [
    "tests/test_discovery.py::test_scan_corpus_copy",  # marked `corpus`
    "tests/test_decode.py::test_schema_variants_of_the_corpus",  # corpus_path()
    "tests/test_decode.py::test_every_corpus_trace_loads_or_says_why",  # corpus_traces()
]


def _child_pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, KINETOSCOPE_TEST_CORPUS=str(tmp_path / "no-corpus-here"))
    env.pop("CI", None)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *NEEDS_CORPUS],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.slow
def test_without_the_corpus_tests_skip_locally_and_say_why(tmp_path: Path) -> None:
    run = _child_pytest(tmp_path, None)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 skipped" in run.stdout, run.stdout
    assert "needs the trace corpus" in run.stdout  # the -rs summary says why


@pytest.mark.slow
@pytest.mark.parametrize("ci", ["true", "1"])
def test_without_the_corpus_tests_fail_in_ci(tmp_path: Path, ci: str) -> None:
    run = _child_pytest(tmp_path, ci)
    assert run.returncode == 1, run.stdout + run.stderr
    # A marked test fails in its setup (pytest counts an error), the others in their call.
    assert "1 failed" in run.stdout and "2 errors" in run.stdout, run.stdout
    assert "skipped" not in run.stdout, run.stdout
    assert run.stdout.count("CI=true: a missing corpus fails") >= 3, run.stdout
