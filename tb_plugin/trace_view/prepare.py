"""The trace view's structures built once a trace is loaded, before the view asks.

The first `tracks` or `trace` request of a 4 GB trace would otherwise wait for the index
(seconds of CPU), its health marks, counters, and the first `flows` for the flow pairs
and the track ranges their ends bind to, and the first wide `range_summary` for its
running sums. Built here, in the background, one after the
other (`building.STRUCTURES`), each kept with the model as a request would keep it (a
request arriving meanwhile answers 202 until it is built: `building`; never a second
build), and each on disk beside the model's cache
entry (`index_store`: a warm start reads them back). Views being
computed come first: each step waits while the store computes one (at most
`YIELD_MAX_S`), so the page a user opens first is not slowed by the trace view they may
open later.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..model.trace_model import TraceModel
from .building import STRUCTURES

log = logging.getLogger(__name__)

YIELD_POLL_S = 0.05
YIELD_MAX_S = 30.0  # a view computing longer than this does not hold the rest back


def prepare_trace_view(model: TraceModel, busy: Callable[[], bool] = lambda: False) -> None:
    """Build what the trace view's routes need of `model`; `busy`: whether views are
    being computed now (each step waits for them first). A failure only logs: the
    route that needs the structure then builds it and reports its error."""
    for structure in STRUCTURES:
        deadline = time.monotonic() + YIELD_MAX_S
        while busy() and time.monotonic() < deadline:
            time.sleep(YIELD_POLL_S)
        try:
            structure.build(model)
        except Exception as exc:  # noqa: BLE001 - background work: the request reports it
            log.warning("kinetoscope: trace view %s not prepared: %s", structure.what, exc)
            return
