"""The map of docs/architecture.md, generated from the tree: per folder of `tb_plugin/`
(the package `kinetoscope`), its `__init__.py` docstring's first paragraph, and per module
its docstring's first sentence. Floors bottom to top, in the order of the floors contract
of pyproject.toml; a folder's subfolders follow it.

`python tests/architecture_map.py --write` rewrites the map between its markers in
docs/architecture.md (edit the docstrings, not the map); without `--write` it prints the
map. `tests/test_architecture_map.py` fails when the map is stale or a module has no
docstring. Reads the sources with `ast`: nothing of the package is imported.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tb_plugin"
DOC = ROOT / "docs" / "architecture.md"
PYPROJECT = ROOT / "pyproject.toml"
BEGIN = (
    "<!-- map: generated from the docstrings by `python tests/architecture_map.py --write`;"
    " edit the docstrings, not this list -->"
)
END = "<!-- end of the generated map -->"
SKIPPED = {"static"}  # the built frontend
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf")


def docstring(path: Path) -> str | None:
    return ast.get_docstring(ast.parse(path.read_text("utf-8"), str(path)))


def first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def first_sentence(text: str) -> str:
    """Up to the first full stop outside backticks and brackets that ends a sentence."""
    para = first_paragraph(text)
    depth, code = 0, False
    for i, ch in enumerate(para):
        if ch == "`":
            code = not code
        elif not code and ch in "([":
            depth += 1
        elif not code and ch in ")]":
            depth = max(0, depth - 1)
        elif ch == "." and not code and depth == 0:
            end = i + 1 == len(para) or para[i + 1] == " "
            word = para[:i].rsplit(" ", 1)[-1]
            if end and word.lower() not in _ABBREVIATIONS:
                return para[: i + 1]
    return para


def floors() -> list[str]:
    """The top-level folders, bottom floor first, as the floors contract lists them."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the contract's text
        text = PYPROJECT.read_text("utf-8")
        block = text.split('id = "floors"', 1)[1].split("layers = [", 1)[1].split("]", 1)[0]
        layers = block.splitlines()
    else:
        config = tomllib.loads(PYPROJECT.read_text("utf-8"))["tool"]["importlinter"]
        (contract,) = [c for c in config["contracts"] if c["id"] == "floors"]
        layers = contract["layers"]
    names = [n for layer in reversed(layers) for n in re.findall(r"kinetoscope\.(\w+)", layer)]
    return list(dict.fromkeys(names))  # siblings in the contract's order


def folders() -> list[Path]:
    """Every package folder, floors bottom first, each folder's subfolders after it."""
    order = {name: i for i, name in enumerate(floors())}
    tops = [p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file() and p.name not in SKIPPED]
    out: list[Path] = []
    for top in sorted(tops, key=lambda p: (order.get(p.name, len(order)), p.name)):
        out += sorted(p.parent for p in top.rglob("__init__.py"))
    return out


def missing_docstrings() -> list[str]:
    """Modules (and folders' `__init__.py`) of the package without a docstring."""
    paths = sorted(PACKAGE.glob("*.py")) + [
        p for folder in folders() for p in sorted(folder.glob("*.py"))
    ]
    return [str(p.relative_to(ROOT)) for p in paths if not docstring(p)]


def _entry(folder: Path, label: str) -> list[str]:
    init = docstring(folder / "__init__.py") or "(no docstring)"
    lines = [f"- **{label}**: {first_paragraph(init)}"]
    for module in sorted(folder.glob("*.py")):
        if module.name == "__init__.py":
            continue
        text = docstring(module)
        lines.append(f"  - `{module.stem}`: {first_sentence(text) if text else '(no docstring)'}")
    return lines


def generate() -> str:
    lines = _entry(PACKAGE, "`kinetoscope` (the package's root)")
    for folder in folders():
        lines += _entry(folder, f"`{folder.relative_to(PACKAGE).as_posix()}/`")
    return "\n".join(lines) + "\n"


def current() -> str | None:
    """The map now between the markers of docs/architecture.md (None: no markers)."""
    text = DOC.read_text("utf-8")
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].lstrip("\n")


def write() -> bool:
    """Rewrite the map between the markers; whether it changed."""
    text = DOC.read_text("utf-8")
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    new = f"{before}{BEGIN}\n{generate()}{END}{after}"
    if new != text:
        DOC.write_text(new, "utf-8")
    return new != text


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        print("docs/architecture.md", "rewritten" if write() else "unchanged")
    else:
        sys.stdout.write(generate())
    for path in missing_docstrings():
        print(f"no docstring: {path}", file=sys.stderr)
