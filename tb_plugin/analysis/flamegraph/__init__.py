"""The flame graph of one span: host time per thread or kernel time by call path (Python
frames, ops, launches). Its types (`types.py`), its compute (`view.py`) and its endpoint
(`endpoint.py`): the example of a span view that lives in one folder. Its names are
imported from their modules when first read: importing the endpoint does not import the
compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION, supports
    from .types import FlameFrame, FlameGraphParams, FlameGraphView
    from .view import flamegraph, flamegraph_view

__all__ = [
    "VERSION",
    "FlameFrame",
    "FlameGraphParams",
    "FlameGraphView",
    "flamegraph",
    "flamegraph_view",
    "supports",
]
__getattr__ = lazy_exports(
    __name__,
    {
        "VERSION": "endpoint",
        "supports": "endpoint",
        "FlameFrame": "types",
        "FlameGraphParams": "types",
        "FlameGraphView": "types",
        "flamegraph": "view",
        "flamegraph_view": "view",
    },
)
