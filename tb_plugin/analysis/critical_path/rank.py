"""One trace's graph and what maps it back to the trace: its host pieces, its GPU
activities, and the node of each."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .device import Activities
from .graph import Graph
from .host import Pieces
from .stream_waits import InferredWaits


@dataclass
class RankGraph:
    """The graph of one trace and what maps it back to the trace."""

    graph: Graph
    pieces: Pieces  # host pieces (inferred waits included)
    piece_node: np.ndarray  # node of each piece
    piece_wait: np.ndarray  # i8 per piece: host range position of the collective waited for
    acts: Activities
    act_node: np.ndarray  # node of each GPU activity
    transfer_node: dict[int, int]  # host collective row -> node
    origin: float  # the whole µs the host pieces' nanosecond grid counts from
    assumptions: list[str] = field(default_factory=list)
    inferred: InferredWaits | None = None  # the cross-stream waits inferred from calls
    handoffs: int = 0  # the backward thread's bursts linked to the training thread
