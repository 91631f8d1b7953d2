"""Module and function length of the Python sources, against a baseline that may only shrink.

ruff has no rule for a module's length and counts a function's statements rather than its
lines, so this small check stands in for both (STYLE: modules <= ~400 lines, functions
<= ~60). A module is measured in lines of code: blank lines, comments and docstrings are
free, so a module near its limit never loses the comments that say why, nor folds its
code to fit (MODULE_LIMIT: 330 lines of code, about 400 lines with the ~20 % of comments
and docstrings the package holds). A function is measured in lines, decorators included.
Exceptions live in `code_shape_baseline.json`, each with its size and a reason.
The check fails when something new is over a limit, when a listed item grew, and when a
listed item is back under its limit (remove it: the baseline only shrinks).

`python tests/code_shape.py` prints the findings; `--write` rewrites the baseline with the
current sizes, keeping reasons (use it only to shrink).
"""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).with_name("code_shape_baseline.json")
SOURCES = ("tb_plugin", "handlers", "bench")
MODULE_LIMIT = 330  # lines of code (`code_lines`)
FUNCTION_LIMIT = 60


@dataclass(frozen=True)
class Size:
    key: str  # "path" for a module, "path::Qual.name" for a function
    lines: int
    limit: int


def python_files() -> list[Path]:
    """The tracked Python sources (scratch folders such as bench's anchor venv are not ours)."""
    listed = subprocess.run(
        ["git", "ls-files", "--", *(f"{top}/*.py" for top in SOURCES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(ROOT / rel for rel in listed)


def _function_sizes(rel: str, tree: ast.AST) -> list[Size]:
    sizes: list[Size] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    end = child.end_lineno or child.lineno
                    sizes.append(Size(f"{rel}::{name}", end - first + 1, FUNCTION_LIMIT))
                visit(child, name + ".")

    visit(tree, "")
    return sizes


def code_lines(text: str, tree: ast.AST) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    docs: set[int] = set()
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in ast.walk(tree):
        first = node.body[0] if isinstance(node, kinds) and node.body else None
        if isinstance(first, ast.Expr) and _is_text(first.value):
            docs.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skipped and token.type != tokenize.ENDMARKER:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docs)


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def current_sizes() -> dict[str, Size]:
    sizes: dict[str, Size] = {}
    for path in python_files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text("utf-8")
        tree = ast.parse(text)
        sizes[rel] = Size(rel, code_lines(text, tree), MODULE_LIMIT)
        for size in _function_sizes(rel, tree):
            sizes[size.key] = size
    return sizes


def load_baseline() -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads(BASELINE.read_text("utf-8"))["exceptions"]
    return data


def findings(sizes: dict[str, Size], baseline: dict[str, dict[str, object]]) -> list[str]:
    problems: list[str] = []
    for key, size in sizes.items():
        listed = baseline.get(key)
        if size.lines > size.limit and listed is None:
            problems.append(f"{key}: {size.lines} lines (limit {size.limit}); split it")
        elif listed is not None and size.lines > int(str(listed["lines"])):
            problems.append(f"{key}: grew to {size.lines} lines (baseline {listed['lines']})")
        elif listed is not None and size.lines <= size.limit:
            problems.append(f"{key}: now {size.lines} lines, within the limit; drop it")
    for key in baseline:
        if key not in sizes:
            problems.append(f"{key}: listed in the baseline but gone; drop it")
    return problems


def write_baseline(sizes: dict[str, Size], baseline: dict[str, dict[str, object]]) -> None:
    kept = {
        key: {"lines": size.lines, "reason": baseline.get(key, {}).get("reason", "")}
        for key, size in sorted(sizes.items())
        if size.lines > size.limit
    }
    doc = {"module_limit": MODULE_LIMIT, "function_limit": FUNCTION_LIMIT, "exceptions": kept}
    BASELINE.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    current = current_sizes()
    listed = load_baseline() if BASELINE.exists() else {}
    if "--write" in sys.argv:
        write_baseline(current, listed)
    for line in findings(current, load_baseline()):
        print(line)
