"""The Overview's endpoint: a page of its own, cached in every form."""

from __future__ import annotations

from ...model.trace_model import TraceModel
from ..core.endpoint import Cache, Endpoint, span_view
from ..core.requests import NoParams
from .view import VERSION, OverviewView, overview

ORDER = 10  # the folder's place in the page order (`api/view_folders.py`)


def _overview(model: TraceModel, params: NoParams) -> OverviewView:
    return overview(model)


ENDPOINTS: list[Endpoint] = [
    span_view("overview", OverviewView, _overview, NoParams, VERSION, Cache.ALL, page="overview"),
]
