"""What the Operator and Kernel views take from graph replays (`graph_replay.py`).

Operators: a replayed kernel matched to its capture
(`graph_replay.py`) counts in the device time of the op that captured it, not of the op
around the graph launch.

- The launching op (the op tree's owner of the graph-launch call, often a
  `record_function` range such as vLLM's `execute_…` or a `Torch-Compiled Region`) keeps
  in its device self time only the replayed kernels left unmatched; its device total, and
  its ancestors', still hold the replay, which ran inside them.
- The capturing op's row (by name, or name and input shape as recorded at capture) gains
  the kernels' time in device self and device total; when this trace never calls the op
  (the capture was another trace), the row is there with 0 calls and no host time.

Kernels: a replayed kernel matched to its capture is launched by the capturing op
(`replayed_kernel_ops`); `replay_summary` is the view's one line about replays.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from .common import distinct, in_sorted
from .graph_replay import NOT_PROFILED, GraphReplay, graph_replay, has_graph_launches
from .optree import OpTree
from .rules import is_tensor_core_eligible_op
from .source_frames import CaptureFrames, SourceFrame
from .taxonomy import MATRIX_YES, name_classes


class GraphReplaySummary(TypedDict):
    kernels: int  # replayed kernels (of the device / stream asked)
    matched: int  # of those, matched to the launch that captured them
    annotated: int  # of the others, named by the op their CUDA-graph annotations name
    matched_pct: float  # share of the replayed kernel time that is matched
    captures: int  # graphs captured in the traces profiled (this one, capture_traces/)
    note: str  # "graph replay: N kernels, capture not profiled", or how many matched
    unmatched: list[UnmatchedGraph]  # per graph with unmatched kernels, most time first


class UnmatchedGraph(TypedDict):
    first_kernel: str  # the name of its first kernel
    kernels: int  # kernels per replay
    replays: int  # its graph launches (with kernels on the device / stream asked)
    device_us: float  # its unmatched kernels' time
    reason: str  # why no capture is taken as its (graph_replay.py)


class ReplayedOps(msgspec.Struct):
    moved: np.ndarray  # per tree node: matched replayed device time to take away
    moved_tc: np.ndarray  # of which on matrix cores
    # (op name, shape as JSON or "") -> [device time, matrix-core time, input shape]
    added: dict[tuple[str, str], list[Any]] = msgspec.field(default_factory=dict)
    # the same keys -> where the op captured its longest replayed kernel (recorded only)
    where: dict[tuple[str, str], SourceFrame] = msgspec.field(default_factory=dict)


def replayed_ops(
    model: TraceModel, tree: OpTree, by_shape: bool, shape_of: Any
) -> ReplayedOps | None:
    """None when no replayed kernel of the trace is matched to its capture. `shape_of`:
    (model, op rows) -> the input shape of each row (the Operator view's rule)."""
    if not has_graph_launches(model):
        return None
    replay = graph_replay(model)
    matched = np.flatnonzero(replay.named)  # a capture's, or an annotation's op
    if matched.size == 0:
        return None
    rows = replay.kernels[matched]
    dur = model.events["dur"][rows].astype(np.float64)
    tc = np.array([c.matrix_core == MATRIX_YES for c in name_classes(model)], dtype=bool)
    on_tc = tc[model.events["name"][rows]]
    out = ReplayedOps(np.zeros(len(tree)), np.zeros(len(tree)))
    if tree.gpu.size:
        pos = np.minimum(np.searchsorted(tree.gpu, rows), tree.gpu.size - 1)
        node = np.where(tree.gpu[pos] == rows, tree.gpu_node[pos], -1)
        own = node >= 0
        np.add.at(out.moved, node[own], dur[own])
        np.add.at(out.moved_tc, node[own & on_tc], dur[own & on_tc])
    shapes = _capture_shapes(replay, matched, shape_of) if by_shape else {}
    frames = CaptureFrames(replay)
    longest: dict[tuple[str, str], float] = {}
    for k, i in enumerate(matched.tolist()):
        name = replay.name_of(i)
        if name is None:
            continue
        shape = shapes.get(i)
        key = (name, json.dumps(shape, separators=(",", ":")) if by_shape else "")
        entry = out.added.setdefault(key, [0.0, 0.0, shape])
        entry[0] += float(dur[k])
        entry[1] += float(dur[k]) if on_tc[k] else 0.0
        found = frames.of(i)
        if found and dur[k] > longest.get(key, -1.0):
            longest[key] = float(dur[k])
            out.where[key] = found[0]
    return out


def _capture_shapes(replay: Any, matched: np.ndarray, shape_of: Any) -> dict[int, Any]:
    """Per matched replayed kernel (index into `replay.kernels`), its capturing op's
    input shape, read in the capture's model."""
    by_model: dict[int, tuple[TraceModel, list[int], list[int]]] = {}
    for i in matched.tolist():
        found = replay.op_of(i)
        if found is None:
            continue
        m, row = found
        entry = by_model.setdefault(id(m), (m, [], []))
        entry[1].append(i)
        entry[2].append(row)
    out: dict[int, Any] = {}
    for m, kernels, op_rows in by_model.values():
        for i, shape in zip(kernels, shape_of(m, np.array(op_rows, dtype=np.int64))):
            out[i] = shape
    return out


def replay_summary(
    model: TraceModel, replay: GraphReplay | None, rows: np.ndarray
) -> GraphReplaySummary | None:
    if replay is None or replay.kernels.size == 0:
        return None
    asked = in_sorted(replay.kernels, distinct(rows))  # np.isin: imports numpy.ma
    dur = model.events["dur"][replay.kernels[asked]].astype(np.float64)
    matched = replay.matched[asked]
    n, n_matched = int(asked.sum()), int(matched.sum())
    n_annotated = int(replay.annotated[asked].sum())
    if replay.captures_found == 0:
        note = f"graph replay: {n} kernels, {NOT_PROFILED}"
    else:
        note = f"graph replay: {n} kernels, {n_matched} matched to their capture"
    if n_annotated:
        note += f", {n_annotated} named from their annotations"
    return {
        "kernels": n,
        "matched": n_matched,
        "annotated": n_annotated,
        "matched_pct": round(100.0 * float(dur[matched].sum()) / float(dur.sum()), 2)
        if dur.sum() > 0
        else (100.0 if n and n_matched == n else 0.0),
        "captures": replay.captures_found,
        "note": note,
        "unmatched": _unmatched(model, replay, asked & ~replay.matched),
    }


def _unmatched(model: TraceModel, replay: GraphReplay, left: np.ndarray) -> list[UnmatchedGraph]:
    """Per replayed graph with kernels of `left` (a mask over `replay.kernels`)."""
    idx = np.flatnonzero(left)
    graphs = replay.graph[idx]
    dur = model.events["dur"][replay.kernels[idx]].astype(np.float64)
    out: list[UnmatchedGraph] = []
    for g in distinct(graphs).tolist():
        mine = graphs == g
        graph = replay.graphs[g]
        out.append(
            {
                "first_kernel": graph.first_kernel,
                "kernels": graph.kernels,
                "replays": int(distinct(replay.launcher[idx[mine]]).size),
                "device_us": round(float(dur[mine].sum()), 3),
                "reason": graph.reason or "its graph node ids name no single capture",
            }
        )
    out.sort(key=lambda u: (-u["device_us"], u["first_kernel"]))
    return out


def replayed_kernel_ops(
    model: TraceModel,
    rows: np.ndarray,
    replay: GraphReplay | None,
    op_code: np.ndarray,
    op_eligible: np.ndarray,
) -> tuple[np.ndarray, list[str]]:
    """Whether each kernel ran in a graph replay; for the replayed ones matched to their
    capture, `op_code` and `op_eligible` (written in place) become the capturing op's:
    a code past the model's names indexes the returned capture-time op names."""
    replayed = np.zeros(rows.size, np.int64)
    if replay is None or replay.kernels.size == 0 or rows.size == 0:
        return replayed, []
    pos = np.minimum(np.searchsorted(replay.kernels, rows), replay.kernels.size - 1)
    hit = replay.kernels[pos] == rows
    replayed[hit] = 1
    extra: dict[str, int] = {}
    base = len(model.names)
    for i in np.flatnonzero(hit & replay.named[pos]).tolist():
        name = replay.name_of(int(pos[i]))
        if name is None:
            continue
        code = model.name_code(name)
        op_code[i] = code if code >= 0 else base + extra.setdefault(name, len(extra))
        op_eligible[i] = is_tensor_core_eligible_op(name)
    return replayed, list(extra)


def replayed_eligible(model: TraceModel, kernels: np.ndarray) -> np.ndarray:
    """Per kernel row (sorted), whether it ran in a graph replay matched to a capture by
    a tensor-core eligible op (the Overview's tensor-core advice: the op around the graph
    launch says nothing of what the kernels do)."""
    out = np.zeros(kernels.size, dtype=bool)
    if kernels.size == 0 or not has_graph_launches(model):
        return out
    replay = graph_replay(model)
    if replay.kernels.size == 0:
        return out
    pos = np.minimum(np.searchsorted(replay.kernels, kernels), replay.kernels.size - 1)
    hit = np.flatnonzero((replay.kernels[pos] == kernels) & replay.named[pos])
    for i in hit.tolist():
        name = replay.name_of(int(pos[i]))
        out[i] = name is not None and is_tensor_core_eligible_op(name)
    return out
