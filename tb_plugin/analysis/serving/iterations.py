"""Where a serving trace's iterations are: from what the engine records, in order.

1. Engine annotations (`markers.py`): every host range named like an iteration. Markers
   nested in another of the same thread (SGLang's `step[...]` inside the `execute_...`
   of the same iteration) are one iteration: the outermost range is its span, the inner
   ones add what the outer does not say.
2. Else the engine's Python frames (`with_stack=True`): vLLM's `execute_model`, SGLang's
   `forward_batch_generation` (its `forward_extend` / `forward_decode` inside say the
   phase), outermost per thread.
3. Else, on a trace whose ops, kernels or frames name a serving engine, a graph launch per
   decode step: each graph launch whose replay holds the attention kernels (a whole
   forward: piecewise graphs leave attention out, and engines replay whole forwards only
   for decode batches).

Otherwise there are no iterations, and `reason` says why (a training loop, a graph
capture trace, a diffusion request, markers switched off).
"""

from __future__ import annotations

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.common import complete_rows, ends, name_flags, thread_keys
from ..core.graph_replay import replayed_kernels
from ..core.kernel_classes import kernel_classes
from ..core.steps import host_step_rows
from ..core.taxonomy import WORKS
from .hints import attention_phase_codes, engine_of
from .markers import FORWARD_PHASES, Marker, parse, sglang_forward


class Found(msgspec.Struct):
    """The iterations of a trace, sorted by start: their host span and what is known."""

    source: str | None  # annotations, python_frames, graph_launches; None: none found
    engine: str | None
    rows: np.ndarray  # the outer host row of each iteration
    starts: np.ndarray  # µs, the trace's time
    ends: np.ndarray
    markers: list[Marker]
    names: list[str]  # the outer row's name
    captures: list[Marker] = msgspec.field(default_factory=list)
    diffusion: list[tuple[str, Marker]] = msgspec.field(default_factory=list)
    reason: str | None = None

    def __len__(self) -> int:
        return int(self.rows.size)


def _is_iteration(name: str) -> bool:
    m = parse(name)
    return m is not None and m.kind == "iteration"


def _is_frame(name: str) -> bool:
    m = parse(name)
    return m is not None and m.kind == "frame"


def _is_capture_or_diffusion(name: str) -> bool:
    m = parse(name)
    return m is not None and m.kind in ("capture", "diffusion")


def _is_sglang_forward(name: str) -> bool:
    return sglang_forward(name) is not None


def find_iterations(model: TraceModel) -> Found:
    engine = engine_of(model)
    host = complete_rows(model, Kind.USER_ANNOTATION, Kind.CPU_OP)
    found = _from_rows(model, _named(model, host, _is_iteration), "annotations")
    if found is None:
        frames = _named(model, complete_rows(model, Kind.PYTHON), _is_frame)
        found = _from_rows(model, frames, "python_frames")
        if found is not None:
            _sglang_forward_phases(model, found)
    if found is None and engine is not None:
        found = _from_graph_launches(model)
    if found is None:
        found = Found(None, None, *_empty())
    if found.engine is None:
        found.engine = engine or (found.markers[0].engine if found.markers else None)
    _others(model, host, found)
    if not len(found):
        found.reason = _reason(model, found, engine)
    return found


def _empty() -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Marker], list[str]]:
    return np.empty(0, np.int64), np.empty(0), np.empty(0), [], []


def _named(model: TraceModel, rows: np.ndarray, predicate: object) -> np.ndarray:
    if rows.size == 0:
        return rows
    flags = name_flags(model, predicate)  # type: ignore[arg-type]
    return rows[flags[model.events["name"][rows]]]


def _from_rows(model: TraceModel, rows: np.ndarray, source: str) -> Found | None:
    """The outermost of `rows` per thread, each with the markers of the rows inside it."""
    if rows.size == 0:
        return None
    ev = model.events
    thread = thread_keys(model, rows)
    start, end = ev["ts"][rows].astype(np.float64), ends(model, rows).astype(np.float64)
    order = np.lexsort((-(end - start), start, thread))
    rows, thread, start, end = rows[order], thread[order], start[order], end[order]
    outer = _outermost(thread, start, end)
    owner = np.cumsum(outer) - 1  # the outer range each row lies in (rows sorted so)
    names = model.names_of(rows)
    markers: list[Marker] = []
    for i, name in enumerate(names):
        marker = parse(name)
        assert marker is not None
        if outer[i]:
            markers.append(marker)
        else:
            markers[owner[i]] = markers[owner[i]].merged(marker)
    keep = np.flatnonzero(outer)
    by_start = np.argsort(start[keep], kind="stable")
    keep = keep[by_start]
    return Found(
        source,
        None,
        rows[keep],
        start[keep],
        end[keep],
        [markers[int(i)] for i in by_start],
        [names[int(i)] for i in keep],
    )


