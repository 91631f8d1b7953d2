"""The edges of one trace's graph (`build.py` makes its nodes): host order, each node's own
time, blocking calls and what they waited for, launches, stream order, recorded stream
waits, issued host collectives, and collectives' transfers."""

from __future__ import annotations

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import repeated
from ..core.host_ranges import HostRanges
from . import host_links
from .autograd_links import handoffs, training_and_backward
from .device import EventWaits
from .graph import (
    CHAIN,
    COLLECTIVE,
    DUR,
    EVENT,
    HANDOFF,
    INFERRED,
    ISSUE,
    LAUNCH,
    RETURN,
    STREAM,
    TRANSFER,
    WAKE,
    end_event,
    start_event,
)
from .rank import RankGraph
from .stream_waits import InferredWaits

WAKE_GAP_US = 1000.0  # a thread idle this long was waiting for something
WAKE_SLACK_US = 500.0  # ... that ended at most this long before it resumed


class Edges:
    """The edges of a rank graph, added to its arrays at `flush`."""

    def __init__(self, rg: RankGraph, host_first: np.ndarray, ranges: HostRanges) -> None:
        self.rg = rg
        self.host_first = host_first
        self.ranges = ranges
        self.dst: list[np.ndarray] = []
        self.src: list[np.ndarray] = []
        self.role: list[np.ndarray] = []
        self.lag: list[np.ndarray] = []

    def add(self, dst: np.ndarray, src: np.ndarray, role: int, lag: np.ndarray | float) -> None:
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        self.dst.append(dst)
        self.src.append(np.asarray(src, dtype=np.int64).reshape(-1))
        self.role.append(np.full(dst.size, role, np.int8))
        self.lag.append(repeated(lag, dst.size, np.float64))

    def chain(self) -> None:
        """Each host node after the previous node of its thread."""
        pieces, first = self.rg.pieces, self.host_first
        if first.size < 2:
            return
        thread = pieces.thread[first]
        nodes = np.arange(first.size)
        same = np.flatnonzero(thread[1:] == thread[:-1])
        self.add(start_event(nodes[same + 1]), end_event(nodes[same]), CHAIN, 0.0)

    def wakes(self) -> int:
        """A host node that starts its thread, or resumes it after a gap of at least
        WAKE_GAP_US, after
        the latest host node of another thread that ended at most WAKE_SLACK_US before it:
        what woke the thread is not recorded (the autograd thread started by the training
        thread's backward call, the training thread going on once backward is done).
        Returns how many were linked."""
        g, pieces, first = self.rg.graph, self.rg.pieces, self.host_first
        if first.size < 2:
            return 0
        thread = pieces.thread[first]
        start, end = g.start[: first.size], g.end[: first.size]
        same = np.concatenate([[False], thread[1:] == thread[:-1]])
        gap = start - np.concatenate([[-np.inf], end[:-1]])
        resumes = np.flatnonzero(~same | (gap >= WAKE_GAP_US))  # a thread's first, too
        by_end = np.argsort(end, kind="stable")
        ends = end[by_end]
        dst, src = [], []
        for node in resumes.tolist():
            j = int(np.searchsorted(ends, start[node], side="right")) - 1
            while j >= 0 and ends[j] >= start[node] - WAKE_SLACK_US:
                other = int(by_end[j])
                if thread[other] != thread[node]:
                    dst.append(node)
                    src.append(other)
                    break
                j -= 1
        self.add(start_event(dst), end_event(src), WAKE, 0.0)
        return len(dst)

    def handoffs(self, model: TraceModel) -> int:
        """The autograd engine's handoffs between the training thread and each backward
        thread (`autograd_links.py`); returns how many bursts were linked."""
        training, backward = training_and_backward(model)
        if training is None:
            return 0
        g, first = self.rg.graph, self.host_first
        thread = self.rg.pieces.thread[first]
        start, end = g.start[: first.size], g.end[: first.size]
        linked = 0
        for thread_key in backward:
            b_first, t_before, t_after, b_last = handoffs(thread, start, end, training, thread_key)
            self.add(start_event(b_first), end_event(t_before), HANDOFF, 0.0)
            self.add(start_event(t_after), end_event(b_last), HANDOFF, 0.0)
            linked += int(b_first.size)
        return linked

    def durations(self, block_call: np.ndarray, block_target: np.ndarray) -> None:
        """Each node's own time; a blocking node's is its return after what it waited for
        (and the edge from that), a collective's its transfer (`collectives`)."""
        g, rg = self.rg.graph, self.rg
        nodes = np.flatnonzero(g.kind != COLLECTIVE)
        dur = g.node_durations()
        lag = dur.copy()
        waited_node = np.full(len(g), -1, dtype=np.int64)
        first = self.host_first
        calls = rg.pieces.runtime[first]
        for call, target in zip(block_call.tolist(), block_target.tolist()):
            at = np.flatnonzero(calls == call)
            waited_node[at] = rg.act_node[target]
        for i in np.flatnonzero(rg.piece_wait[first] >= 0).tolist():
            transfer_row = int(self.ranges.rows[rg.piece_wait[first[i]]])
            waited_node[i] = rg.transfer_node.get(transfer_row, -1)
        blocked = np.flatnonzero(waited_node >= 0)
        ret = g.end[blocked] - g.end[waited_node[blocked]]
        lag[blocked] = ret
        self.add(end_event(nodes), start_event(nodes), DUR, lag[nodes])
        self.add(end_event(blocked), end_event(waited_node[blocked]), RETURN, ret)

    def launches(self, model: TraceModel) -> None:
        """Each GPU activity after the start of its launch call's node."""
        rg = self.rg
        pieces, first = rg.pieces, self.host_first
        src = _first_node_of(pieces.runtime[first], rg.acts.launch)
        ok = np.flatnonzero(src >= 0)
        self.add(start_event(rg.act_node[ok]), start_event(src[ok]), LAUNCH, 0.0)

    def streams(self) -> None:
        rg = self.rg
        prev = rg.acts.previous_on_stream()
        ok = np.flatnonzero(prev >= 0)
        self.add(start_event(rg.act_node[ok]), end_event(rg.act_node[prev[ok]]), STREAM, 0.0)

    def event_waits(self, waits: EventWaits, inferred: InferredWaits) -> None:
        rg = self.rg
        waited, waiting = waits.waited, waits.waiting
        self.add(start_event(rg.act_node[waiting]), end_event(rg.act_node[waited]), EVENT, 0.0)
        waited, waiting = inferred.waited, inferred.waiting
        self.add(start_event(rg.act_node[waiting]), end_event(rg.act_node[waited]), INFERRED, 0.0)

    def issues(self, found: list[host_links.Issue]) -> None:
        """Each host collective after the start of the op that issued it."""
        if not found:
            return
        rg = self.rg
        hr = self.ranges
        first = self.host_first
        node_at: dict[tuple[int, float], int] = {
            (int(t), float(s)): i
            for i, (t, s) in enumerate(zip(rg.pieces.thread[first], rg.pieces.start[first]))
        }
        for issue in found:
            node = rg.transfer_node.get(int(hr.rows[issue.transfer]))
            op = node_at.get((int(hr.thread[issue.op]), float(hr.start[issue.op])))
            if node is not None and op is not None:
                self.add(start_event([node]), start_event([op]), ISSUE, 0.0)

    def collectives(self, mode: str) -> None:
        """A collective ends its transfer after the last arrival: alone (`own`), its own
        arrival; `pinned`: no edge here (the run's join adds them)."""
        if mode != "own":
            return
        g = self.rg.graph
        nodes = np.flatnonzero(g.kind == COLLECTIVE)
        self.add(end_event(nodes), start_event(nodes), TRANSFER, g.node_durations()[nodes])

    def flush(self) -> None:
        g = self.rg.graph
        if not self.dst:
            return
        g.edge_dst = np.concatenate([g.edge_dst, *self.dst])
        g.edge_src = np.concatenate([g.edge_src, *self.src])
        g.edge_role = np.concatenate([g.edge_role, *self.role]).astype(np.int8)
        g.edge_lag = np.concatenate([g.edge_lag, *self.lag])


def _first_node_of(node_call: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Per call of `calls`, the first node whose call (`node_call`, per node; -1 none) it
    is; -1 where no node is."""
    nodes = np.flatnonzero(node_call >= 0)
    order = nodes[np.argsort(node_call[nodes], kind="stable")]
    keys = node_call[order]
    first = np.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    keys, order = keys[first], order[first]
    out = np.full(calls.size, -1, dtype=np.int64)
    if keys.size:
        pos = np.minimum(np.searchsorted(keys, calls), keys.size - 1)
        found = keys[pos] == calls
        out[found] = order[pos[found]]
    return out
