"""The Overview view: one span's step-time breakdown, GPU summary per device and
recommendations (`view.py`), and its endpoint (`endpoint.py`)."""

from .view import ALL_PARTS, VERSION, OverviewView, overview

__all__ = ["ALL_PARTS", "VERSION", "OverviewView", "overview"]
