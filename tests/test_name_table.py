"""The trace view's answer name table (`workers.NameTable`): one model's codes placed by
numpy give the table and codes that matching names by their text gives (the rule for
several models), through several remaps, a second model, codes out of range, and a model
that names one text twice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from builders import TraceBuilder
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.trace_view.workers import NameTable, names_unique


def by_text(asks: list[tuple[TraceModel, np.ndarray]]) -> tuple[list[str], list[list[int]]]:
    """The table and codes as names matched by their text: each remap's distinct codes
    enter in code order, a code out of range naming ''."""
    table: list[str] = []
    where: dict[str, int] = {}
    answers = []
    for model, codes in asks:
        for code in sorted(set(codes.tolist())):
            name = model.names[code] if 0 <= code < len(model.names) else ""
            if name not in where:
                where[name] = len(table)
                table.append(name)
        answers.append(
            [where[model.names[c] if 0 <= c < len(model.names) else ""] for c in codes.tolist()]
        )
    return table, answers


def remapped(asks: list[tuple[TraceModel, np.ndarray]]) -> tuple[list[str], list[list[int]]]:
    names = NameTable()
    answers = [names.remap(model, codes).tolist() for model, codes in asks]
    return names.table, answers


def model_of(tmp_path: Path, folder: str, names: list[str]) -> TraceModel:
    b = TraceBuilder()
    for i, name in enumerate(names):
        b.op(name, 10 * i, 5)
    path = tmp_path / folder
    path.mkdir()
    return b.model(path)


def test_one_model_places_its_codes_as_the_text_does(tmp_path: Path) -> None:
    model = model_of(tmp_path, "a", [f"op{i}" for i in range(40)])
    assert names_unique(model)
    rng = np.random.default_rng(3)
    n = len(model.names)
    asks = [(model, rng.integers(0, n, size)) for size in (30, 0, 5, 60, 1)]
    assert remapped(asks) == by_text(asks)
    assert len(remapped(asks)[0]) == len(set(remapped(asks)[0]))


def test_a_second_model_and_codes_out_of_range_match_by_text(tmp_path: Path) -> None:
    first = model_of(tmp_path, "a", ["x", "y", "z", "shared"])
    second = model_of(tmp_path, "b", ["shared", "w", "x"])
    rng = np.random.default_rng(5)
    asks = [
        (first, rng.integers(0, len(first.names), 12)),
        (second, rng.integers(0, len(second.names), 12)),
        (first, rng.integers(0, len(first.names), 12)),
        (first, np.array([-1, 0, len(first.names) + 3])),
        (first, rng.integers(0, len(first.names), 12)),
    ]
    assert remapped(asks) == by_text(asks)
    out_first = [(first, np.array([-1, 2])), (first, np.arange(len(first.names)))]
    assert remapped(out_first) == by_text(out_first)


def test_a_model_naming_one_text_twice_matches_by_text(tmp_path: Path) -> None:
    model = model_of(tmp_path, "a", ["p", "q"])
    model.names.append("p")  # a second code of the same text
    assert not names_unique(model)
    asks = [(model, np.array([2, 0, 1, 2]))]
    table, answers = remapped(asks)
    assert (table, answers) == by_text(asks) == (["p", "q"], [[0, 0, 1, 0]])
