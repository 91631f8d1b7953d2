"""Where a CUDA/HIP-graph replayed kernel was captured: the Python frames around the op
that launched it while the graph was captured (its profiled capture, matched as
`core/graph_replay.py` matches it), model code first, library frames left out: the
Kernels view's `captured_source`. A replay launches no op of its own, so the code that
made the kernel is in the capture only (vLLM and SGLang profile it into
`capture_traces/`, with_stack=True). Per kernel group, the frames of its longest replayed
call that was matched to a capture whose op has frames; none otherwise (not replayed, no
capture profiled or matched, or a capture recorded without Python frames)."""

from __future__ import annotations

import numpy as np

from ...model.trace_model import TraceModel
from ..core.graph_replay import GraphReplay
from ..core.source_frames import CaptureFrames, SourceFrame


def captured_sources(
    model: TraceModel,
    kernel_rows: np.ndarray,
    group: np.ndarray,
    n: int,
    replay: GraphReplay | None,
) -> list[list[SourceFrame] | None]:
    """Per kernel group (`group`: the group of each kernel row), the capture-time frames
    of its longest replayed call that has them; None for a group of none."""
    out: list[list[SourceFrame] | None] = [None] * n
    if replay is None or not replay.captures or kernel_rows.size == 0:
        return out
    index = {int(r): i for i, r in enumerate(replay.kernels.tolist()) if replay.capture[i] >= 0}
    if not index:
        return out
    frames = CaptureFrames(replay)
    dur = model.events["dur"][kernel_rows]
    for k in np.argsort(-dur, kind="stable").tolist():
        g, i = int(group[k]), index.get(int(kernel_rows[k]))
        if out[g] is None and i is not None:
            out[g] = frames.of(i) or None
    return out
