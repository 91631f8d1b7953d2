"""TensorBoard's startup objects kept out of the cyclic GC's walks (`startup_freeze`):
frozen once per process when the plugin is made, after the garbage is collected."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from kinetoscope.serve import startup_freeze
from tensorboard.plugins import base_plugin


class Node:
    """A GC-tracked object that can be in a reference cycle and weakly referenced."""

    def __init__(self) -> None:
        self.other: Node | None = None


def tracked(obj: object) -> bool:
    """Whether the collector's generations (not the frozen ones) hold `obj`."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if no plugin had been made in this process yet; unfrozen afterwards."""
    monkeypatch.setattr(startup_freeze, "_done", False)
    yield
    gc.unfreeze()


def test_objects_alive_then_are_frozen_once(fresh_process: None) -> None:
    kept = Node()
    assert tracked(kept)
    assert startup_freeze.freeze_startup_objects()
    assert not tracked(kept)
    assert gc.get_freeze_count() > 0
    later = Node()
    assert not startup_freeze.freeze_startup_objects()  # once a process
    assert tracked(later)


def test_garbage_is_collected_not_frozen(fresh_process: None) -> None:
    gc.disable()  # no collection of its own between the cycle's making and the freeze
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only the cyclic collector frees it
        gone = weakref.ref(a)
        del a, b
        assert gone() is not None
        startup_freeze.freeze_startup_objects()
        assert gone() is None
    finally:
        gc.enable()


def test_the_plugin_freezes_when_made(fresh_process: None, tmp_path: Path) -> None:
    from kinetoscope.serve.plugin import KinetoscopePlugin

    before = Node()
    KinetoscopePlugin(base_plugin.TBContext(logdir=str(tmp_path)))
    assert not tracked(before)
    assert not startup_freeze.freeze_startup_objects()
