"""Response and request types of the routes that are not a view's own: the listing, the
load status, the run-level envelope of the distributed view, and the query parameters of
every endpoint but the trace view's (`trace_view.params`). With the views' TypedDicts these
are the wire contract: the TypeScript types (frontend/src/api/generated.ts) are generated
from them, and the docs' examples are validated against them (tests/test_contract.py)."""

from typing import Any, Literal, Optional, TypedDict  # no `X | None`: evaluated at import (3.9)

from ..analysis.distributed.types import DistributedView
from .listing import RunListing, SpanListing, WorkerListing

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


class LoadError(TypedDict):
    kind: str
    message: str
    file: Optional[str]
    offset: Optional[int]


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


# --- the distributed view's run-level envelope ------------------------------------------------


class _RankKey(TypedDict):
    worker: str
    span: str


class RankError(_RankKey, total=False):
    """A rank whose file could not be summarized: the `status` error fields, when known."""

    kind: str
    message: str
    file: Optional[str]
    offset: Optional[int]


class DistributedResponse(DistributedView):
    run: str
    span: str
    state: Literal["ready"]
    errors: list[RankError]


class DistributedLoading(TypedDict):
    """`distributed` answers 202 with this while the per-rank summaries are computed."""

    run: str
    span: str
    state: Literal["loading"]
    ranks_done: int
    ranks_total: int


# --- query parameters (besides run, worker/workers and span) ------------------------------------
# Each is parsed once, before loading (`requests.decode_request`), and the compute function
# gets the decoded TypedDict: a value that is not an integer, a finite number or one of a
# Literal's choices answers 400. Ranges and names (a device that exists, t1 after t0) are
# checked by the compute function.


class NoParams(TypedDict):
    pass


class OperatorsParams(TypedDict, total=False):
    group_by: Literal["name", "shape"]


class _OperatorName(TypedDict):
    name: str


class CallStacksParams(_OperatorName, total=False):
    input_shape: str  # the JSON of a `shape` row's input_shape ("null": ops without one)


class KernelsParams(TypedDict, total=False):
    group_by: Literal["name", "op"]
    device: int
    stream: int


class FlameGraphParams(TypedDict, total=False):
    metric: Literal["cpu", "gpu"]


class DiffParams(TypedDict, total=False):
    """Besides the pair of spans (`Scope.PAIR`): operators matched by name, or by name
    and input shape."""

    group_by: Literal["name", "shape"]


class MemoryParams(TypedDict, total=False):
    device: str
    start_us: float
    end_us: float


class MemoryCurveParams(MemoryParams, total=False):
    width: int


class MemoryEventsParams(MemoryParams, total=False):
    sort: Literal["size", "alloc", "free", "duration"]
    offset: int
    limit: int


def request_fields(request: Any) -> tuple[str, ...]:
    """The parameter names of a request type, in declaration order (inherited first)."""
    return tuple(request.__annotations__)
