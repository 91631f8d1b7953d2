"""`kinetoscope.open`: a run of traces in a notebook, found and loaded as the plugin does.

Which files exist comes from discovery (`target_runs`: a logdir, a run folder or one trace
file); models and views come from a `TraceStore` over the plugin's disk cache
(`default_cache_dir()`, `KINETOSCOPE_CACHE_DIR`), so a trace opened in TensorBoard, in
`kinetoscope report` or in an earlier notebook session is not parsed again.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

import msgspec

from ..analysis.distributed.rank_summaries import analyze_run
from ..api.endpoints import RUN_VIEWS
from ..api.resolve import find_run, resolve
from ..api.snapshots import memory_snapshot_view
from ..ingest.discovery import Run as ListedRun
from ..ingest.discovery import target_runs
from ..ingest.not_a_trace import no_traces_message
from ..store.cache import DiskCache, default_cache_dir
from ..store.trace_store import TraceStore
from .frames import flatten, require_pandas, rows_frame
from .trace import Trace

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Run", "open_run"]


def open_run(path: str, run: str | None = None, cache: bool = True) -> Run:
    """The run at `path`: a run folder (the folder holding trace files), a logdir with
    `run=` naming one of its runs (the only run needs no name), or one trace file.
    `cache=False` neither reads nor writes the disk cache."""
    require_pandas()
    runs = target_runs(str(path))
    if not runs:
        raise FileNotFoundError(no_traces_message(str(path)))
    names = [r.name for r in runs]
    if run is None:
        # A run folder is the run "." of itself, whatever runs its subfolders hold.
        chosen = runs[0] if len(runs) == 1 or names[0] == "." else None
        if chosen is None:
            raise ValueError(f"{path} holds several runs; pass run= one of: {', '.join(names)}")
    else:
        chosen = find_run(runs, run)
    return Run(chosen, TraceStore(DiskCache(default_cache_dir()) if cache else None))


class Run:
    """A run's workers and their spans (trace files); `trace(worker, span)` opens one,
    `distributed()` is the run-level view. Close it (or use `with`) to stop its loaders."""

    def __init__(self, listed: ListedRun, store: TraceStore) -> None:
        self._listed = listed
        self._store = store
        self.name = listed.name
        self.path = listed.path

    def __repr__(self) -> str:
        count = len(self.workers)
        return f"<kinetoscope Run {self.name!r}: {count} worker{'' if count == 1 else 's'}>"

    @property
    def workers(self) -> tuple[str, ...]:
        """Worker names, in the order the UI lists them."""
        return tuple(w.name for w in self._listed.workers)

    @property
    def spans(self) -> dict[str, tuple[str, ...]]:
        """Each worker's span names ("1", "2", ...: its trace files in time order)."""
        return {w.name: tuple(s.name for s in w.spans) for w in self._listed.workers}

    def trace(self, worker: str | None = None, span: str | int | None = None) -> Trace:
        """A worker's span; by default the first worker and its first span (what the UI
        shows when none is chosen). A name that names nothing raises `NotFound` (a
        ValueError) with the message a route's 404 and the CLI give."""
        target = resolve(self._listed, worker, span)
        return Trace(self._store, self.name, target.worker.name, target.span)

    def distributed_view(self, span: str | int | None = None) -> dict[str, Any]:
        """The `distributed` route's JSON: span `span` (default "1") of every worker as one
        job, computed by the function the route's background job runs."""
        cache_dir = str(self._store.cache.root) if self._store.cache else None
        name = None if span is None else str(span)
        view = analyze_run(self._listed, name, cache_dir, None, None, self._store)
        return msgspec.json.decode(msgspec.json.encode(view))  # type: ignore[no-any-return]

    def distributed(self, span: str | int | None = None) -> pd.DataFrame:
        """One row per rank of the `distributed` route (its `ranks`, nested lists as
        object columns); world size, backend and mode in `attrs`."""
        return rows_frame(self.distributed_view(span), "ranks", RUN_VIEWS["distributed"].response)

    @property
    def snapshot_files(self) -> tuple[str, ...]:
        """The run folder's memory snapshots (`*.pickle`, `*.pkl`), by file name."""
        return tuple(s.file for s in self._listed.snapshots)

    def memory_snapshot_view(self, span: str | int | None = None) -> dict[str, Any]:
        """The `memory_snapshot` route's JSON: every snapshot of the run, read safely,
        per device; aligned with the first worker's span `span` (default "1")."""
        name = None if span is None else str(span)
        view = memory_snapshot_view(self._listed, name, None, None, None, self._store)
        return msgspec.json.decode(msgspec.json.encode(view))  # type: ignore[no-any-return]

    def memory_snapshots(self, span: str | int | None = None) -> pd.DataFrame:
        """One row per snapshot file and device: `file`, `error` and `error_kind` (a file
        that could not be read has one row, with them), the device's figures of the
        `memory_snapshot` route (peak, allocated and reserved bytes, OOM count; its lists
        as object columns) and the file's `alignment` fields."""
        import pandas as pd

        rows = []
        for snapshot in self.memory_snapshot_view(span)["snapshots"]:
            common = {
                "file": snapshot["file"],
                "error": snapshot["error"],
                "error_kind": snapshot["error_kind"],
            }
            for device in snapshot["devices"] or [{}]:
                row = {**common, **device, "alignment": snapshot["alignment"]}
                rows.append(flatten({k: v for k, v in row.items() if v is not None}))
        return pd.DataFrame.from_records(rows, columns=_snapshot_columns(rows))

    def close(self) -> None:
        """Stops the run's load threads (models already returned stay usable)."""
        self._store.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _snapshot_columns(rows: list[dict[str, Any]]) -> list[str]:
    columns = ["file", "error", "error_kind", "device", "peak_allocated_bytes", "peak_time_us"]
    for row in rows:
        columns += [k for k in row if k not in columns]
    return columns
