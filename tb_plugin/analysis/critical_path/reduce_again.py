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
from .changes import Change
from .parts import Part
from .path_summary import PathSummary, Shape, packed
from .reduce import path_lengths, timed
from .retime import chain_origins


def reduced_again(
    part: Part, first: PathSummary, shape: Shape, change: Change
) -> PathSummary | None:
    """The summary of `part` under `change`, from `first` (its summary without segments
    under another change, which made `shape`); None where the change reshapes it. The
    part's graph is finished (its order and adds: no change moves them)."""
    graph = part.graph
    factors, timings = timed(part, graph, change, shape.collectives)
    steps = windows(part.anchors, timings[0])
    if not np.array_equal(steps.sink, shape.sinks):
        return None
    for timing, walked in zip(timings, shape.origins):
        if not np.array_equal(chain_origins(graph, timing, shape.events, shape.ports), walked):
            return None
    own = first.column("node_own").copy()
    own[shape.path_node] = path_lengths(
        timings, shape.path_event, shape.path_origin, shape.path_late
    )
    transfer = first.column("node_transfer").copy()
    transfer[shape.made] = factors.transfer[shape.collectives]
    return msgspec.structs.replace(
        first,
        change=change.label(),
        matched=factors.matched,
        node_own=packed("node_own", own),
        node_transfer=packed("node_transfer", transfer),
        step_end_offset=packed("step_end_offset", steps.tail),
    )
