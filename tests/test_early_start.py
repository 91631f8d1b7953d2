"""The first span's load begun at TensorBoard's `fix_flags` (`early_start`): the plugin
TensorBoard builds afterwards serves that session; flags that serve nothing begin none."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import TraceBuilder
from kinetoscope.serve.early_start import EarlyStart
from kinetoscope.serve.loader import KinetoscopeLoader
from kinetoscope.serve.plugin import KinetoscopePlugin
from tensorboard import program
from tensorboard.plugins import base_plugin
from tensorboard.plugins.core import core_plugin


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "job").mkdir(parents=True)
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.launch(20, 5, t.op("aten::mm", 10, 50), gpu_ts=30, gpu_dur=40)
    t.write(root / "job" / "worker0.100.pt.trace.json.gz", gz=True)
    return root


@pytest.fixture
def plugins() -> Iterator[list[KinetoscopePlugin]]:
    made: list[KinetoscopePlugin] = []
    yield made
    for plugin in made:
        plugin.watcher.stop()
        plugin.store.close()


def configured(*argv: str) -> tuple[program.TensorBoard, KinetoscopeLoader]:
    """TensorBoard's program with its core flags and our loader, configured by `argv`."""
    tensorboard = program.TensorBoard(plugins=[core_plugin.CorePluginLoader, KinetoscopeLoader])
    tensorboard.configure(argv=("tensorboard", *argv))
    loader = tensorboard.plugin_loaders[1]
    assert isinstance(loader, KinetoscopeLoader)
    return tensorboard, loader


def test_tensorboard_flags_begin_the_first_load(
    logdir: Path, plugins: list[KinetoscopePlugin]
) -> None:
    """Configured to serve a logdir, TensorBoard's flags begin the session and the first
    span's load; the plugin built afterwards serves that session (no second one)."""
    tensorboard, loader = configured("--logdir", str(logdir))
    early = loader._early
    assert isinstance(early, EarlyStart)
    early.wait()
    begun = early._session
    assert begun is not None
    first = str(logdir / "job" / "worker0.100.pt.trace.json.gz")
    deadline = time.monotonic() + 60
    while not begun.store.holds(first):
        assert time.monotonic() < deadline, "the first span's load never began"
        time.sleep(0.02)
    context = base_plugin.TBContext(logdir=tensorboard.flags.logdir, flags=tensorboard.flags)
    plugin = loader.load(context)
    plugins.append(plugin)
    assert plugin.session is begun
    assert loader._early is None


def test_flags_that_serve_nothing_begin_nothing(tmp_path: Path) -> None:
    assert configured("--logdir", str(tmp_path), "--inspect")[1]._early is None
    assert configured("--logdir", str(tmp_path), "--version_tb")[1]._early is None


def test_a_session_for_another_logdir_is_closed(
    logdir: Path, tmp_path: Path, plugins: list[KinetoscopePlugin]
) -> None:
    """The plugin's context naming another logdir than the flags did: the early session
    is closed, the plugin makes its own for its logdir."""
    early = EarlyStart(str(logdir))
    early.wait()
    begun = early._session
    assert begun is not None
    other = tmp_path / "other"
    other.mkdir()
    plugin = KinetoscopePlugin(base_plugin.TBContext(logdir=str(other)), early)
    plugins.append(plugin)
    assert plugin.session is not begun
    assert plugin.logdir == str(other)
    assert begun.store.closed
