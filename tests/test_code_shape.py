"""Modules <= 330 lines of code (~400 lines) and functions <= ~60 lines, with a baseline of
exceptions that only shrinks."""

from __future__ import annotations

import ast

from code_shape import (
    FUNCTION_LIMIT,
    Size,
    _function_sizes,
    code_lines,
    current_sizes,
    findings,
    load_baseline,
)


def test_sources_keep_their_shape() -> None:
    problems = findings(current_sizes(), load_baseline())
    assert not problems, "\n".join(problems)


def test_every_exception_says_why() -> None:
    missing = [key for key, entry in load_baseline().items() if not str(entry["reason"]).strip()]
    assert not missing, f"baseline entries without a reason: {missing}"


def test_the_check_catches_growth_and_shrinkage() -> None:
    baseline: dict[str, dict[str, object]] = {
        "a.py": {"lines": 500, "reason": "r"},
        "b.py": {"lines": 450, "reason": "r"},
        "gone.py": {"lines": 420, "reason": "r"},
    }
    sizes = {
        "a.py": Size("a.py", 501, 400),  # grew
        "b.py": Size("b.py", 380, 400),  # back under the limit
        "c.py": Size("c.py", 401, 400),  # new and over
        "d.py": Size("d.py", 120, 400),  # fine
    }
    problems = findings(sizes, baseline)
    assert [p.split(":")[0] for p in problems] == ["a.py", "b.py", "c.py", "gone.py"]


def test_function_length_counts_decorators_and_nested_names() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LIMIT))
    indented = body.replace("\n", "\n    ")
    source = f"class K:\n    @staticmethod\n    def f():\n    {indented}\n"
    sizes = _function_sizes("m.py", ast.parse(source))
    assert [(s.key, s.lines) for s in sizes] == [("m.py::K.f", FUNCTION_LIMIT + 2)]


def test_a_module_is_measured_in_lines_of_code() -> None:
    """Blank lines, comments and docstrings are free: a module near the limit keeps the
    comments that say why; a statement over several lines counts each of them."""
    source = '''"""A module.

Its docstring, two lines more."""

# why the constant
LIMIT = 3  # a trailing comment


def f(x: int) -> int:
    """What f does."""
    return max(
        x,
        LIMIT,
    )
'''
    assert code_lines(source, ast.parse(source)) == 6
