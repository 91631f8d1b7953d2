"""The Memory view: memory events prepared once, then levels, peaks and per-operator
statistics (`view.py`), the run's memory snapshots (`snapshot*.py`), and its endpoints
(`endpoint.py`). Its names are imported from their modules when first read: importing the
endpoint does not import the compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION, has_memory
    from .view import CurveView, EventsView, MemoryView, memory, memory_curve, memory_events

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
__getattr__ = lazy_exports(
    __name__,
    {name: "endpoint" if name in ("VERSION", "has_memory") else "view" for name in __all__},
)
