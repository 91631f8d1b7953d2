"""The Overview view: one span's step-time breakdown, GPU summary per device and
recommendations (`view.py`), and its endpoint (`endpoint.py`). Its names are imported
from their modules when first read: importing the endpoint does not import the compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION
    from .view import ALL_PARTS, OverviewView, overview

__all__ = ["ALL_PARTS", "VERSION", "OverviewView", "overview"]
__getattr__ = lazy_exports(
    __name__,
    {"ALL_PARTS": "view", "VERSION": "endpoint", "OverviewView": "view", "overview": "view"},
)
