"""A rank's reduced graph as the summary keeps it (`reduce.py` makes it): its columns
packed little-endian, and the builder that collects them piece by piece; and what a
reduction walked (`Shape`), which a summary under a further change is made from
(`reduce_again.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import msgspec
import numpy as np

from ..core.common import repeated
from ..distributed.summary import CollectiveTable

ArrayOrNumber = Union[np.ndarray, int, float]
VERSION = "5"  # 5: each step's recorded start and end (a what-if's baseline)
PACKED = {
    "node_kind": "<i1",
    "node_name": "<i8",
    "node_lane": "<i8",
    "node_start": "<f8",
    "node_end": "<f8",
    "node_transfer": "<f8",
    "node_own": "<f8",
    "collective_nodes": "<i8",
    "edge_dst": "<i8",
    "edge_src": "<i8",
    "edge_role": "<i1",
    "edge_lag": "<f8",
    "step_start_event": "<i8",
    "step_start_offset": "<f8",
    "step_end_event": "<i8",
    "step_end_offset": "<f8",
    "step_recorded_start": "<f8",
    "step_recorded_end": "<f8",
    "seg_node": "<i8",
    "seg_kind": "<i1",
    "seg_name": "<i8",
    "seg_lane": "<i8",
    "seg_start": "<f8",
    "seg_dur": "<f8",
}


class PathSummary(msgspec.Struct, gc=False):
    """One rank reduced (module doc); the `PACKED` fields are packed little-endian arrays."""

    version: str
    change: str  # the change's label, "" for the recorded timing
    matched: int
    rank: int | None
    time_origin_us: float
    collectives: CollectiveTable
    names: list[str]
    lanes: list[str]
    step_names: list[str]
    step_numbers: list[int | None]
    first_shift: float
    assumptions: list[str]
    node_kind: bytes
    node_name: bytes
    node_lane: bytes
    node_start: bytes
    node_end: bytes
    node_transfer: bytes
    node_own: bytes
    collective_nodes: bytes
    edge_dst: bytes
    edge_src: bytes
    edge_role: bytes
    edge_lag: bytes
    step_start_event: bytes
    step_start_offset: bytes
    step_end_event: bytes
    step_end_offset: bytes
    step_recorded_start: bytes  # the rank's steps as recorded (trace clock), whatever the change
    step_recorded_end: bytes
    seg_node: bytes
    seg_kind: bytes
    seg_name: bytes
    seg_lane: bytes
    seg_start: bytes
    seg_dur: bytes

    def column(self, name: str) -> np.ndarray:
        return np.frombuffer(getattr(self, name), dtype=PACKED[name])


class Reduced:
    """The reduced graph as it is built: nodes, edges and the local paths' segments, each
    column a list of pieces (arrays; a path's segments: lists), joined when packed."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}
        self.pieces: dict[str, list[Any]] = {k: [] for k in PACKED}
        self.node_count = 0

    def name(self, text: str) -> int:
        if text not in self._name_ids:
            self._name_ids[text] = len(self.names)
            self.names.append(text)
        return self._name_ids[text]

    def nodes(
        self,
        kind: ArrayOrNumber,
        name: ArrayOrNumber,
        lane: ArrayOrNumber,
        start: np.ndarray,
        end: np.ndarray,
        own: ArrayOrNumber = 0.0,
        transfer: ArrayOrNumber = 1.0,
    ) -> np.ndarray:
        """Nodes at their recorded times (`own`: their time under the change); their
        indices, in order after those made before."""
        count = int(start.size)
        first = self.node_count
        self.node_count += count
        for key, value in (
            ("node_kind", kind), ("node_name", name), ("node_lane", lane),
            ("node_start", start), ("node_end", end), ("node_transfer", transfer),
            ("node_own", own),
        ):  # fmt: skip
            self.pieces[key].append(repeated(value, count))
        return np.arange(first, first + count, dtype=np.int64)

    def edges(
        self, dst: np.ndarray, src: np.ndarray, role: ArrayOrNumber, lag: ArrayOrNumber
    ) -> None:
        count = int(dst.size)
        for key, value in (
            ("edge_dst", dst),
            ("edge_src", src),
            ("edge_role", role),
            ("edge_lag", lag),
        ):
            self.pieces[key].append(repeated(value, count))

    def packed(self, key: str) -> bytes:
        """One column, little-endian, as `PathSummary` keeps it."""
        return b"".join(packed(key, piece) for piece in self.pieces[key])


def packed(key: str, values: ArrayOrNumber) -> bytes:
    """`values` as the `PathSummary` column `key` keeps them (its dtype, little-endian)."""
    return np.asarray(values, dtype=PACKED[key]).tobytes()


@dataclass
class Shape:
    """What a reduction walked and made, for the same rank under another change
    (`reduce_again.py`): the events whose local paths were found (the collectives' starts,
    then each step's start and end) with their origins under each timing, where each step
    ended, the collectives' nodes, and each local path's node, its event and origin, and
    the timing it was found under (True: the collectives' ends late)."""

    collectives: np.ndarray  # the rank graph's collective nodes
    made: np.ndarray  # their nodes in the summary
    sinks: np.ndarray  # each step's end event
    events: np.ndarray
    ports: np.ndarray
    origins: tuple[np.ndarray, np.ndarray]
    path_node: np.ndarray
    path_event: np.ndarray
    path_origin: np.ndarray
    path_late: np.ndarray
