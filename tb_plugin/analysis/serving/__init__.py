"""The serving view of one span: a vLLM or SGLang trace's iterations (prefill, decode,
mixed) found from what the engine records, the GPU work of each, and per phase their
statistics. Its types (`types.py`), its markers and rules (`markers.py`, `hints.py`,
`data/serving.json`), its compute (`iterations.py`, `metrics.py`, `phases.py`,
`view.py`) and its endpoint (`endpoint.py`)."""

from .types import Iteration, PhaseStats, ServingView
from .view import VERSION, serving, serving_view, supports

__all__ = [
    "VERSION",
    "Iteration",
    "PhaseStats",
    "ServingView",
    "serving",
    "serving_view",
    "supports",
]
