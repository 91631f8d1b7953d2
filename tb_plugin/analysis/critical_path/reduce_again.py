"""A rank's summary under a further change, made from its summary under the first one
(`each_change.py`: a run's top gains summarise each rank under several changes). Where
the change moves no local path's origin and no step's end event, the reduced graph is the
first one's: the same nodes and edges, the same names. Only what the change sets differs,
the local paths' own times, the collectives' transfer factors and the steps' tails; so
those are worked out from the change's timings and put into the first summary, instead of
walking and building the reduced graph again (`reduce_part`). Where it moves one, None:
the caller reduces the rank in full. Either way the summary is the same, byte for byte
(`tests/test_critical_path_reduce_again.py`, over every corpus trace)."""

from __future__ import annotations

import msgspec
import numpy as np

from .anchors import windows
from .changes import Change, lags
from .parts import Part
from .path_summary import PACKED, PathSummary, Shape
from .reduce import LATE_US
from .retime import chain_origins, evaluate


def reduced_again(
    part: Part, first: PathSummary, shape: Shape, change: Change
) -> PathSummary | None:
    """The summary of `part` under `change`, from `first` (its summary without segments
    under another change, which made `shape`); None where the change reshapes it. The
    part's graph is finished (its order and adds: no change moves them)."""
    graph = part.graph
    factors = part.factors(change)
    lag = lags(graph, part.own_times(factors), factors.transfer)
    late_add = graph.add.copy()
    late_add[2 * shape.collectives + 1] += LATE_US
    timings = (evaluate(graph, lag), evaluate(graph, lag, late_add))
    steps = windows(part.anchors, timings[0])
    if not np.array_equal(steps.sink, shape.sinks):
        return None
    for timing, walked in zip(timings, shape.origins):
        if not np.array_equal(chain_origins(graph, timing, shape.events, shape.ports), walked):
            return None
    value = (timings[0].value, timings[1].value)
    own = np.frombuffer(first.node_own, dtype=PACKED["node_own"]).copy()
    late = shape.path_late
    own[shape.path_node] = np.where(
        late,
        value[1][shape.path_event] - value[1][shape.path_origin],
        value[0][shape.path_event] - value[0][shape.path_origin],
    )
    transfer = np.frombuffer(first.node_transfer, dtype=PACKED["node_transfer"]).copy()
    transfer[shape.made] = factors.transfer[shape.collectives]
    return msgspec.structs.replace(
        first,
        change=change.label(),
        matched=factors.matched,
        node_own=_packed("node_own", own),
        node_transfer=_packed("node_transfer", transfer),
        step_end_offset=_packed("step_end_offset", steps.tail),
    )


def _packed(key: str, values: np.ndarray) -> bytes:
    return np.asarray(values, dtype=PACKED[key]).tobytes()
