"""The flame graph of one span: host time per thread or kernel time by call path (Python
frames, ops, launches). Its types (`types.py`), its compute (`view.py`) and its endpoint
(`endpoint.py`): the example of a span view that lives in one folder."""

from .types import FlameFrame, FlameGraphParams, FlameGraphView
from .view import VERSION, flamegraph, flamegraph_view, supports

__all__ = [
    "VERSION",
    "FlameFrame",
    "FlameGraphParams",
    "FlameGraphView",
    "flamegraph",
    "flamegraph_view",
    "supports",
]
