"""Query parameters of the trace view's routes: its pure functions take them, and the
api's contract lists them with every other request type (so they sit below both); and
the error of one that names nothing (a door maps it without importing the trace view)."""

from typing import TypedDict  # no `X | None`: evaluated at import (3.9)


class TimelineNotFound(LookupError):
    """An unknown track, row or worker (HTTP 404)."""


class TracksParams(TypedDict, total=False):
    pass


# Parts the trace view's requests share (a TypedDict's fields: its bases' in order, then its own).


class _Tracks(TypedDict, total=False):
    tracks: str  # comma list of track ids (`worker:id` with several workers), or "all"


class _TimeRange(TypedDict, total=False):
    t0: float
    t1: float


class _Limit(TypedDict, total=False):
    limit: int  # at most this many rows or items


class TraceParams(_Tracks, _TimeRange, total=False):
    width: int
    min_px: float
    max_items: int


class EventParams(TypedDict):
    row: int


class FlowsParams(_Tracks, _TimeRange, _Limit, total=False):
    pass


class _SearchText(TypedDict):
    q: str


class SearchParams(_SearchText, _TimeRange, _Limit, total=False):
    pass


class RangeSummaryParams(_Tracks, _TimeRange, _Limit, total=False):
    pass


class SourcePathsParams(TypedDict, total=False):
    pass
