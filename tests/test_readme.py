"""The README's set-up facts match the files that decide them."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_node_version_is_the_one_package_json_needs() -> None:
    engines = json.loads((ROOT / "package.json").read_text())["engines"]["node"]
    assert engines.startswith(">=")
    assert f"Node.js {engines[2:]}+" in README


def test_python_versions_match_setup_py_and_the_pinned_torch() -> None:
    python_requires = re.search(r'python_requires=">=([\d.]+)"', (ROOT / "setup.py").read_text())
    assert python_requires and f"Python {python_requires.group(1)}+" in README
    torch = re.search(r'"torch==([\d.]+)"', (ROOT / ".ci" / "setup.sh").read_text())
    assert torch and f"torch {torch.group(1)}" in README
    major, minor = (int(part) for part in torch.group(1).split(".")[:2])
    if (major, minor) >= (2, 9):  # torch 2.9 dropped Python 3.9
        assert "Python 3.10+: they install torch" in README


def test_the_tab_url_is_the_one_the_demo_prints() -> None:
    demo = (ROOT / "samples" / "demo.sh").read_text()
    assert "/#kinetoscope" in demo and "http://127.0.0.1:6006/#kinetoscope" in README
    assert "../shared/corpus" in demo and "../shared/corpus" in README
