"""What every report reads that does not depend on the trace, made ahead of it: the
kernel taxonomy's compiled patterns and the device peaks table (both cached for the
process). `kinetoscope report` makes them while its first trace is read (the decoder lets
the GIL go), instead of after. (numpy.ma is not among them: the report's views find
distinct values with `common.distinct`, not `np.unique`, which imports it.)"""

from __future__ import annotations

from .roofline.peaks import entries
from .taxonomy import families


def make_ahead() -> None:
    families()
    entries()
