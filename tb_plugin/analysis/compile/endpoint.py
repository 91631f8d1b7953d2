"""The `compile` view's endpoint, run-level: the run's TORCH_TRACE compile logs beside span S
of every worker, one background job (202 with progress while it reads); offered only for
runs that have compile logs, so a run without them costs nothing."""

from __future__ import annotations

from typing import Literal, TypedDict

from ...ingest.discovery import Run
from ..core.endpoint import Answer, Endpoint, Lazy, Scope

ORDER = 95  # the folder's place in the page order (`api/view_folders.py`)
TYPES = "kinetoscope.analysis.compile.types"  # imported when the route is first asked


class CompileLoading(TypedDict):
    """`compile` answers 202 with this while its job runs: the run job's progress, the
    traces of the run loaded so far (the body every run job answers)."""

    run: str
    span: str
    state: Literal["loading"]
    ranks_done: int
    ranks_total: int


def _has_compile_logs(run: Run) -> bool:
    return bool(run.compile_logs)


ENDPOINTS: list[Endpoint] = [
    Endpoint(
        "compile",
        Scope.RUN,
        Lazy(TYPES, "CompileResponse"),
        Lazy("kinetoscope.analysis.compile.view", "compile_view"),
        page="compile",
        supports=_has_compile_logs,
        loading_ref=CompileLoading,
        answer=Answer.RUN_JOB,
        text_ref=Lazy("kinetoscope.analysis.compile.text", "render_compile"),
    ),
]
