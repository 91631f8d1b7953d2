"""CUDA/HIP graph replays attributed to the launches that captured them.

A replayed kernel hangs off its graph launch call (`cudaGraphLaunch`, `hipGraphLaunch`):
every kernel of one replay carries the launch's correlation id, and no op of its own.
When the capture was profiled (vLLM and SGLang write it into `capture_traces/` beside the
run's traces; a trace may also hold its own capture), each replayed kernel is matched to
the launch call recorded while the graph was captured, and takes that call's op.

- A capture: the kernel-launch calls of one host thread between a `…StreamBeginCapture`
  and the next `…StreamEndCapture` of that thread, in call order. While capturing, a
  launch runs nothing: its kernel never appears, the call is all there is. Its op is the
  op tree's owner of the call (`optree.py`), so the capture-time op, its input shapes and
  its stack are that op's.
- A replay: the kernels launched by one graph-launch call, in start-time order (memcpy
  and memset nodes are left out on both sides).
- Matching, per replay: by `graph node id` when both the replayed kernels and the
  capture's launch calls carry one (CUPTI on CUDA 12+ writes it on kernels); else by
  alignment: the replay's kernels against a contiguous run of a capture's launch calls,
  position by position, on the launch details the capture knows (kernel name, grid,
  block: HIP writes them on the launch call; on CUDA they come from the warm-up run,
  `graph_capture.py`; a detail either side lacks agrees with anything).
  - A capture of as many launches as the replay has kernels fits when at least half of
    the positions agree (CUDA launch calls with no warm-up know nothing: there only the
    length and the order tell).
  - A longer capture fits at an offset where no position disagrees and the capture
    knows the kernel name of at least half of them (a capture often holds a launch or
    two that never replays, such as a last GEMM: diffusion serving).
  - The best fits: the most positions agreeing, then a capture of the same length
    before longer ones.
    Several best fits (a graph per layer, per batch size) are one answer when they name
    the same ops in the same order: the n-th replay of a sequence is taken as its n-th
    fit (vLLM captures a graph per layer and replays them in order; where captures
    differ only in shapes, the shapes are a best guess). When they name different ops
    the replay stays unmatched: an op would be a guess.
- Unmatched replayed kernels keep their graph-launch call as the op, and their graph
  (the replay's kernel sequence) says why (`ReplayedGraph.reason`): no capture profiled,
  none as long, none lining up, or several naming different ops.

Built only when a view asks (`graph_replay(model)`, memoised on the model); the capture
traces are loaded then, through the loader the store attached (`model.capture_models`).
"""

from __future__ import annotations

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, launches_of, name_flags
from .graph_annotations import annotated_ops, kernel_annotations
from .graph_capture import Capture, Key, LaunchDetails, captures_in
from .launches import launch_family

NOT_PROFILED = "capture not profiled"


class ReplayedGraph(msgspec.Struct, frozen=True):
    """One replayed kernel sequence (a graph, as its replays show it)."""

    first_kernel: str
    kernels: int  # kernels per replay
    reason: str | None  # why its replays are unmatched; None when a capture fits


class GraphReplay(msgspec.Struct):
    """Per replayed kernel of the model (rows sorted): the capture and launch it matched."""

    kernels: np.ndarray  # replayed kernel rows, sorted
    capture: np.ndarray  # index into `captures`, -1: unmatched
    position: np.ndarray  # index of the capture's launch call, -1: unmatched
    captures: list[Capture] = msgspec.field(default_factory=list)
    replays: int = 0  # graph-launch calls with kernels
    captures_found: int = 0
    launcher: np.ndarray = msgspec.field(default_factory=lambda: np.empty(0, np.int64))
    # into `graphs`
    graph: np.ndarray = msgspec.field(default_factory=lambda: np.empty(0, np.int64))
    graphs: list[ReplayedGraph] = msgspec.field(default_factory=list)
    # Per replayed kernel, the op its CUDA-graph annotations name (`graph_annotations`)
    annotated_op: list[str | None] = msgspec.field(default_factory=list)

    def op_name(self, i: int) -> str | None:
        c = int(self.capture[i])
        return None if c < 0 else self.captures[c].op_names[int(self.position[i])]

    def name_of(self, i: int) -> str | None:
        """The op replayed kernel `i` is named by: its profiled capture's, else the one its
        annotations name ("named from annotations"), else None."""
        if self.capture[i] >= 0:
            return self.op_name(i)
        return self.annotated_op[i] if self.annotated_op else None

    @property
    def annotated(self) -> np.ndarray:
        """Unmatched to a capture, named by an annotation."""
        named = np.array([op is not None for op in self.annotated_op], dtype=bool)
        return (named & ~self.matched) if named.size else np.zeros(self.kernels.size, bool)

    @property
    def named(self) -> np.ndarray:
        """Named by an op: matched to a capture, or annotated."""
        return self.matched | self.annotated

    def op_of(self, i: int) -> tuple[TraceModel, int] | None:
        """The capture model and the row of the op that captured replayed kernel `i`."""
        c = int(self.capture[i])
        if c < 0:
            return None
        row = int(self.captures[c].op_rows[int(self.position[i])])
        return (self.captures[c].model, row) if row >= 0 else None

    @property
    def matched(self) -> np.ndarray:
        return self.capture >= 0


