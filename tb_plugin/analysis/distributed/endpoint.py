"""The Distributed view's endpoint, run-level: span S of every worker as one job. The plugin
computes it in the background (202 with progress); the CLI calls the compute itself. Its
types and compute are imported when first used."""

from __future__ import annotations

from ...ingest.discovery import Run
from ..core.endpoint import Answer, Endpoint, Lazy, Scope

ORDER = 90  # the folder's place in the page order (`api/view_folders.py`)


def _several_workers(run: Run) -> bool:
    return len(run.workers) >= 2


ENDPOINTS: list[Endpoint] = [
    Endpoint(
        "distributed",
        Scope.RUN,
        Lazy("kinetoscope.analysis.distributed.types", "DistributedResponse"),
        Lazy("kinetoscope.analysis.distributed.rank_summaries", "analyze_run"),
        page="distributed",
        supports=_several_workers,
        loading_ref=Lazy("kinetoscope.analysis.core.run_job_types", "DistributedLoading"),
        answer=Answer.RUN_JOB,
        text_ref=Lazy("kinetoscope.analysis.distributed.text", "render_distributed"),
    ),
]
