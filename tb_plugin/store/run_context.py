"""What a run-level view (the distributed view, memory snapshots) or a logdir-level one
(the trend) is computed from: one typed object instead of six positional arguments. The
store's run jobs make it (with their progress and the store's disk cache); the api's
dispatcher, the CLI and the notebook make it through the jobs or directly."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

import msgspec

from ..ingest.discovery import Run

if TYPE_CHECKING:
    from .trace_store import TraceStore

Progress = Callable[[int, int], None]  # (files done, files in all) as they come in


class RunContext(msgspec.Struct, frozen=True):
    """`runs`: the run of a run-level view (one), or the logdir's runs of a logdir-level
    one; `span`: the span of every worker read (None: each worker's first); `params`: the
    decoded request of the view (a what-if's change, a logdir-level view's options);
    `cache_dir`: where file summaries are kept (None: nowhere); `executor`: where ranks are
    summarised (None: this machine's pools); `progress`: told as files are summarised;
    `store`: models already loaded (None: each file is read here)."""

    runs: tuple[Run, ...]
    span: str | None = None
    params: Mapping[str, Any] = msgspec.field(default_factory=dict)
    cache_dir: str | None = None
    executor: Executor | None = None
    progress: Progress | None = None
    store: TraceStore | None = None

    @classmethod
    def of(
        cls,
        run: Run,
        span: str | None = None,
        *,
        cache_dir: str | None = None,
        executor: Executor | None = None,
        progress: Progress | None = None,
        store: TraceStore | None = None,
    ) -> RunContext:
        """A run-level view's context: the run and its span, the rest by name."""
        return cls((run,), span, {}, cache_dir, executor, progress, store)

    @property
    def run(self) -> Run:
        """The one run of a run-level view."""
        if len(self.runs) != 1:
            raise ValueError(f"a run-level view reads one run, not {len(self.runs)}")
        return self.runs[0]


RunView = Callable[[RunContext], Any]  # a run- or logdir-level view's compute function