def graph_replay(model: TraceModel) -> GraphReplay:
    return model.derived("_graph_replay", _build)


def captured_as(model: TraceModel, rows: np.ndarray) -> dict[int, str]:
    """Per kernel row of `rows` (sorted) replayed from a CUDA graph and known, by its index
    in `rows`: what it was captured as, its annotations' label first (they name module and
    phase too, `graph_annotations.py`), else the op of its profiled capture."""
    replay = graph_replay(model)
    if replay.kernels.size == 0 or rows.size == 0:
        return {}
    labels = kernel_annotations(model, replay.kernels).labels
    at = np.minimum(np.searchsorted(rows, replay.kernels), rows.size - 1)
    out: dict[int, str] = {}
    for i, k in enumerate(at.tolist()):
        name = labels[i] or replay.op_name(i)
        if name and rows[k] == replay.kernels[i]:
            out[k] = name
    return out


def _is_graph_launch(name: str) -> bool:
    return launch_family(name) == "graph_launch"


def replayed_kernels(model: TraceModel) -> tuple[np.ndarray, np.ndarray]:
    """Kernel rows launched by a graph-launch call, and that call's row for each."""
    kernels = complete_rows(model, Kind.KERNEL)
    launchers = launches_of(model, kernels) if kernels.size else np.empty(0, np.int64)
    is_graph = name_flags(model, _is_graph_launch)
    ok = launchers >= 0
    replayed = np.zeros(kernels.size, bool)
    replayed[ok] = is_graph[model.events["name"][launchers[ok]]]
    return kernels[replayed], launchers[replayed]


class _Fit(msgspec.Struct):
    at: list[tuple[int, int]]  # (capture, offset of the replay's first kernel) that fit best
    reason: str | None  # why none fits


def _build(model: TraceModel) -> GraphReplay:
    kernels, launchers = replayed_kernels(model)
    empty = np.full(kernels.size, -1, np.int64)
    result = GraphReplay(kernels, empty, empty.copy(), launcher=launchers, graph=empty.copy())
    if kernels.size == 0:
        return result
    result.annotated_op = annotated_ops(model, kernels)
    sources = [model, *[m for m in model.capture_models() if m is not model]]
    captures = [c for m in sources for c in captures_in(m)]
    result.captures, result.captures_found = captures, len(captures)
    by_launch = np.argsort(launchers, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(launchers[by_launch])) + 1]
    result.replays = int(starts.size)
    details = model.args_of(kernels, LaunchDetails)
    names = model.events["name"][kernels]
    ts = model.events["ts"][kernels]
    by_id = _node_index(captures) if any(d.node_id is not None for d in details) else {}
    fits: dict[tuple[Key, ...], _Fit] = {}
    seen: dict[tuple[Key, ...], int] = {}
    graph_of: dict[tuple[Key, ...], int] = {}
    for lo, hi in zip(starts.tolist(), [*starts[1:].tolist(), kernels.size]):
        group = by_launch[lo:hi]
        group = group[np.argsort(ts[group], kind="stable")]
        keys = tuple(
            (model.names[int(names[i])], details[i].grid, details[i].block) for i in group.tolist()
        )
        if keys not in fits:
            fits[keys] = _by_sequence(captures, keys)
            graph_of[keys] = len(result.graphs)
            result.graphs.append(ReplayedGraph(str(keys[0][0]), len(keys), fits[keys].reason))
        result.graph[group] = graph_of[keys]
        found = _by_node_id(by_id, [details[i].node_id for i in group.tolist()])
        if found is None and fits[keys].at:
            at, nth = fits[keys].at, seen.get(keys, 0)
            seen[keys] = nth + 1
            # The same kernels captured several times (a graph per layer, per batch
            # size): the n-th replay of the sequence is taken as the n-th fit of it.
            c, offset = at[nth % len(at)]
            found = [(c, offset + p) for p in range(len(keys))]
        if found is not None:
            for i, (c, p) in zip(group.tolist(), found):
                result.capture[i], result.position[i] = c, p
    return result


