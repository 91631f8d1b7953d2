"""Every view of real corpus traces against the stored expected outputs in
tests/expected/ (how they are made: tests/expected_views.py). A change of a view's numbers
fails here and shows in the diff of the regenerated files:

    KINETOSCOPE_UPDATE_EXPECTED=1 python -m pytest -q tests/test_expected_views.py
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from expected_views import (
    EXPECTED,
    RUN_CASES,
    SPAN_CASES,
    UPDATE,
    as_text,
    expected_path,
    run_documents,
    span_documents,
)
from kinetoscope.api.endpoints import RUN_VIEWS, VIEWS

pytestmark = pytest.mark.corpus

CASES = [(case, view) for case in SPAN_CASES for view in VIEWS]
CASES += [(case, view) for case in RUN_CASES for view in RUN_VIEWS]


@functools.cache
def _documents(case: str) -> dict[str, dict[str, Any]]:
    return span_documents(case) if case in SPAN_CASES else run_documents(case)


@pytest.mark.parametrize(("case", "view"), CASES, ids=[f"{c}-{v}" for c, v in CASES])
def test_the_view_gives_its_expected_output(case: str, view: str) -> None:
    doc = _documents(case)[view]
    path = expected_path(case, view)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(as_text(doc), encoding="utf-8")
        return
    assert path.exists(), f"no {path}: run with KINETOSCOPE_UPDATE_EXPECTED=1 to make it"
    stored = json.loads(path.read_text(encoding="utf-8"))
    hint = "if the change is intended: KINETOSCOPE_UPDATE_EXPECTED=1, then read the diff"
    # The visible part first, so pytest shows which numbers moved; then the cut rows.
    assert doc.get("json") == stored.get("json"), hint
    assert doc == stored, hint


def test_no_expected_file_is_left_over() -> None:
    """A renamed or removed view (or case) takes its expected file with it."""
    wanted = {expected_path(case, view) for case, view in CASES}
    stored = set(EXPECTED.glob("*/*.json"))
    if UPDATE:
        for path in stored - wanted:
            path.unlink()
        return
    assert not stored - wanted, "remove them, or regenerate with KINETOSCOPE_UPDATE_EXPECTED=1"
