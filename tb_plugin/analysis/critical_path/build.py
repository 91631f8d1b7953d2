"""One trace as a dependency graph (`graph.py`): host nodes (runs of pieces between the
points other work depends on), GPU activities, host collectives and waits, and the edges
between them; with where each step starts and ends in it (`anchors.py`).

Host nodes are cut where a dependency enters or leaves a thread: at each launch call that
launched GPU work (its start is what the GPU activity waits for), at a blocking call, at
each communication op (it issues host collectives), at each host collective range and at
each inferred wait, and at step boundaries. Between cuts a node is the sum of its pieces.

Collectives are `own` (a span alone: the other ranks are unseen, each collective ends its
recorded duration after this rank arrives, as if it arrived last) or `pinned` (a rank of a
run: its end is left to the cross-rank join, `run.py`)."""

from __future__ import annotations

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import distinct, in_sorted, thread_keys, unique_inverse
from ..core.host_ranges import host_ranges, snap_ns
from ..core.queued_times import queued_times
from . import host_links
from .device import (
    Activities,
    EventWaits,
    activities,
    blocking_candidates,
    blocking_targets,
    event_waits,
)
from .edges import WAKE_GAP_US, WAKE_SLACK_US, Edges
from .graph import (
    COLLECTIVE,
    CPU,
    WAIT,
    GraphBuilder,
)
from .host import Pieces, host_pieces
from .rank import RankGraph
from .stream_waits import InferredWaits, inferred_waits

RETURN_SLACK_US = 50.0  # a blocking call returns at most this long after what it waited for


def rank_graph(model: TraceModel, collectives: str = "own", rank: int = 0) -> RankGraph:
    ranges = host_ranges(model)
    pieces = host_pieces(model)
    origin = ranges.origin if len(ranges) else _first_time(model)
    acts = activities(model, origin)
    found = host_links.issues(model)
    waits = host_links.waits(model, pieces, found)
    pieces, piece_wait = _with_waits(pieces, waits)
    block_call, block_target = _blocking(model, pieces, acts, origin)
    cuts = _cut_points(model, pieces, acts, found, block_call)
    piece_node = _node_of_pieces(pieces, piece_wait, cuts, block_call)
    b = GraphBuilder()
    host_nodes = _host_nodes(model, b, pieces, piece_node, piece_wait, block_call, rank)
    act_node = _gpu_nodes(model, b, acts, rank)
    graph = b.build()
    rg = RankGraph(graph, pieces, piece_node, piece_wait, acts, act_node, {}, origin)
    rg.transfer_node = _transfer_nodes(pieces, piece_node)
    edges = Edges(rg, host_nodes, ranges)
    edges.chain()
    handed = edges.handoffs(model)
    woken = edges.wakes()
    edges.durations(block_call, block_target)
    edges.launches(model)
    edges.streams()
    waits_found = event_waits(model, acts, origin)
    inferred = inferred_waits(model, acts, origin, waits_found.calls)
    edges.event_waits(waits_found, inferred)
    edges.issues(found)
    edges.collectives(collectives)
    edges.flush()
    rg.assumptions = _assumptions(found, waits, block_target, waits_found, woken)
    rg.assumptions += _stream_assumptions(waits_found, inferred, handed)
    rg.inferred, rg.handoffs = inferred, handed
    return rg