def _outermost(thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Rows sorted by (thread, start, longest first): True where a row is not inside an
    earlier row of its thread (one that ends no earlier)."""
    outer = np.ones(thread.size, dtype=bool)
    bounds = np.flatnonzero(np.concatenate([[True], thread[1:] != thread[:-1], [True]]))
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):  # per thread: a few
        reach = np.maximum.accumulate(end[lo:hi])
        outer[lo + 1 : hi] = end[lo + 1 : hi] > reach[:-1]
    return outer


def _sglang_forward_phases(model: TraceModel, found: Found) -> None:
    """SGLang iterations found from frames take the phase of the model runner's
    `forward_*` frame inside them (all of them agreeing)."""
    rows = _named(model, complete_rows(model, Kind.PYTHON), _is_sglang_forward)
    if rows.size == 0:
        return
    t = model.events["ts"][rows]
    at = np.searchsorted(found.starts, t, side="right") - 1
    inside = (at >= 0) & (t <= found.ends[np.maximum(at, 0)])
    frames: dict[int, set[str]] = {}
    for i, name in zip(at[inside].tolist(), model.names_of(rows[inside])):
        frames.setdefault(i, set()).add(sglang_forward(name) or "")
    for i, seen in frames.items():
        phases = {FORWARD_PHASES[f] for f in seen}
        phase = phases.pop() if len(phases) == 1 else "mixed"
        found.markers[i] = Marker(
            "frame",
            "sglang",
            "sglang_frame",
            phase,
            f"SGLang model runner frame: {', '.join(sorted(seen))}",
        )


def _from_graph_launches(model: TraceModel) -> Found | None:
    """One iteration per graph launch whose replay holds attention kernels."""
    kernels, launchers = replayed_kernels(model)
    if kernels.size == 0:
        return None
    classes = kernel_classes(model)
    at = np.searchsorted(classes.rows, kernels)
    attention = classes.work[at] == WORKS.index("attention")
    attention |= attention_phase_codes(model)[model.events["name"][kernels]] > 0
    whole = np.unique(launchers[attention])
    if whole.size == 0:
        return None
    ev = model.events
    whole = whole[np.argsort(ev["ts"][whole], kind="stable")]
    marker = Marker("iteration", "", "graph_launch")
    names = model.names_of(whole)
    return Found(
        "graph_launches",
        None,
        whole,
        ev["ts"][whole].astype(np.float64),
        ends(model, whole).astype(np.float64),
        [marker] * whole.size,
        names,
    )


def _others(model: TraceModel, host: np.ndarray, found: Found) -> None:
    """Markers that are not iterations: graph captures, diffusion requests."""
    rows = _named(model, host, _is_capture_or_diffusion)
    for name in model.names_of(rows):
        marker = parse(name)
        assert marker is not None
        if marker.kind == "capture":
            found.captures.append(marker)
        else:
            found.diffusion.append((name, marker))


def _reason(model: TraceModel, found: Found, engine: str | None) -> str:
    if found.diffusion:
        name, m = found.diffusion[0]
        return (
            f"diffusion serving ({name}: a request of {m.batch} image(s) of {m.mode}): its "
            "work is denoising steps, not the prefill and decode iterations of LLM serving"
        )
    if found.captures:
        said = ", ".join(sorted({f"batch {c.batch} {c.mode}" for c in found.captures}))
        return (
            f"a graph capture trace ({said}): it records graphs being captured, no serving "
            "iteration ran; their replays are in the serving trace beside it"
        )
    if engine is not None:
        return (
            f"the trace's names are {engine}'s, but it records no iteration: no iteration "
            "annotation (vLLM: execute_..., SGLang: step[...]), no execute_model / "
            "forward_batch_generation Python frame (record with with_stack=True), and no "
            "graph launch replaying a whole forward"
        )
    steps = int(host_step_rows(model).size)
    loop = f"; it has {steps} ProfilerStep steps: a training or plain inference loop"
    loop = loop if steps else ""
    return (
        "no serving engine markers: no vLLM or SGLang iteration annotation, engine Python "
        f"frame or engine op/kernel name{loop}"
    )
