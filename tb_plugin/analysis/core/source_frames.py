"""Model-code frames: the `with_stack` Python frames around an op that are the model's or
generated code (an Inductor wrapper), library frames (torch, triton, the standard
library) left out, innermost first; and those of the op that captured a graph-replayed
kernel (in its profiled capture, `graph_replay.py`). The Kernels view's `source` and
`captured_source`, the Operators' and the serving view's `captured_at` and the GPU flame
graph's captured frames are made of them."""

from __future__ import annotations

import re
from typing import TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from .graph_replay import GraphReplay, graph_replay
from .optree import op_tree
from .python_stacks import is_library_file, parse_frame, python_stacks

# Inductor's generated wrappers (`c<hash>.py`) and FX's generated code.
GENERATED = re.compile(r"(?:^|/)c[a-z0-9]{40,}\.py$|(?:^|/)fx_generated_")


class SourceFrame(TypedDict):
    filename: str
    line: int | None
    name: str
    generated: bool  # the Inductor wrapper (generated code), not the model's own


def model_frames(model: TraceModel, nodes: np.ndarray) -> list[list[SourceFrame]]:
    """Per op-tree node, its enclosing Python frames that are model or generated code,
    innermost first (library frames left out)."""
    stacks = python_stacks(model, op_tree(model))
    if stacks is None:
        return [[] for _ in nodes.tolist()]
    out: list[list[SourceFrame]] = []
    for inner in stacks.node_frame[nodes].tolist():
        frames: list[SourceFrame] = []
        cur = int(inner)
        while cur >= 0:
            f = parse_frame(stacks.frame_text[stacks.frame[cur]])
            cur = int(stacks.parent[cur])
            file = f["file"]
            if file is None or is_library_file(file):
                continue
            generated = bool(GENERATED.search(file))
            frames.append(
                {"filename": file, "line": f["line"], "name": f["function"], "generated": generated}
            )
        out.append(frames)
    return out


class CaptureFrames:
    """The model-code frames of the op that captured each replayed kernel of a trace (by
    its index in `replay.kernels`), read once per capture op."""

    def __init__(self, replay: GraphReplay) -> None:
        self.replay = replay
        self._of: dict[tuple[int, int], list[SourceFrame]] = {}
        # Per capture model: its op tree's event rows sorted, and their nodes.
        self._nodes: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def of(self, i: int) -> list[SourceFrame]:
        """Replayed kernel `i`'s capture frames; [] when not matched or none recorded."""
        found = self.replay.op_of(i)
        if found is None:
            return []
        capture, row = found
        key = (id(capture), row)
        if key not in self._of:
            node = self._node(capture, row)
            self._of[key] = model_frames(capture, np.array([node]))[0] if node >= 0 else []
        return self._of[key]

    def _node(self, capture: TraceModel, row: int) -> int:
        """The op-tree node of event `row` of a capture trace (-1: none)."""
        if id(capture) not in self._nodes:
            rows = op_tree(capture).rows
            order = np.argsort(rows, kind="stable")
            self._nodes[id(capture)] = (rows[order], order)
        rows, order = self._nodes[id(capture)]
        at = int(np.searchsorted(rows, row))
        return int(order[at]) if at < rows.size and rows[at] == row else -1


def grouped_capture_frames(
    model: TraceModel,
    kernel_rows: np.ndarray,
    group: np.ndarray,
    n: int,
    replay: GraphReplay | None,
    dur: np.ndarray | None = None,
) -> list[list[SourceFrame] | None]:
    """Per kernel group (`group`: the group of each kernel row), the capture-time frames
    of its longest replayed call (by `dur`, default the events' own) that has them
    (matched to a capture whose op recorded frames); None for a group of none."""
    out: list[list[SourceFrame] | None] = [None] * n
    if replay is None or not replay.captures or kernel_rows.size == 0:
        return out
    index = {int(r): i for i, r in enumerate(replay.kernels.tolist()) if replay.capture[i] >= 0}
    if not index:
        return out
    frames = CaptureFrames(replay)
    if dur is None:
        dur = model.events["dur"][kernel_rows]
    for k in np.argsort(-dur, kind="stable").tolist():
        g, i = int(group[k]), index.get(int(kernel_rows[k]))
        if out[g] is None and i is not None:
            out[g] = frames.of(i) or None
    return out


def captured_where(model: TraceModel, rows: np.ndarray) -> dict[int, SourceFrame]:
    """Per kernel row of `rows` (sorted) replayed from a graph and matched to its profiled
    capture, by its index in `rows`: the first model-code frame around the op that
    launched it during the capture (absent: none recorded)."""
    replay = graph_replay(model)
    if not replay.captures or replay.kernels.size == 0 or rows.size == 0:
        return {}
    frames = CaptureFrames(replay)
    at = np.minimum(np.searchsorted(rows, replay.kernels), rows.size - 1)
    out: dict[int, SourceFrame] = {}
    for i, k in enumerate(at.tolist()):
        if replay.capture[i] >= 0 and rows[k] == replay.kernels[i]:
            found = frames.of(i)
            if found:
                out[k] = found[0]
    return out
