"""Where the shared corpus of real traces is, and what a test does without it.

Locally (a user's clone has no `../shared`) a test that needs the corpus skips and says
why (`pytest -rs` lists the reasons). In CI (`CI=true`, as GitHub Actions and most CI
services set it) the corpus is part of the checkout, so a missing corpus is a failure:
a green CI run must not have silently skipped every real-trace test.
`KINETOSCOPE_TEST_CORPUS` points the tests at another copy of the corpus.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, NoReturn

import pytest
from kinetoscope.analysis.core.trusted_rows import keep_ranks_row_flags
from kinetoscope.ingest.build import build_model
from kinetoscope.model.rank_batch import RankBatch, join_ranks, why_not_joined
from kinetoscope.model.trace_model import TraceModel

CORPUS = Path(
    os.environ.get("KINETOSCOPE_TEST_CORPUS")
    or Path(__file__).resolve().parents[2] / "shared" / "corpus"
)
MISSING_ID = "corpus-missing"


def in_ci() -> bool:
    """Whether the tests run in CI, where the corpus must be present."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def corpus_missing(what: str) -> NoReturn:
    """Skip the calling test (locally) or fail it (in CI): `what` of the corpus is absent."""
    message = f"needs the trace corpus: {what} not found under {CORPUS}"
    if in_ci():
        pytest.fail(f"{message} (CI=true: a missing corpus fails, it does not skip)", False)
    pytest.skip(message)


def corpus_path(rel: str) -> Path:
    """Path of a corpus file; skips (or in CI fails) the calling test when it is absent."""
    path = CORPUS / rel
    if not path.exists():
        corpus_missing(rel)
    return path


def corpus_available() -> bool:
    return CORPUS.is_dir()


def corpus_traces() -> list[Any]:
    """Every trace file of the corpus (not the goldens), sorted, for `parametrize`. Without
    the corpus: one placeholder case marked `corpus`, which the conftest skips or fails
    (an empty parameter list would skip with no word about the corpus, even in CI)."""
    if not CORPUS.is_dir():
        return [pytest.param(CORPUS, marks=pytest.mark.corpus, id=MISSING_ID)]
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file()
        and "goldens" not in p.parts
        and (p.name.endswith(".json") or p.name.endswith(".json.gz"))
    )


@functools.cache
def _built(path: str) -> TraceModel:
    return build_model(path)


def corpus_trace_model(path: Path) -> TraceModel:
    """`corpus_model` for a path from `corpus_traces()`."""
    return _built(str(path))


def corpus_model(rel: str) -> TraceModel:
    """The model of a corpus trace, built once per test run and shared (models are read-only,
    views memoise on them), so the suite does not decode the same file in every module."""
    return _built(str(corpus_path(rel)))


def read_as_batch(paths: list[Path]) -> RankBatch:
    """The files read and joined as a worker joins a batch of ranks (each rank's
    untrusted rows kept with the batch)."""
    models = [build_model(str(p)) for p in paths]
    batch = join_ranks(models)
    keep_ranks_row_flags(batch.model, models)
    return batch


@functools.cache
def joinable_corpus_traces() -> tuple[Path, ...]:
    """The corpus traces (not the goldens nor derived files) that a batch of ranks can
    join (`model.rank_batch`), sorted; the calling test skips (or in CI fails) without
    the corpus."""
    if not CORPUS.is_dir():
        corpus_missing("the corpus")
    paths = []
    for path in sorted(CORPUS.rglob("*.json*")):
        if "goldens" in path.parts or "derived" in path.parts:
            continue
        if why_not_joined([build_model(str(path))]) is None:
            paths.append(path)
    return tuple(paths)
