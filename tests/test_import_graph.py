"""The one-way house, file by file: no import circle between two modules of the package,
counting every import (type-only ones under TYPE_CHECKING and deferred ones inside
functions too: a circle of types still ties two files into one unit to read). The floors'
order is import-linter's (`lint-imports`, pyproject.toml); its sibling check sees folders,
this one sees files."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tb_plugin"


def module_files() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "static" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(["kinetoscope", *parts])] = path
    return out


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules that `name` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found = sub if sub in modules else source
                if found in modules:
                    yield found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set(imported_modules(name, path, modules))
        # A module's own package __init__ is where Python looks first, not an import edge.
        graph[name] = {t for t in targets if t != name and not name.startswith(t + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_between_files() -> None:
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_planted_circle() -> None:
    graph = import_graph()
    graph["kinetoscope.model.errors"] = {"kinetoscope.model.categories"}
    graph["kinetoscope.model.categories"] = {"kinetoscope.model.errors"}
    assert ["kinetoscope.model.categories", "kinetoscope.model.errors"] in circles(graph)


def test_deferred_and_type_only_imports_count(tmp_path: Path) -> None:
    source = tmp_path / "kinetoscope" / "a.py"
    source.parent.mkdir()
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from . import b\n"
        "def f():\n    from .c import g\n"
    )
    modules = {"kinetoscope.a": source, "kinetoscope.b": source, "kinetoscope.c": source}
    assert set(imported_modules("kinetoscope.a", source, modules)) == {
        "kinetoscope.b",
        "kinetoscope.c",
    }
