"""Response types of the routes that are not a view's own: the listing and the load status
(also the body of a span view's 202: `core.endpoint.SPAN_STATUS` names it below api). The
views' request and response types live beside their compute (`analysis/<view>/types.py`,
the distributed view's run-level envelope in `analysis/distributed/types.py`); the names
below are re-exported for the callers that read them here. With the views' TypedDicts these
are the wire contract: the TypeScript types (frontend/src/api/generated.ts) are generated
from them, and the docs' examples are validated against them (tests/test_contract.py)."""

from typing import TYPE_CHECKING, Literal, Optional, TypedDict  # no `X | None`: evaluated

from ..analysis.core.endpoint import lazy_exports
from ..analysis.core.requests import NoParams, request_fields
from ..store.errors import LoadError
from ..store.view_budget import ViewQueue
from .listing import RunListing, SpanListing, WorkerListing

if TYPE_CHECKING:
    from ..analysis.core.run_job_types import DistributedLoading
    from ..analysis.diff.types import DiffParams
    from ..analysis.distributed.types import (
        DistributedResponse,
        DistributedView,
        RankError,
    )
    from ..analysis.flamegraph.types import FlameGraphParams
    from ..analysis.kernels.types import KernelsParams
    from ..analysis.memory.types import MemoryCurveParams, MemoryEventsParams, MemoryParams
    from ..analysis.operators.types import CallStacksParams, OperatorsParams

# The views' types, imported from beside their compute when first read here (the routes'
# own types below are what a door needs at once).
__getattr__ = lazy_exports(
    "kinetoscope.analysis",
    {
        "DiffParams": "diff.types",
        "DistributedLoading": "core.run_job_types",
        "DistributedResponse": "distributed.types",
        "DistributedView": "distributed.types",
        "RankError": "distributed.types",
        "FlameGraphParams": "flamegraph.types",
        "KernelsParams": "kernels.types",
        "MemoryCurveParams": "memory.types",
        "MemoryEventsParams": "memory.types",
        "MemoryParams": "memory.types",
        "CallStacksParams": "operators.types",
        "OperatorsParams": "operators.types",
    },
)

# Defined beside their compute; named here too for the callers that read them here.
__all__ = [
    "CallStacksParams",
    "DiffParams",
    "DistributedLoading",
    "DistributedResponse",
    "DistributedView",
    "FlameGraphParams",
    "KernelsParams",
    "LoadError",
    "MemoryCurveParams",
    "MemoryEventsParams",
    "MemoryParams",
    "NoParams",
    "OperatorsParams",
    "RankError",
    "RunsResponse",
    "SpansResponse",
    "SpanViewLoading",
    "StatusResponse",
    "ViewQueue",
    "WorkersResponse",
    "request_fields",
]

# --- listing ------------------------------------------------------------------------------


class RunsResponse(TypedDict):
    runs: list[RunListing]


class WorkersResponse(TypedDict):
    run: str
    workers: list[WorkerListing]


class SpansResponse(TypedDict):
    run: str
    worker: str
    spans: list[SpanListing]


# --- load status (also the body of a span's 202 "still loading") ----------------------------


class StatusResponse(TypedDict):
    run: str
    worker: str
    span: str
    state: Literal["loading", "ready", "error"]
    bytes_done: int
    bytes_total: int
    partial: bool
    warnings: list[str]
    error: Optional[LoadError]
    event_count: int
    views: list[str]  # the pages the data supports; only filled when ready


class SpanViewLoading(StatusResponse, total=False):
    """A span view's 202: the file's `status` while it loads; once it is loaded, while
    the view waits for the views' memory budget, `queued` says where it stands."""

    queued: ViewQueue


class TraceViewLoading(StatusResponse, total=False):
    """A trace view route's 202: the file's `status` while it loads; once it is loaded,
    while a structure the route needs is built the first time (in the background),
    `building` names it ("index", "flow pairs", "range sums", ...)."""

    building: str
