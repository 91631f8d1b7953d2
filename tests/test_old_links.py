"""Old `#pytorch_profiler` links: the name is registered unless the old plugin is installed."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from kinetoscope.serve.loader import OldLinksLoader
from kinetoscope.serve.plugin import KinetoscopePlugin
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers


def tensorboard_app(logdir: Path) -> werkzeug_test.Client:
    """TensorBoard's WSGI app with our plugin and whatever the old-links loader gives."""
    context = base_plugin.TBContext(logdir=str(logdir))
    plugins = [KinetoscopePlugin(context)]
    old_links = OldLinksLoader().load(context)
    if old_links is not None:
        plugins.append(old_links)
    return werkzeug_test.Client(application.TensorBoardWSGI(plugins), wrappers.Response)


def test_the_loader_is_registered() -> None:
    names = {e.value for e in entry_points(group="tensorboard_plugins")}
    assert "kinetoscope.serve.loader:OldLinksLoader" in names


def test_old_name_serves_a_redirect_module_and_no_tab(tmp_path: Path) -> None:
    client = tensorboard_app(tmp_path)
    listing = json.loads(client.get("/data/plugins_listing").get_data())
    old = listing["pytorch_profiler"]
    assert old["enabled"] is False  # never a tab of its own
    assert old["loading_mechanism"]["module_path"].endswith("/static/old_links.js")
    module = client.get("/data/plugin/pytorch_profiler/static/old_links.js")
    assert module.status_code == 200
    assert module.headers["Content-Type"].startswith("text/javascript")
    assert b"render" in module.get_data()
    assert client.get("/data/plugin/pytorch_profiler/static/../plugin.py").status_code == 404


def test_the_old_plugin_keeps_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An importable torch_tb_profiler stands for the old plugin being installed.
    (tmp_path / "torch_tb_profiler").mkdir()
    (tmp_path / "torch_tb_profiler" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    context = base_plugin.TBContext(logdir=str(tmp_path))
    assert OldLinksLoader().load(context) is None
    listing = json.loads(tensorboard_app(tmp_path).get("/data/plugins_listing").get_data())
    assert "pytorch_profiler" not in listing and "kinetoscope" in listing
