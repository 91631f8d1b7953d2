"""Where the shared corpus of real traces is; tests skip cleanly without it."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def corpus_path(rel: str) -> Path:
    """Path of a corpus file; skips the calling test when the corpus is absent."""
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"corpus file not available: {rel}")
    return path


def corpus_available() -> bool:
    return CORPUS.is_dir()


def corpus_traces() -> list[Path]:
    """Every trace file of the corpus (not the goldens), sorted."""
    if not CORPUS.is_dir():
        return []
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
