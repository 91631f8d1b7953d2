"""The critical path views of one trace (a span): its graph joined alone, kept with the
model, so the critical path, what-ifs and top gains of a span build it once."""

from __future__ import annotations

from ...model.trace_model import TraceModel
from .joint import Joint, join
from .parts import part_of
from .types import (
    CriticalPathParams,
    CriticalPathView,
    TopGainsParams,
    TopGainsView,
    WhatIfParams,
    WhatIfView,
)
from .view import critical_path_of, top_gains_of, whatif_of


def span_joint(model: TraceModel) -> Joint:
    return model.derived("_critical_path", lambda m: join([part_of(m, "", "pinned")]))


def critical_path_view(model: TraceModel, params: CriticalPathParams) -> CriticalPathView:
    """The chain of work that sets each step's length: host work, GPU activities,
    collectives, waits and gaps, with totals by kind, name and rank."""
    return critical_path_of(span_joint(model), "span", params)


def whatif_view(model: TraceModel, params: WhatIfParams) -> WhatIfView:
    """The steps re-timed with one change (a kernel, an op, a collective type or
    everything scaled by `factor`): the predicted step time and the new critical path."""
    return whatif_of(span_joint(model), "span", params)


def top_gains_view(model: TraceModel, params: TopGainsParams) -> TopGainsView:
    """The kernels, ops and collective types on the critical path, each made `factor`
    times as long (default twice as fast), ranked by the step time it saves."""
    return top_gains_of(span_joint(model), "span", params)
