"""The modules an endpoint names by string (`registry.Lazy`, imported when first asked) are
import edges no linter sees: each is checked here against the import contracts of
pyproject.toml, as if the module that declares the endpoint imported it.

Endpoints are found at run time (every module-level `Endpoint`, or list / tuple / dict of
them, in the floors below the doors), so a view folder that exports its own endpoint is
checked as `api/endpoints.py` is. An endpoint held by several modules (a view folder's, and
the registry's list of them) is declared by the one on the lowest floor: the strictest."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kinetoscope.api.registry import Endpoint, Lazy

tomllib = pytest.importorskip("tomllib")  # the standard library's from Python 3.11
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
ROOT = "kinetoscope"


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads(PYPROJECT.read_text("utf-8"))["tool"]["importlinter"]
    return [c for c in config["contracts"] if c["type"] == "layers"]


def _floors_contract() -> dict[str, Any]:
    (floors,) = [c for c in _contracts() if c["id"] == "floors"]
    return floors


def _layers(contract: dict[str, Any]) -> list[list[tuple[str, bool]]]:
    """Per layer, top first, each of its packages and whether siblings are independent
    (`|`: they may not import each other; `:` they may); `(name)` optional, as the linter
    reads them. With `containers`, one set of layers per container."""
    out: list[list[tuple[str, bool]]] = []
    for containers in [contract.get("containers") or [""]]:
        for container in containers:
            prefix = f"{container}." if container else ""
            for layer in contract["layers"]:
                independent = ":" not in layer
                names = [n.strip().strip("()").strip() for n in re.split(r"[|:]", layer)]
                out.append([(prefix + n, independent) for n in names if n])
    return out


def _place(module: str, layers: list[list[tuple[str, bool]]]) -> tuple[int, str, bool] | None:
    """(layer index, top first; the package; independent siblings) of a module, or None
    when no layer of the contract holds it."""
    for i, layer in enumerate(layers):
        for package, independent in layer:
            if module == package or module.startswith(package + "."):
                return i, package, independent
    return None


def _doors() -> set[str]:
    """The packages on the floors above `api`: the doors (and the server above them)."""
    layers = _layers(_floors_contract())
    api = _place(f"{ROOT}.api", layers)
    assert api is not None, "the floors contract names kinetoscope.api"
    return {p for layer in layers[: api[0]] for p, _ in layer}


def _declaring_modules() -> Iterator[str]:
    """Every module of the floors below the doors (where endpoints are declared)."""
    doors = _doors()
    for layer in _layers(_floors_contract()):
        for package, _ in layer:
            if package in doors:
                continue
            yield package
            pkg = importlib.import_module(package)
            for info in pkgutil.walk_packages(pkg.__path__, package + "."):
                yield info.name


def _endpoints_in(value: Any) -> list[Endpoint]:
    if isinstance(value, Endpoint):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, Endpoint)]
    return []


def _floor(module: str) -> int:
    place = _place(module, _layers(_floors_contract()))
    assert place is not None, f"{module} is on no floor of the contract"
    return place[0]


def lazy_edges() -> list[tuple[str, str, Lazy]]:
    """(declaring module, endpoint name, Lazy) for every Lazy of every endpoint found."""
    holders: dict[int, tuple[str, Endpoint]] = {}
    for name in _declaring_modules():
        module = importlib.import_module(name)
        for value in list(vars(module).values()):
            for endpoint in _endpoints_in(value):
                held = holders.get(id(endpoint))
                # the lowest floor holding it declares it (layers are listed top first)
                if held is None or _floor(name) > _floor(held[0]):
                    holders[id(endpoint)] = (name, endpoint)
    edges = []
    for declarer, endpoint in holders.values():
        for field in msgspec.structs.fields(endpoint):
            value = getattr(endpoint, field.name)
            if isinstance(value, Lazy):
                edges.append((declarer, f"{endpoint.name}.{field.name}", value))
    return sorted(edges, key=lambda e: (e[0], e[1]))


EDGES = lazy_edges()
IDS = [e[1] for e in EDGES]


def _registry() -> dict[str, Endpoint]:
    """The registry's table of every route: the `ENDPOINTS` of the api floor."""
    for name in _declaring_modules():
        if name.startswith(f"{ROOT}.api"):
            table = getattr(importlib.import_module(name), "ENDPOINTS", None)
            if isinstance(table, dict):
                return table
    raise AssertionError("no ENDPOINTS table in kinetoscope.api")


