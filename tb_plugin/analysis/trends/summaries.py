"""Trace summaries read from, or written to, the disk cache: one small JSON per trace file
state (path, size, mtime, parser version) under `<cache>/.trends`, so a logdir seen before
reads only the files that are new or changed. The second analysis module that reads files
(as `distributed/rank_summaries` does), through the store's cache.

Memory stays bounded: files are summarised one at a time and each model is dropped once
summarised (a model the plugin's store already holds is taken from it, not parsed again;
one it does not hold is not added to it, as hundreds of runs would fill it)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from ...ingest.storage import file_identity
from ...model.trace_model import TraceModel
from ...store.cache import cache_key
from ...store.errors import LoadFailed, describe_error
from ..core.summary_cache import SummaryCache, model_of
from ..core.taxonomy import taxonomy_version
from .summary import VERSION, TraceSummary, summarize_trace

if TYPE_CHECKING:
    from ...store.trace_store import TraceStore

log = logging.getLogger(__name__)

SUMMARY_VIEW = f"trend-summary-v{VERSION}t{taxonomy_version()}"
SUMMARY_DIR = ".trends"  # under the cache root; "." keeps the model cache's pruning off it
_DECODER = msgspec.json.Decoder(TraceSummary)

Progress = Callable[[int, int], None]


def _model(path: str, key: str, cache_dir: str | None, store: TraceStore | None) -> TraceModel:
    if store is not None and store.holds(path):
        return store.wait(path)
    return model_of(path, key, cache_dir)


def summarize_file(
    path: str, cache_dir: str | None = None, store: TraceStore | None = None
) -> TraceSummary:
    """The summary of one trace file, from the cache when its state was summarised before.
    Raises LoadFailed (with the loader's error) for a file that cannot be read."""
    try:
        key = cache_key(file_identity(path))
    except OSError as exc:
        raise LoadFailed(describe_error(path, exc)) from None
    cache = (
        SummaryCache(cache_dir, SUMMARY_DIR, SUMMARY_VIEW, _DECODER, VERSION) if cache_dir else None
    )
    found = cache.get(key) if cache is not None else None
    if found is not None:
        return found
    try:
        model = _model(path, key, cache_dir, store)
    except LoadFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - described as the loader does
        raise LoadFailed(describe_error(path, exc)) from None
    summary = summarize_trace(model)
    del model  # before the next file is read
    if cache is not None:
        cache.put(key, summary, path)
    return summary


def summarize_files(
    paths: Sequence[str],
    cache_dir: str | None = None,
    progress: Progress | None = None,
    store: TraceStore | None = None,
) -> tuple[list[TraceSummary | None], list[str | None]]:
    """Each path's summary (None where it failed) and error message, one file at a time."""
    summaries: list[TraceSummary | None] = []
    errors: list[str | None] = []
    for done, path in enumerate(paths, 1):
        try:
            summaries.append(summarize_file(path, cache_dir, store))
            errors.append(None)
        except LoadFailed as exc:
            summaries.append(None)
            errors.append(str(exc.error.get("message", exc)))
        except Exception as exc:  # noqa: BLE001 - one file never takes the trend down
            log.warning("kinetoscope: trend summary of %s failed: %r", path, exc)
            summaries.append(None)
            errors.append(describe_error(path, exc)["message"])
        if progress is not None:
            progress(done, len(paths))
    return summaries, errors
