"""The trace view's structures built once a trace is loaded, before the view asks.

The first `tracks` or `trace` request of a 4 GB trace would otherwise wait for the index
(seconds of CPU), its health marks, counters, and the first `flows` for the flow pairs
and the track ranges their ends bind to, and the first wide `range_summary` for its
running sums. Built here, in the background, one after the
other, each kept with the model as a request would keep it (a request arriving meanwhile
waits for the same build, never a second one), and each on disk beside the model's cache
entry (`index_store`: a warm start reads them back). Views being
computed come first: each step waits while the store computes one (at most
`YIELD_MAX_S`), so the page a user opens first is not slowed by the trace view they may
open later.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..analysis.core.health.view import ROW_CHECKS_KEY, row_checks
from ..model.trace_model import TraceModel
from .index import index_of
from .index_store import kept_on_disk
from .links import flow_pairs, track_ranges
from .range_summary import range_sums
from .workers import WorkerTrace, counters_of

log = logging.getLogger(__name__)

YIELD_POLL_S = 0.05
YIELD_MAX_S = 30.0  # a view computing longer than this does not hold the rest back


def _steps(model: TraceModel) -> list[tuple[str, Callable[[], object]]]:
    return [
        ("index", lambda: index_of(model)),
        ("counters", lambda: counters_of(WorkerTrace(None, model))),
        ("health marks", lambda: _health_marks(model)),
        ("flow pairs", lambda: flow_pairs(model, index_of(model))),
        ("track ranges", lambda: track_ranges(model, index_of(model))),
        ("range sums", lambda: range_sums(model, index_of(model))),
    ]


def _health_marks(model: TraceModel) -> None:
    """The health checks' marks of each row (what `trace` flags), kept on disk beside the
    index and given to the model as the health view's own structure when read back."""
    bits = kept_on_disk(
        model,
        "health_row_checks",
        lambda: row_checks(model),
        lambda found: ({"bits": found}, {}),
        lambda arrays, _: arrays["bits"],
    )
    model.derived(ROW_CHECKS_KEY, lambda _: bits)  # nothing when computed already


def prepare_trace_view(model: TraceModel, busy: Callable[[], bool] = lambda: False) -> None:
    """Build what the trace view's routes need of `model`; `busy`: whether views are
    being computed now (each step waits for them first). A failure only logs: the
    route that needs the structure then builds it and reports its error."""
    for name, step in _steps(model):
        deadline = time.monotonic() + YIELD_MAX_S
        while busy() and time.monotonic() < deadline:
            time.sleep(YIELD_POLL_S)
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - background work: the request reports it
            log.warning("kinetoscope: trace view %s not prepared: %s", name, exc)
            return
