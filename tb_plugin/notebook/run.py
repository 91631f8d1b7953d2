"""`kinetoscope.open`: a run of traces in a notebook, found and loaded as the plugin does.

Which files exist comes from discovery (`session.list_target`: a logdir, a run folder or
one trace file); models and views come from the api's dispatcher over a session's store on
the plugin's disk cache (`default_cache_dir()`, `KINETOSCOPE_CACHE_DIR`), so a trace
opened in TensorBoard, in `kinetoscope report` or in an earlier notebook session is not
parsed again.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from ..api.dispatch import Dispatch
from ..api.endpoints import RUN_VIEWS
from ..api.lower import Run as ListedRun
from ..api.resolve import find_run, resolve
from ..api.session import FixedListing, Session, list_target, no_traces_message
from .frames import flatten, require_pandas, rows_frame, whole_path
from .trace import Trace

if TYPE_CHECKING:  # types only: naming them imports no view
    import pandas as pd

    from ..analysis.compile.types import CompileResponse
    from ..analysis.distributed.types import DistributedResponse
    from ..analysis.memory.snapshot_view import MemorySnapshotResponse

__all__ = ["Run", "open_run"]


def open_run(path: str, run: str | None = None, cache: bool = True) -> Run:
    """The run at `path`: a run folder (the folder holding trace files), a logdir with
    `run=` naming one of its runs (the only run needs no name), or one trace file.
    `cache=False` neither reads nor writes the disk cache."""
    require_pandas()
    runs = list_target(str(path))[2]
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
    return Run(chosen, Session(FixedListing((chosen,)), cache))


class Run:
    """A run's workers and their spans (trace files); `trace(worker, span)` opens one,
    `distributed()` is the run-level view. Close it (or use `with`) to stop its loaders."""

    def __init__(self, listed: ListedRun, session: Session) -> None:
        self._listed = listed
        self._session = session
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
        return Trace(self._session, self.name, target.worker.name, target.span)

    def distributed_view(self, span: str | int | None = None) -> DistributedResponse:
        """The `distributed` route's JSON: span `span` (default "1") of every worker as one
        job, computed by the function the route's background job runs."""
        return cast("DistributedResponse", self._run_view("distributed", span))

    def distributed(self, span: str | int | None = None) -> pd.DataFrame:
        """One row per rank of the `distributed` route (its `ranks`, nested lists as
        object columns); world size, backend and mode in `attrs`."""
        return rows_frame(self.distributed_view(span), "ranks", RUN_VIEWS["distributed"].response)

    @property
    def snapshot_files(self) -> tuple[str, ...]:
        """The run folder's memory snapshots (`*.pickle`, `*.pkl`), by file name."""
        return tuple(s.file for s in self._listed.snapshots)

    def memory_snapshot_view(self, span: str | int | None = None) -> MemorySnapshotResponse:
        """The `memory_snapshot` route's JSON: every snapshot of the run, read safely,
        per device; aligned with the first worker's span `span` (default "1")."""
        return cast("MemorySnapshotResponse", self._run_view("memory_snapshot", span))

    @property
    def compile_logs(self) -> tuple[str, ...]:
        """The run's TORCH_TRACE compile logs (its folder's and its `torch_trace/`'s)."""
        return tuple(c.file for c in self._listed.compile_logs)

    def compile_view(self, span: str | int | None = None) -> CompileResponse:
        """The `compile` route's JSON: the run's compile logs read, each compile placed on
        the clock of its worker's span `span` (default "1"); docs/compile.md."""
        return cast("CompileResponse", self._run_view("compile", span))

    def compiles(self, span: str | int | None = None) -> pd.DataFrame:
        """One row per compile of the `compile` route (its `compiles`: stages and cache
        flattened to `stages.dynamo_us`, `cache.state`, ...; lists as object columns)."""
        return rows_frame(self.compile_view(span), "compiles", RUN_VIEWS["compile"].response)

    def critical_path(self, span: str | int | None = None, step: str | None = None) -> pd.DataFrame:
        """One row per segment of the job's critical path across ranks (the
        `run_critical_path` route's `segments`, each with its rank and worker)."""
        view = whole_path(
            lambda offset: self._run_view("run_critical_path", span, step=step, offset=offset),
            "segments",
            "segments_total",
        )
        return rows_frame(view, "segments", RUN_VIEWS["run_critical_path"].response)

    def whatif(
        self, factor: float, span: str | int | None = None, rank: int | None = None, **change: Any
    ) -> pd.DataFrame:
        """One row per step of the job, recorded and predicted with one change (`kernel=`,
        `op=`, `collective=` or `rank_all=1`, by `factor`; on `rank` only when given): the
        `run_whatif` route's `steps`, its medians and predicted path in `attrs`."""
        view = self._run_view("run_whatif", span, factor=factor, rank=rank, **change)
        return rows_frame(view, "steps", RUN_VIEWS["run_whatif"].response)

    def _run_view(self, route: str, span: str | int | None, **params: Any) -> dict[str, Any]:
        """A run-level route's JSON, waited for (the job the route runs in the background)."""
        names = {"run": self.name, "span": None if span is None else str(span)}
        query = {k: str(v) for k, v in params.items() if v is not None}
        call = Dispatch(RUN_VIEWS[route], self._session, names, query)
        return call.ready().json()  # type: ignore[no-any-return]

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
            devices: list[Mapping[str, Any]] = [*(snapshot["devices"] or [])] or [{}]
            for device in devices:  # a file that could not be read: its one row
                row = {**common, **device, "alignment": snapshot["alignment"]}
                rows.append(flatten({k: v for k, v in row.items() if v is not None}))
        return pd.DataFrame.from_records(rows, columns=_snapshot_columns(rows))

    def close(self) -> None:
        """Stops the run's load threads (models already returned stay usable)."""
        self._session.close()

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
