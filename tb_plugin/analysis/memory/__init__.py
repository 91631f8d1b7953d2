"""The Memory view: memory events prepared once, then levels, peaks and per-operator
statistics (`view.py`), the run's memory snapshots (`snapshot*.py`), and its endpoints
(`endpoint.py`)."""

from .view import (
    VERSION,
    CurveView,
    EventsView,
    MemoryView,
    has_memory,
    memory,
    memory_curve,
    memory_events,
)

__all__ = [
    "VERSION",
    "CurveView",
    "EventsView",
    "MemoryView",
    "has_memory",
    "memory",
    "memory_curve",
    "memory_events",
]