def _node_index(captures: list[Capture]) -> dict[int, list[tuple[int, int]]]:
    """Graph node id -> the (capture, position) of the launch calls that carry it."""
    index: dict[int, list[tuple[int, int]]] = {}
    for c, cap in enumerate(captures):
        for p, node_id in enumerate(cap.node_ids):
            if node_id is not None:
                index.setdefault(node_id, []).append((c, p))
    return index


def _by_node_id(
    index: dict[int, list[tuple[int, int]]], ids: list[int | None]
) -> list[tuple[int, int]] | None:
    """(capture, position) per kernel by graph node id; None unless every kernel's id is
    found in exactly one capture's launch calls."""
    if not ids or not index or any(i is None for i in ids):
        return None
    out = []
    for node_id in ids:
        hits = index.get(node_id, []) if node_id is not None else []
        if len(hits) != 1:
            return None
        out.append(hits[0])
    return out


def _agrees(known: Key, seen: Key) -> bool:
    return all(k is None or v is None or k == v for k, v in zip(known, seen))


def _agreement(known: list[Key], seen: tuple[Key, ...]) -> int:
    """Positions where what the capture knows of the launch agrees with the replay."""
    return sum(_agrees(a, b) for a, b in zip(known, seen))


def _window(known: list[Key], offset: int, seen: tuple[Key, ...]) -> bool:
    """Whether a capture's launches from `offset` on line up with the replay: no position
    disagrees and the capture knows the kernel name of at least half of them."""
    named = 0
    for a, b in zip(known[offset : offset + len(seen)], seen):
        if not _agrees(a, b):
            return False
        named += a[0] is not None
    return 2 * named >= len(seen)


def _by_sequence(captures: list[Capture], keys: tuple[Key, ...]) -> _Fit:
    """The (capture, offset) runs of launch calls the replay's kernel sequence fits best:
    the most positions agreeing, then the same length before longer (module docstring)."""
    n = len(keys)
    if not captures:
        return _Fit([], NOT_PROFILED)
    longest = max(len(cap.keys) for cap in captures)
    if longest < n:
        return _Fit([], f"no captured graph has {n} kernel launches (the longest has {longest})")
    scored: list[tuple[int, int, int, int]] = []  # (score, left over, capture, offset)
    same_length = 0
    for c, cap in enumerate(captures):
        extra = len(cap.keys) - n
        if extra == 0:
            score = _agreement(cap.keys, keys)
            same_length = max(same_length, score)
            if 2 * score >= n:
                scored.append((score, 0, c, 0))
        elif extra > 0:
            scored.extend((n, extra, c, o) for o in range(extra + 1) if _window(cap.keys, o, keys))
    if not scored:
        closest = f"; the closest of the same length agrees at {same_length}" if same_length else ""
        return _Fit(
            [],
            f"no captured graph's launches line up with its {n} kernels "
            f"by kernel name, grid and block{closest}",
        )
    rank = max((score, extra == 0) for score, extra, _, _ in scored)
    at = [(c, o) for score, extra, c, o in scored if (score, extra == 0) == rank]
    ops = {tuple(captures[c].op_names[o : o + n]) for c, o in at}
    if len(ops) > 1:
        return _Fit([], f"{len(at)} captured runs fit it equally well and name different ops")
    return _Fit(at, None)


def has_graph_launches(model: TraceModel) -> bool:
    """Whether any runtime/driver call launches a graph (no replay work otherwise)."""
    is_graph = name_flags(model, _is_graph_launch)
    return bool(
        is_graph[model.complete_names(Kind.RUNTIME)].any()
        or is_graph[model.complete_names(Kind.DRIVER)].any()
    )
