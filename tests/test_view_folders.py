"""The registry is the list of view folders: `api/view_folders.py` is generated from the
folders of analysis/ that have an `endpoint.py`, and fails here when stale (a folder added,
removed or reordered without running `python tests/gen_view_folders.py`)."""

from __future__ import annotations

import re
from pathlib import Path

import gen_view_folders
import pytest
from kinetoscope.api import endpoints, view_folders
from kinetoscope.api.registry import SPAN_STATUS


def test_generated_list_of_view_folders_is_current() -> None:
    assert gen_view_folders.OUTPUT.read_text(encoding="utf-8") == gen_view_folders.generate(), (
        "api/view_folders.py is stale: run python tests/gen_view_folders.py"
    )
    assert gen_view_folders.main(["--check"]) == 0


def test_every_folder_endpoint_is_in_the_table_in_folder_order() -> None:
    declared = [e.name for f in view_folders.VIEW_FOLDERS for e in f.ENDPOINTS]
    table = [n for n in endpoints.ENDPOINTS if n in declared]
    assert sorted(table) == sorted(declared)
    # Within one scope the table keeps the folders' order.
    for scope in {e.scope for f in view_folders.VIEW_FOLDERS for e in f.ENDPOINTS}:
        of_scope = [
            e.name for f in view_folders.VIEW_FOLDERS for e in f.ENDPOINTS if e.scope is scope
        ]
        assert [n for n in table if n in of_scope] == of_scope


def test_span_status_marker_becomes_the_span_loading_type() -> None:
    """A span view's 202 is the file's status, with `queued` while it waits for memory."""
    loading = [e.loading for e in endpoints.ENDPOINTS.values()]
    assert SPAN_STATUS not in loading
    assert endpoints.ENDPOINTS["overview"].loading.__name__ == "SpanViewLoading"
    assert endpoints.ENDPOINTS["diff"].loading.__name__ == "SpanViewLoading"


def test_folders_come_in_declared_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, order in (("zeta", 1), ("alpha", 2), ("core", 0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "endpoint.py").write_text(f"ORDER = {order}\nENDPOINTS = []\n")
    monkeypatch.setattr(gen_view_folders, "ANALYSIS", tmp_path)
    # `core` declares what an endpoint is: not a view folder.
    assert gen_view_folders.folders() == ["zeta", "alpha"]
    (tmp_path / "beta").mkdir()
    (tmp_path / "beta" / "endpoint.py").write_text("ENDPOINTS = []\n")
    with pytest.raises(ValueError, match="ORDER"):
        gen_view_folders.folders()


def test_every_view_folder_is_inside_the_walls() -> None:
    """pyproject's `views` contract names each folder of analysis on its level: a view folder
    left out of it would be unchecked (a view that imports another would pass)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    contracts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    views = next(c for c in contracts["contracts"] if c["id"] == "views")
    named = {p.strip() for layer in views["layers"] for p in layer.split("|")}
    folders = {p.name for p in gen_view_folders.ANALYSIS.iterdir() if (p / "__init__.py").exists()}
    assert named == folders, f"not in the views contract: {sorted(folders - named)}"
    assert set(gen_view_folders.folders()) | {"core"} == folders


def test_views_contract_is_written_from_the_folders_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new folder is walled in by the generator: the views contract's layers come from each
    endpoint.py's LEVEL (comparisons above, views independent of each other, core below)."""
    for name, level in (("zeta", None), ("alpha", None), ("cmp", "comparison"), ("core", None)):
        (tmp_path / name).mkdir()
        said = f'LEVEL = "{level}"\n' if level else ""
        (tmp_path / name / "endpoint.py").write_text(f"ORDER = 1\n{said}ENDPOINTS = []\n")
    monkeypatch.setattr(gen_view_folders, "ANALYSIS", tmp_path)
    current = 'x = 1\nid = "views"\ncontainers = ["a"]\nlayers = [\n  "old",\n]\nafter = 2\n'
    written = gen_view_folders.pyproject_text(current)
    assert written == (
        'x = 1\nid = "views"\ncontainers = ["a"]\nlayers = [\n'
        '  "cmp",\n  "alpha | zeta",\n  "core",\n]\nafter = 2\n'
    )
    (tmp_path / "zeta" / "endpoint.py").write_text('ORDER = 1\nLEVEL = "top"\nENDPOINTS = []\n')
    with pytest.raises(ValueError, match="LEVEL"):
        gen_view_folders.levels()


def test_every_view_text_is_its_folders() -> None:
    """What a command prints of a view is written in the view's folder (the endpoint's
    `text`): `report` (every page), `check` (health), `whatif`, `trend` and `diff`; the
    CLI's package holds commands, none of a view's text."""
    for folder in view_folders.VIEW_FOLDERS:
        package = folder.__name__.rsplit(".", 1)[0]
        for endpoint in folder.ENDPOINTS:
            if endpoint.text_ref is not None:
                assert endpoint.text_ref.module.startswith(package + "."), endpoint.name
    printed = {"health", "whatif", "run_whatif", "trend", "diff"}
    pages = [e for e in endpoints.ENDPOINTS.values() if e.page and e.report]
    printed |= {e.name for e in pages if e.page != "trace"}  # the Trace page has no text
    missing = sorted(n for n in printed if endpoints.ENDPOINTS[n].text is None)
    assert not missing, f"views a command prints with no text in their folder: {missing}"
    cli = Path(endpoints.__file__).parents[1] / "cli"
    renderers = [
        f"{module.name}: {name}"
        for module in sorted(cli.glob("*.py"))
        for name in re.findall(r"^def (render_\w+)", module.read_text(encoding="utf-8"), re.M)
    ]
    assert renderers == ["report_text.py: render_text"]  # the report: views' texts in a row


def test_every_page_of_the_registry_is_a_frontend_folder() -> None:
    """The pages the server lists (`status.views`, a run's `views`: the endpoints' `page`)
    are the frontend's page folders, each with its place in the list: a page added on
    one side only is offered by the server and never shown, or shown and never offered."""
    ids = {}
    for folder, name, kind in gen_view_folders.page_folders():
        text = (gen_view_folders.FRONTEND_VIEWS / folder / "index.ts").read_text(encoding="utf-8")
        body = text[text.index(f"export const {name}: {kind} = {{") :]
        found = re.search(r"\n  id: '(\w+)',\n  label: '[^']+',\n  order: (\d+),", body)
        assert found, f"views/{folder}/index.ts: its view gives id, label and order first"
        ids[found[1]] = kind
    pages = {e.page for e in endpoints.ENDPOINTS.values() if e.page}
    assert set(ids) == pages
    # A run's and a logdir's pages are run views (the shell loads no worker-span for them).
    run_scopes = {"run", "logdir"}
    run_pages = {e.page for e in endpoints.ENDPOINTS.values() if e.scope.value in run_scopes}
    assert {i for i, kind in ids.items() if kind == "RunViewDef"} == run_pages - {None}
