"""The views' uses of the model's derived structures (`kinetoscope.api.table_uses`, what a
one-shot report lets go of by) are current, and letting go of them changes no answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import numpy as np
import pytest
from corpus import corpus_path
from expected_views import SPAN_CASES
from kinetoscope.api import report as report_module
from kinetoscope.api.endpoints import VIEWS
from kinetoscope.api.report import report_run
from kinetoscope.api.session import Session
from kinetoscope.api.table_uses import TABLE_USES
from kinetoscope.ingest.build import build_model
from kinetoscope.model.derived_tables import forget_derived, record_derived
from table_uses import OUTPUT, RUN_OUTPUT


def test_the_table_uses_are_current() -> None:
    # A process of its own: what the tests before this one left running in the
    # background (a run job, a load) would otherwise ask too.
    made = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("table_uses.py"))],
        capture_output=True, text=True, check=True, cwd=Path(__file__).parent,
    )  # fmt: skip
    texts = json.loads(made.stdout)
    for path in (OUTPUT, RUN_OUTPUT):
        assert path.read_text("utf-8") == texts[path.name], (
            f"stale: run `python tests/table_uses.py --write` and commit tb_plugin/api/{path.name}"
        )


def test_a_structure_let_go_is_built_again_the_same() -> None:
    model = build_model(str(corpus_path(SPAN_CASES["h100_bert"])))
    first = VIEWS["overview"].of_span(model, VIEWS["overview"].decode({}))
    classes = model.derived("_kernel_classes", lambda m: None)
    assert classes is not None and model.derived_nbytes() > 0
    held = forget_derived(model, keep={"_health_view"})
    assert held > 0 and "_kernel_classes" not in model.__dict__
    with record_derived() as asked:
        again = VIEWS["overview"].of_span(model, VIEWS["overview"].decode({}))
    assert again == first
    assert asked <= TABLE_USES["overview"]  # what it asks again, as recorded
    rebuilt = model.derived("_kernel_classes", lambda m: None)
    assert rebuilt is not None and rebuilt is not classes
    assert np.array_equal(rebuilt.rows, classes.rows)
    assert np.array_equal(rebuilt.work, classes.work)


def test_every_view_has_its_uses_recorded() -> None:
    assert set(TABLE_USES) >= set(VIEWS)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_report_keeps_only_what_the_views_left_read(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-shot report of one trace (no run-level view follows) holds no derived
    table once its views are answered, its views computed one after another or side by
    side (KINETOSCOPE_VIEW_THREADS), and answers as the views do on a fresh model."""
    monkeypatch.setattr(report_module, "VIEW_THREADS", threads)
    path = str(corpus_path(SPAN_CASES["h100_bert"]))
    session = Session.for_command(cache=False)
    try:
        _, _, runs = session.list_target(path)
        report = report_run(session, runs[0], None, None, None, [])
    finally:
        session.close()
    assert report.model is not None and "overview" in report.views
    assert report.model.__dict__.get("_derived_keys") == []
    fresh = build_model(path)
    for name in ("overview", "operators", "memory"):
        view = VIEWS[name]
        alone = msgspec.json.decode(msgspec.json.encode(view.of_span(fresh, view.decode({}))))
        assert report.views[name] == alone


def test_a_derived_record_counts_the_arrays_it_holds() -> None:
    """Derived tables are records (msgspec Structs): their fields' arrays count, and so
    does what one with a dict caches (a cached property), as a dataclass's did."""
    from functools import cached_property

    from kinetoscope.model.derived_tables import held_nbytes

    class Pair(msgspec.Struct):
        rows: np.ndarray
        names: list[str]

    class Cached(msgspec.Struct, dict=True):
        rows: np.ndarray

        @cached_property
        def doubled(self) -> np.ndarray:
            return np.concatenate([self.rows, self.rows])

    rows = np.zeros(1000, np.int64)  # 8,000 bytes
    assert held_nbytes(Pair(rows, [])) == 8000
    cached = Cached(rows)
    assert held_nbytes(cached) == 8000
    _ = cached.doubled
    assert held_nbytes(cached) == 8000 + 16000