def test_every_endpoint_of_the_registry_is_found() -> None:
    found = {e[1].split(".")[0] for e in EDGES}
    lazy_in_registry = {
        e.name
        for e in _registry().values()
        if any(isinstance(getattr(e, f.name), Lazy) for f in msgspec.structs.fields(e))
    }
    assert lazy_in_registry and lazy_in_registry <= found
    assert len(EDGES) >= 10  # today: the trace view's routes, distributed, snapshots, trend, diff


@pytest.mark.parametrize(("declarer", "where", "lazy"), EDGES, ids=IDS)
def test_lazy_target_resolves(declarer: str, where: str, lazy: Lazy) -> None:
    module = importlib.import_module(lazy.module)
    assert hasattr(module, lazy.name), f"{where}: {lazy.module} has no {lazy.name}"
    value = lazy.get()
    if where.endswith(".response_ref"):
        assert isinstance(value, type), f"{where}: {lazy.name} is not a type"
        if issubclass(value, dict):  # a TypedDict: its keys are declared
            assert hasattr(value, "__annotations__") and value.__annotations__, where
    else:
        assert callable(value), f"{where}: {lazy.name} is not callable"


def violations(declarer: str, target: str) -> list[str]:
    """Why `declarer` may not import `target` under the contracts (empty: it may)."""
    out = [
        f"names a door ({door})" for door in sorted(_doors()) if _place(target, [[(door, True)]])
    ]
    for contract in _contracts():
        layers = _layers(contract)
        here, there = _place(declarer, layers), _place(target, layers)
        if here is None or there is None:
            continue
        if there[0] < here[0]:
            out.append(f"{contract['id']}: {target} is on a layer above")
        elif there[0] == here[0] and there[1] != here[1] and here[2]:
            out.append(f"{contract['id']}: independent siblings")
    return out


@pytest.mark.parametrize(("declarer", "where", "lazy"), EDGES, ids=IDS)
def test_lazy_edge_obeys_the_import_contracts(declarer: str, where: str, lazy: Lazy) -> None:
    assert violations(declarer, lazy.module) == [], f"{where} declared in {declarer}"


def test_the_check_sees_an_upward_edge() -> None:
    """The check itself, on edges the product does not have."""
    assert violations(f"{ROOT}.api.endpoints", f"{ROOT}.trace_view.track_list") == []
    assert violations(f"{ROOT}.api.endpoints", f"{ROOT}.analysis.memory.snapshot_view") == []
    assert violations(f"{ROOT}.analysis.kernels", f"{ROOT}.trace_view.track_list") == [
        "floors: kinetoscope.trace_view.track_list is on a layer above"
    ]
    assert violations(f"{ROOT}.api.endpoints", f"{ROOT}.cli.report") == [
        f"names a door ({ROOT}.cli)",
        "floors: kinetoscope.cli.report is on a layer above",
    ]
    assert violations(f"{ROOT}.cli.report", f"{ROOT}.notebook.trace") == [
        f"names a door ({ROOT}.notebook)",
        "floors: independent siblings",
    ]


def test_the_registry_imports_no_view_compute() -> None:
    """Listing the routes (the registry, `kinetoscope report`'s command module) imports no
    view's compute: a warm report answers from the cache without it, a cold one imports
    each view's as that view computes."""
    code = (
        "import sys, kinetoscope.api.endpoints, kinetoscope.cli.report\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    compute = [
        m
        for m in loaded
        if re.fullmatch(r"kinetoscope\.analysis\.[a-z_]+\.(view|summary|rank_summaries)", m)
        or m in ("kinetoscope.analysis.core.optree", "kinetoscope.analysis.core.roofline.work")
        or m.startswith("kinetoscope.trace_view.index")
    ]
    assert compute == []