def _with_waits(pieces: Pieces, waits: list[host_links.Wait]) -> tuple[Pieces, np.ndarray]:
    """The pieces with one piece per inferred wait filling its gap; per piece the host
    collective (range position) it waits for, -1."""
    n = len(waits)
    wait_of = np.full(len(pieces), -1, dtype=np.int64)
    if n == 0:
        return pieces, wait_of
    minus = np.full(n, -1, dtype=np.int64)
    joined = Pieces(
        thread=np.concatenate([pieces.thread, [w.thread for w in waits]]).astype(np.int64),
        start=np.concatenate([pieces.start, [w.start for w in waits]]),
        end=np.concatenate([pieces.end, [w.end for w in waits]]),
        row=np.concatenate([pieces.row, minus]),
        range_pos=np.concatenate([pieces.range_pos, minus]),
        runtime=np.concatenate([pieces.runtime, minus]),
        blocking_call=np.concatenate([pieces.blocking_call, np.zeros(n, bool)]),
        transfer=np.concatenate([pieces.transfer, minus]),
    )
    wait_of = np.concatenate([wait_of, [w.transfer for w in waits]]).astype(np.int64)
    order = np.lexsort((joined.start, joined.thread))
    return Pieces(**{k: getattr(joined, k)[order] for k in joined.__dataclass_fields__}), wait_of[
        order
    ]


def _blocking(
    model: TraceModel, pieces: Pieces, acts: Activities, origin: float
) -> tuple[np.ndarray, np.ndarray]:
    """Host calls that blocked on GPU work (rows) and the activity each waited for."""
    calls = distinct(pieces.runtime[pieces.runtime >= 0])
    if calls.size == 0 or len(acts) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    calls = calls[blocking_candidates(model, calls)]
    ev = model.events
    start = snap_ns(ev["ts"][calls], origin)
    end = snap_ns(ev["ts"][calls] + ev["dur"][calls], origin)
    target = blocking_targets(acts, start, end, RETURN_SLACK_US)
    waited = target >= 0
    return calls[waited], target[waited]


def _first_time(model: TraceModel) -> float:
    """The clock's origin of a trace with no host range: its first event's (0: none)."""
    ts = model.events["ts"]
    return float(np.floor(np.nanmin(ts))) if ts.size and not np.isnan(ts).all() else 0.0


def _cut_points(
    model: TraceModel,
    pieces: Pieces,
    acts: Activities,
    found: list[host_links.Issue],
    block_call: np.ndarray,
) -> dict[int, np.ndarray]:
    """Per thread, the times where a host node must start."""
    from ..core.steps import host_step_rows

    ev = model.events
    ranges = host_ranges(model)
    origin = ranges.origin
    launchers = distinct(acts.launch[acts.launch >= 0])
    calls = np.concatenate([launchers, block_call])
    steps = host_step_rows(model)
    ops = np.array([i.op for i in found], dtype=np.int64)
    rows = np.concatenate([calls, block_call, steps, steps, ranges.rows[ops]])
    times = np.concatenate(
        [
            ev["ts"][calls],
            ev["ts"][block_call] + ev["dur"][block_call],
            ev["ts"][steps],
            ev["ts"][steps] + ev["dur"][steps],
            ev["ts"][ranges.rows[ops]],
        ]
    )
    times = snap_ns(times, origin)
    # The rows a piece or a range holds (a call of no time makes no piece: no cut).
    known = in_sorted(rows, distinct(pieces.runtime[pieces.runtime >= 0]))
    known |= in_sorted(rows, distinct(ranges.rows))
    rows, times = rows[known], times[known]
    if rows.size == 0:  # no call, step or range a piece holds (a trace of a few events)
        return {}
    thread = thread_keys(model, rows)
    order = np.lexsort((times, thread))
    thread, times = thread[order], times[order]
    bounds = np.flatnonzero(np.concatenate([[True], thread[1:] != thread[:-1], [True]]))
    # Sorted by thread, then time: each thread's distinct times are its changes of value.
    new = np.concatenate([[True], (times[1:] != times[:-1]) | (thread[1:] != thread[:-1])])
    return {
        int(thread[a]): times[a:b][new[a:b]]
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())
    }


