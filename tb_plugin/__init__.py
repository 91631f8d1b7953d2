"""kinetoscope: PyTorch profiler (Kineto) traces in TensorBoard, and in notebooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .notebook import Run

__version__ = "0.1.0"


def open(path: Any, run: str | None = None, cache: bool = True) -> Run:
    """A run of traces as DataFrames (docs/python_api.md): a run folder, a logdir with
    `run=`, or one trace file. Imported on first use: TensorBoard imports this package at
    start-up, and neither the analyses nor pandas should load then."""
    from .notebook import open_run

    return open_run(str(path), run, cache)
