"""The Kernels view's endpoint: a page for traces with kernels."""

from __future__ import annotations

from ..core.endpoint import Cache, Endpoint, span_view
from ..core.roofline.peaks import peaks_key
from .types import KernelsParams
from .view import VERSION, KernelsView, kernels_view, supports

ORDER = 40  # the folder's place in the page order (`api/view_folders.py`)

ENDPOINTS: list[Endpoint] = [
    span_view(
        "kernels",
        KernelsView,
        kernels_view,
        KernelsParams,
        # Rows carry roofline numbers: the device peaks' data version keys them too.
        f"{VERSION}p{peaks_key()}",
        Cache.ALL,
        page="kernels",
        supports=supports,
    ),
]
