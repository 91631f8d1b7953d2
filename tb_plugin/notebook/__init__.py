"""The notebook API (docs/python_api.md): `kinetoscope.open(path)` → `Run` → `Trace`, whose
methods return pandas DataFrames holding exactly what the matching routes answer."""

from .run import Run, open_run
from .trace import Trace

__all__ = ["Run", "Trace", "open_run"]