def _node_of_pieces(
    pieces: Pieces, piece_wait: np.ndarray, cuts: dict[int, np.ndarray], block_call: np.ndarray
) -> np.ndarray:
    n = len(pieces)
    if n == 0:
        return np.zeros(0, np.int64)
    cut = np.ones(n, dtype=bool)
    same = pieces.thread[1:] == pieces.thread[:-1]
    contiguous = same & (pieces.start[1:] == pieces.end[:-1])
    cut[1:] = ~contiguous
    cut[1:] |= pieces.transfer[1:] != pieces.transfer[:-1]
    waiting = piece_wait >= 0
    cut |= waiting
    cut[1:] |= waiting[:-1]
    # block_call: distinct rows, ascending (`_blocking`'s): a binary search per piece,
    # not np.isin's sort of both arrays.
    blocking = in_sorted(pieces.runtime, block_call) & (pieces.runtime >= 0)
    cut[1:] |= blocking[1:] & (pieces.runtime[1:] != pieces.runtime[:-1])
    cut[1:] |= blocking[:-1] & (pieces.runtime[1:] != pieces.runtime[:-1])
    for thread, times in cuts.items():
        mine = np.flatnonzero(pieces.thread == thread)
        cut[mine[in_sorted(pieces.start[mine], times)]] = True  # times: sorted, distinct
    return np.cumsum(cut) - 1


def _host_nodes(
    model: TraceModel,
    b: GraphBuilder,
    pieces: Pieces,
    piece_node: np.ndarray,
    piece_wait: np.ndarray,
    block_call: np.ndarray,
    rank: int,
) -> np.ndarray:
    """Adds the host nodes (ids 0..k-1, in piece order); returns each node's first piece."""
    if len(pieces) == 0:
        return np.zeros(0, np.int64)
    first = np.flatnonzero(np.concatenate([[True], piece_node[1:] != piece_node[:-1]]))
    last = np.append(first[1:], len(pieces)) - 1
    kind = np.full(first.size, CPU, dtype=np.int8)
    kind[pieces.transfer[first] >= 0] = COLLECTIVE
    waits = piece_wait[first] >= 0
    blocked = in_sorted(pieces.runtime[first], block_call) & (pieces.runtime[first] >= 0)
    kind[waits | blocked] = WAIT
    lanes = _thread_lanes(model, b, pieces, first)
    b.nodes(
        kind,
        _host_names(model, b, pieces.row[first], piece_wait[first]),
        lanes,
        pieces.row[first],
        pieces.start[first],
        pieces.end[last],
        scalable=kind == CPU,
        rank=rank,
    )
    return first


def _host_names(
    model: TraceModel, b: GraphBuilder, rows: np.ndarray, waited: np.ndarray
) -> np.ndarray:
    """Per host node (its first piece's row, the collective it waits for), its name id: its
    innermost range or call's, "wait for <the collective>", "?" for no row."""
    ev = model.events
    ranges = host_ranges(model)
    n_model = len(model.names)
    code = np.where(rows >= 0, ev["name"][np.maximum(rows, 0)], n_model).astype(np.int64)
    waits = waited >= 0
    code[waits] = n_model + 1 + ev["name"][ranges.rows[waited[waits]]].astype(np.int64)
    used, index = np.unique(code, return_inverse=True)
    names = [
        model.names[c]
        if c < n_model
        else "?"
        if c == n_model
        else f"wait for {model.names[c - n_model - 1]}"
        for c in used.tolist()
    ]
    return b.name_ids(names)[index.reshape(-1)]


def _thread_lanes(
    model: TraceModel, b: GraphBuilder, pieces: Pieces, first: np.ndarray
) -> np.ndarray:
    """Per node, the lane of its thread ("pid/tid" as written in the trace, of the first
    piece of the thread with a row)."""
    ev = model.events
    with_row = np.flatnonzero(pieces.row >= 0)
    threads, at = np.unique(pieces.thread[with_row], return_index=True)
    rows = pieces.row[with_row[at]]
    ids = [
        b.lane_id(f"{model.pids[int(p)]}/{model.tids[int(t)]}")
        for p, t in zip(ev["pid"][rows].tolist(), ev["tid"][rows].tolist())
    ]
    node_thread = pieces.thread[first]
    lane = np.zeros(first.size, dtype=np.int64)
    if threads.size:
        pos = np.minimum(np.searchsorted(threads, node_thread), threads.size - 1)
        found = threads[pos] == node_thread
        lane[found] = np.array(ids, dtype=np.int64)[pos[found]]
    else:
        found = np.zeros(first.size, dtype=bool)
    if not found.all():
        lane[~found] = b.lane_id("?")
    return lane


