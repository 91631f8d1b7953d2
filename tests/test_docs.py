"""Every route of the plugin is documented in docs/http_api.md, with a JSON example."""

from __future__ import annotations

import re
from pathlib import Path

from kinetoscope.serve.plugin import KinetoscopePlugin
from tensorboard.plugins import base_plugin

DOC = Path(__file__).resolve().parents[1] / "docs" / "http_api.md"


def documented_routes() -> set[str]:
    return set(re.findall(r"^### `([^`]+)`", DOC.read_text(), flags=re.MULTILINE))


def test_every_route_is_documented(tmp_path: Path) -> None:
    plugin = KinetoscopePlugin(base_plugin.TBContext(logdir=str(tmp_path)))
    routes = {route.lstrip("/") for route in plugin.get_plugin_apps()}
    # The catch-all (a path naming no route: the JSON 404) is said in the page's opening.
    routes.discard("*")
    assert "no route named 'x'" in DOC.read_text()
    missing = routes - documented_routes()
    assert not missing, f"routes without a section in docs/http_api.md: {sorted(missing)}"
    stale = documented_routes() - routes
    assert not stale, f"sections for routes that do not exist: {sorted(stale)}"


def test_every_json_route_section_has_an_example() -> None:
    sections = re.split(r"^### ", DOC.read_text(), flags=re.MULTILINE)[1:]
    for section in sections:
        name = section.split("`")[1]
        if name in ("static/*", "download"):
            continue
        assert "```json" in section, f"no JSON example for {name}"
