"""Small per-trace summaries kept under the cache root: one entry per trace file state
(path, size, mtime and parser version: `store.cache.cache_key`) in a folder of their own,
which the model cache's pruning leaves alone. A summary of another version, or one that
does not decode, is made again. The distributed job's rank summaries and the trend's trace
summaries are kept so; both read the traces they summarise through `model_of`."""

from __future__ import annotations

import logging
import os
from typing import Generic, TypeVar

import msgspec

from ...ingest.build import build_model
from ...model.trace_model import TraceModel
from ...store.cache import DiskCache

log = logging.getLogger(__name__)

S = TypeVar("S")


class SummaryCache(Generic[S]):
    """The summaries under `<cache_dir>/<folder>`, as the view `view` of each entry."""

    def __init__(
        self, cache_dir: str, folder: str, view: str, decoder: msgspec.json.Decoder[S], version: str
    ) -> None:
        self.disk = DiskCache(os.path.join(cache_dir, folder))
        self.view = view
        self.decoder = decoder  # built once by its module, before threads share it
        self.version = version

    def get(self, key: str) -> S | None:
        data = self.disk.load_view(key, self.view)
        if data is None:
            return None
        try:
            found = self.decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None  # made again
        return found if getattr(found, "version", None) == self.version else None

    def put(self, key: str, summary: S, path: str) -> None:
        """Keep `summary` of the trace at `path`; a folder that cannot be made is said in
        the log and the summary is only not kept."""
        try:
            self.disk.view_path(key, self.view).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("kinetoscope: cannot cache the summary of %s: %s", path, exc)
            return
        self.disk.store_view(key, self.view, msgspec.json.encode(summary))


def model_of(path: str, key: str, cache_dir: str | None) -> TraceModel:
    """The model of a trace to summarise: one already in the disk cache (the trace was
    opened in the UI), else the trace decoded in memory and not added to the model cache
    (hundreds of files would fill it)."""
    on_disk = DiskCache(cache_dir).load(key) if cache_dir else None
    return on_disk or build_model(path)
