"""What the package declares it needs is what it imports: no dependency that nothing uses
(protobuf was one, until the Perfetto reader), and pandas only in the notebook extra."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Distribution name → the top-level module it installs, where they differ.
MODULE_OF: dict[str, str] = {"protobuf": "google"}


def declared(section: str) -> list[str]:
    """Distribution names of setup.py's `install_requires` or of one extra."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == section:
            value = ast.literal_eval(node.value)
            items = value if isinstance(value, list) else value["notebook"]
            return [re.split(r"[<>=\[ ]", item, maxsplit=1)[0] for item in items]
    raise AssertionError(f"setup.py has no {section}")


def imported_top_modules() -> set[str]:
    found = set()
    for path in [
        *ROOT.joinpath("tb_plugin").rglob("*.py"),
        *ROOT.joinpath("handlers").rglob("*.py"),
    ]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_every_required_distribution_is_imported() -> None:
    modules = imported_top_modules()
    unused = [d for d in declared("install_requires") if MODULE_OF.get(d, d) not in modules]
    assert unused == []


def test_pandas_is_the_notebook_extras_only() -> None:
    assert "pandas" not in declared("install_requires")
    assert declared("extras_require") == ["pandas"]
    users = {
        p.relative_to(ROOT).as_posix()
        for p in ROOT.joinpath("tb_plugin").rglob("*.py")
        if re.search(r"^\s*import pandas|^\s*from pandas", p.read_text(encoding="utf-8"), re.M)
    }
    # The notebook, and a view folder's own frames (`frames.py`, pandas imported inside
    # the function the notebook calls).
    frames = re.compile(r"tb_plugin/analysis/\w+/frames\.py")
    assert users and all(u.startswith("tb_plugin/notebook/") or frames.fullmatch(u) for u in users)
