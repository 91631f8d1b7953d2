"""The serving view of one span: a vLLM or SGLang trace's iterations (prefill, decode,
mixed) found from what the engine records, the GPU work of each, and per phase their
statistics. Its types (`types.py`), its markers and rules (`markers.py`, `hints.py`,
`data/serving.json`), its compute (`iterations.py`, `metrics.py`, `phases.py`,
`view.py`) and its endpoint (`endpoint.py`). Its names are imported from their modules
when first read: importing the endpoint does not import the compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION, supports
    from .types import Iteration, PhaseStats, ServingView
    from .view import serving, serving_view

__all__ = [
    "VERSION",
    "Iteration",
    "PhaseStats",
    "ServingView",
    "serving",
    "serving_view",
    "supports",
]
__getattr__ = lazy_exports(
    __name__,
    {
        "VERSION": "endpoint",
        "supports": "endpoint",
        "Iteration": "types",
        "PhaseStats": "types",
        "ServingView": "types",
        "serving": "view",
        "serving_view": "view",
    },
)
