"""The query parameters of the Memory views: a device and a time range, and for the curve
its width, for the events their order and page (the responses are declared with their
compute in `view.py` and `curve.py`)."""

from typing import Literal, TypedDict

EVENTS_PAGE_MAX = 10000  # the largest `limit` of a `memory_events` page


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
