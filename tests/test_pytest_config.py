"""The test run says why tests were skipped: pyproject's pytest options carry `-rs`."""

from __future__ import annotations

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
