"""What every report reads that does not depend on the trace, made ahead of it: the
kernel taxonomy's compiled patterns and the device peaks table (both cached for the
process), and numpy's masked-array module, which `np.unique` imports on its first call.
`kinetoscope report` makes them while its first trace is read (the decoder lets the GIL
go), instead of after."""

from __future__ import annotations

import importlib

from .roofline.peaks import entries
from .taxonomy import families


def make_ahead() -> None:
    families()
    entries()
    importlib.import_module("numpy.ma")
