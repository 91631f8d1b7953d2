"""The README's set-up facts match the files that decide them."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

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
    announce = (ROOT / "samples" / "announce.py").read_text()
    assert "samples/announce.py" in demo and "/#kinetoscope" in announce
    assert "http://127.0.0.1:6006/#kinetoscope" in README
    assert "../shared/corpus" in demo and "../shared/corpus" in README


def test_set_up_is_two_commands_then_says_how_to_reach_them() -> None:
    """Exactly the two set-up commands; then how to reach what they installed in ./.venv
    (a new user's `kinetoscope` was "command not found") and a notebook's interpreter."""
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    block = setup.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["bash ./samples/demo.sh", "bash ./tests/run.sh"]
    assert "source .venv/bin/activate" in setup and ".venv/bin/kinetoscope" in setup
    assert ".venv/bin/python" in setup and "ipykernel" in setup


@pytest.mark.slow
def test_the_demo_prints_the_link_after_tensorboards_banner(tmp_path: Path) -> None:
    """The demo's last lines, run as they are: the `#kinetoscope` link comes after
    TensorBoard's banner (its own plain URL), so it is the last thing on the screen."""
    # The demo is given its port (its link names it), so the port is found free first;
    # another process may take it before TensorBoard binds it ("could not bind", seen
    # in CI for another test): then the demo runs again on another port.
    for _ in range(3):
        port = free_port()
        lines = _demo_lines(tmp_path, port)
        if not any("could not bind" in line for line in lines):
            break
    banners = [i for i, line in enumerate(lines) if f"http://127.0.0.1:{port}/ " in line]
    links = [i for i, line in enumerate(lines) if "#kinetoscope" in line]
    assert banners and links, lines
    banner, link = banners[0], links[0]
    assert link > banner, lines
    assert lines[link].endswith(
        f'http://127.0.0.1:{port}/#kinetoscope (the "PyTorch Profiler" tab)'
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _demo_lines(logdir: Path, port: int) -> list[str]:
    """What the demo's last lines print on `port`, up to its `#kinetoscope` link (or its
    end, or two minutes)."""
    demo = (ROOT / "samples" / "demo.sh").read_text()
    tail = demo[demo.index("PORT=${PORT") :]
    env = {**os.environ, "LOGDIR": str(logdir), "PORT": str(port), "HOST": "127.0.0.1"}
    proc = subprocess.Popen(
        ["bash", "-c", tail], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if "#kinetoscope" in line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return lines


@pytest.mark.slow
def test_the_demo_records_its_samples_quietly(tmp_path: Path) -> None:
    """The demo's sample line, run as it is (without the 2-rank run, for time): the
    sample's own lines only, no profiler start/stop logs, no torch warnings."""
    demo = (ROOT / "samples" / "demo.sh").read_text()
    (line,) = [ln for ln in demo.splitlines() if ln.startswith(".venv/bin/python samples/train")]
    line = line.replace('"$LOGDIR"', '"$LOGDIR" --no-ddp', 1)
    env = {**os.environ, "LOGDIR": str(tmp_path)}
    env.pop("TORCH_CPP_LOG_LEVEL", None)
    out = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line], cwd=ROOT, env=env, text=True,
        capture_output=True, timeout=600, check=True,
    )  # fmt: skip
    lines = (out.stdout + out.stderr).splitlines()
    assert [re.sub(r"[\d.]+ s$", "N s", ln) for ln in lines] == [
        "run mlp: N s",
        "run cnn: N s",
        f"logdir: {tmp_path}",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn", "mlp"]


def test_setup_keeps_the_install_and_build_quiet() -> None:
    """The set-up's editable install silences setuptools' "Editable installation." box (a
    warning of its build backend, shown through pip's --quiet); the build says its size."""
    setup = (ROOT / ".ci" / "setup.sh").read_text()
    (install,) = [ln for ln in setup.splitlines() if "pip install --quiet -e" in ln]
    assert install.startswith('PYTHONWARNINGS="ignore:Editable installation" ')
    assert "npm run --silent build | tail -n 1" in setup