def _gpu_nodes(model: TraceModel, b: GraphBuilder, acts: Activities, rank: int) -> np.ndarray:
    if len(acts) == 0:
        return np.zeros(0, np.int64)
    ev = model.events
    names = ev["name"][acts.rows]
    codes, inverse = unique_inverse(names)
    ids = b.name_ids([model.names[int(c)] for c in codes.tolist()])[inverse]
    # (pid, tid) code pairs as one integer each, in the pairs' order: one unique, where a
    # unique of rows makes three (a column each and their combination).
    width = max(len(model.tids), 1)
    pair = ev["pid"][acts.rows].astype(np.int64) * width + ev["tid"][acts.rows]
    lane_keys, lane_inverse = unique_inverse(pair)
    lane_ids = np.array(
        [
            b.lane_id(f"{model.pids[p // width]}/{model.tids[p % width]}")
            for p in lane_keys.tolist()
        ],
        dtype=np.int64,
    )[lane_inverse]
    nodes = b.nodes(
        acts.kind,
        ids,
        lane_ids,
        acts.rows,
        acts.start,
        acts.end,
        scalable=acts.kind != COLLECTIVE,
        rank=rank,
    )
    queued = queued_times(model, acts.rows, acts.launch)
    if queued.state == "recorded":
        wait_us = queued.waits_ns(model, acts.rows) / 1000.0  # NaN where none
        known = np.flatnonzero(wait_us > 0)
        b.queued(nodes[known], wait_us[known])
    return nodes


def _transfer_nodes(pieces: Pieces, piece_node: np.ndarray) -> dict[int, int]:
    mine = np.flatnonzero(pieces.transfer >= 0)
    return {int(pieces.transfer[i]): int(piece_node[i]) for i in mine.tolist()}


def _assumptions(
    found: list[host_links.Issue],
    waits: list[host_links.Wait],
    block_target: np.ndarray,
    event_waits_found: EventWaits,
    woken: int,
) -> list[str]:
    out = []
    if woken:
        out.append(
            f"{woken} thread resumptions after a gap of at least {WAKE_GAP_US / 1000:g} ms taken "
            f"as woken by work another thread ended at most {WAKE_SLACK_US:g} µs before (what "
            "a thread waited for is not recorded)"
        )
    if found:
        out.append(
            f"{len(found)} host collectives linked to the op that issued them (in order, "
            "by type: the backend's thread records no link)"
        )
    if waits:
        out.append(
            f"{len(waits)} host gaps taken as waits for a collective the thread issued (they "
            f"end within {host_links.WAIT_SLACK_US:g} µs after it; work.wait() is not recorded)"
        )
    if block_target.size:
        out.append(
            f"{block_target.size} host calls taken as blocked on GPU work (they returned "
            f"within {RETURN_SLACK_US:g} µs after work launched before them ended)"
        )
    return out


def _stream_assumptions(recorded: EventWaits, inferred: InferredWaits, handed: int) -> list[str]:
    out = []
    if handed:
        out.append(
            f"{handed} bursts of the autograd backward thread linked to the training thread "
            "(the engine's handoff: a burst inside the training thread's gap follows its "
            "last node and leads to its next; the handoff is not recorded)"
        )
    if recorded.unlinked:
        out.append(
            f"{recorded.unlinked} recorded cross-stream waits name no cudaEventRecord before "
            "them (no record id, one in the future, or not in the trace): not followed; "
            "their wait calls are placed as the calls around them show, if they can be"
        )
    if inferred.calls:
        out.append(inferred.said())
    return out
