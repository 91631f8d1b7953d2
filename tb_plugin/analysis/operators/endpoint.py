"""The Operators view's endpoints: the page, and the call stacks of one operator (which
needs an operator's name: not a page of its own)."""

from __future__ import annotations

from ..core.endpoint import Cache, Endpoint, span_view
from ..core.roofline.peaks import peaks_key
from .types import CallStacksParams, OperatorsParams
from .view import VERSION, CallStacksView, OperatorsView, callstacks_view, operators_view

ORDER = 30  # the folder's place in the page order (`api/view_folders.py`)

ENDPOINTS: list[Endpoint] = [
    span_view(
        "operators",
        OperatorsView,
        operators_view,
        OperatorsParams,
        # Rows carry roofline numbers: the device peaks' data version keys them too.
        f"{VERSION}p{peaks_key()}",
        Cache.ALL,
        page="operators",
    ),
    span_view("callstacks", CallStacksView, callstacks_view, CallStacksParams, VERSION, Cache.ALL),
]
